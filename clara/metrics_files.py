"""The metric files of a multi-process instance (PROMETHEUS_MULTIPROC_DIR), emptied when it
starts. No imports beyond the standard library: gunicorn's master calls it before the
application (and prometheus_client, which writes there as soon as a value exists) is loaded."""

from pathlib import Path


def wipe(path: str) -> None:
    """Empty the values a previous run left (at a master's start, before any child writes)."""
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.db"):
        stale.unlink(missing_ok=True)
