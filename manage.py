#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A missing or bad setting is one line naming it, not a page of traceback.
        sys.exit(
            f"Not configured: {exc} (a local demo: `make run` writes .env with DEBUG=1; "
            "production: see .env.example and docs/deploy.md)"
        )


if __name__ == "__main__":
    main()
