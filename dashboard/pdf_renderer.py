"""What runs inside dashboard.pdf's renderer processes: WeasyPrint and nothing of Django.

Its own module, so that a `spawn`ed renderer imports only this (no settings, no models, no
database connection) before it takes its first HTML.
"""

import os

# The renderers run at the lowest CPU priority (nice(2): 0..19): they get what the web processes
# and the workers leave, so a report waits rather than the bot.
NICENESS = 19


def lower_priority() -> None:
    os.nice(NICENESS)


def html_to_pdf(html: str) -> bytes:
    from weasyprint import HTML  # heavy import: once per renderer process

    return HTML(string=html, base_url=None).write_pdf()


def niceness() -> int:
    return os.nice(0)
