"""gunicorn's configuration hooks (the Procfile's `web` line loads it: `-c python:clara.gunicorn`).

With PROMETHEUS_MULTIPROC_DIR set, each gunicorn worker writes its metric values as files there
and /metrics adds them up (clara/metrics.py). This module empties the folder when the master
starts (values of a previous run would otherwise be added in), before `--preload` imports the
application, and drops a dead worker's live gauges when it exits. Every other option stays on
the Procfile's command line.
"""

import os
from pathlib import Path

_metrics_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
if _metrics_dir:
    _folder = Path(_metrics_dir)
    _folder.mkdir(parents=True, exist_ok=True)
    for _stale in _folder.glob("*.db"):
        _stale.unlink(missing_ok=True)


def child_exit(server, worker) -> None:
    if _metrics_dir:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid, path=_metrics_dir)
