"""What runs inside dashboard.pdf's renderer processes: WeasyPrint and nothing of Django.

Its own module, so that a `spawn`ed renderer imports only this (no settings, no models, no
database connection) before it takes its first HTML.
"""

import os
import threading
import time

# The renderers run at the lowest CPU priority (nice(2): 0..19): they get what the web processes
# and the workers leave, so a report waits rather than the bot.
NICENESS = 19


def start() -> None:
    """Each renderer's start: the lowest priority, and an end of its own if the web process that
    started it dies without stopping it (a gunicorn worker killed at its timeout), so no renderer
    outlives its web process."""
    os.nice(NICENESS)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(2)
        os._exit(0)

    threading.Thread(target=watch, name="watch-web-process", daemon=True).start()


def html_to_pdf(html: str) -> bytes:
    from weasyprint import HTML  # heavy import: once per renderer process

    return HTML(string=html, base_url=None).write_pdf()


def niceness() -> int:
    return os.nice(0)
