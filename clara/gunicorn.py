"""gunicorn's configuration hooks (the Procfile's `web` line loads it: `-c python:clara.gunicorn`).

With PROMETHEUS_MULTIPROC_DIR set, each gunicorn worker writes its metric values as files there
and /metrics adds them up (clara/metrics.py). This module empties the folder when the master
starts (values of a previous run would otherwise be added in), before `--preload` imports the
application, and drops a dead worker's live gauges when it exits. Each worker starts its
recovery-log replay thread (memory/conversations/recovery.py) and loads the models a turn reads
with before it takes its first request. Every other option stays on the Procfile's command line.
"""

import gc
import logging
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
    warm_models()
    freeze_heap()


def freeze_heap() -> None:
    """Leave what the worker loaded before its first request (the application, its models, the
    story library) out of the garbage collector's full passes: those walked every object of the
    heap, and a pass under load held all of the worker's threads (the GIL) for tens of ms."""
    gc.collect()
    gc.freeze()


# A sentence that is nobody's: analysed once so the models are in memory.
_WARM_SENTENCE = "Is it time for a cup of tea in the garden?"


def warm_models() -> None:
    """Load the sentence model of the repeat check and the urgent-moment reader now.

    They load on first use: about 1.5 s of CPU (3-4 s on a busy machine), during which every
    request of this worker that met a new sentence waited on the loading lock. A worker is
    replaced every --max-requests (the Procfile: about every half hour per worker at 1,000
    people), and at load those waits were the /context p99 (docs/benchmarks.md, "Capacity of
    one machine").
    gunicorn runs this hook before the worker accepts connections, so the others serve meanwhile.
    """
    from memory.conversations import escalation, repeats

    try:
        repeats.meaning_of(_WARM_SENTENCE)
        escalation.detect(_WARM_SENTENCE)
    except Exception:  # noqa: BLE001 - a model that cannot load now loads (or fails) on first use
        logging.getLogger(__name__).warning("could not load the turn's models ahead of requests")
