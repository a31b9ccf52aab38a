"""gunicorn's configuration hooks (the Procfile's `web` line loads it: `-c python:clara.gunicorn`).

With PROMETHEUS_MULTIPROC_DIR set, each gunicorn worker writes its metric values as files there
and /metrics adds them up (clara/metrics.py). This module empties the folder when the master
starts (values of a previous run would otherwise be added in), before `--preload` imports the
application, and drops a dead worker's live gauges when it exits. Each worker starts its
recovery-log replay thread (memory/conversations/recovery.py) once it is running. Every other
option stays on the Procfile's command line.
"""

import os

from clara import metrics_files

_metrics_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
if _metrics_dir:
    metrics_files.wipe(_metrics_dir)


def child_exit(server, worker) -> None:
    if _metrics_dir:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid, path=_metrics_dir)


def post_worker_init(worker) -> None:
    # Threads do not survive the fork from a --preload master: each worker starts its own.
    from memory.conversations import recovery, services

    recovery.start_replayer(services.recovery_replay)
