"""The Celery app: broker, results and limits come from the CELERY_ settings in clara/settings.py.

Run a worker with `celery -A clara worker -l info` and the scheduler with `celery -A clara beat`
(`make run` starts both beside the web server).
"""

import os

from celery import Celery, signals
from celery.schedules import crontab
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")

app = Celery("clara")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Every job's time and failures, for /metrics (clara/metrics.py), in whichever process runs it.
from clara.metrics import connect_celery  # noqa: E402 - after the settings module is chosen

connect_celery()


def _close_old_connections(task=None, **kwargs) -> None:
    """Around each job, what Django does around each request: close a connection that is past
    CONN_MAX_AGE or broken, keep the others. (Celery's own Django fixup would otherwise close
    every connection before and after every job: a new PostgreSQL backend per job, a tenth of
    the worker's CPU under load, bench/load_test.py. CELERY_DB_REUSE_MAX turns that off.)
    Not for a job run eagerly inside a caller's transaction, whose connection is the caller's."""
    if task is not None and not getattr(task.request, "is_eager", False):
        close_old_connections()


signals.task_prerun.connect(_close_old_connections, weak=False)
signals.task_postrun.connect(_close_old_connections, weak=False)

# The periodic tasks. Each entry runs one task on its schedule; a job that concerns every person
# should be a task that fans out into one task per person, so that one slow person doesn't hold
# up the rest. Add entries here, each with a comment saying when and why.
app.conf.beat_schedule = {
    # * * * * *  Expire sessions idle for CLARA_SESSION_IDLE_MINUTES, so they get closed
    # (dominant emotion, and later the summary) even if the bot never says goodbye.
    "expire-idle-sessions": {
        "task": "memory.tasks.expire_idle_sessions",
        "schedule": crontab(minute="*"),
    },
    # * * * * *  Store the exchanges the database refused (kept in data/recovery.jsonl), soon
    # after it is back. Cheap when the log is empty: one file check.
    "replay-recovery-log": {
        "task": "memory.tasks.replay_recovery_log",
        "schedule": crontab(minute="*"),
    },
    # 30 2 * * *  Each active person's trends for the day, then their trend alerts; fans out
    # into one task per batch of people (memory.insights.trends_batch.BATCH_SIZE), as a batch costs far
    # less than its people one by one. Early morning UTC, after most people's evenings.
    "compute-all-trends": {
        "task": "memory.tasks.compute_all_trends",
        "schedule": crontab(minute=30, hour=2),
    },
    # * * * * *  SQLite only (a no-op on PostgreSQL): PRAGMA wal_checkpoint(PASSIVE), so that
    # under steady writes, with some reader always open, the WAL is copied back and reused
    # instead of growing without bound. It never waits for anyone, so every minute is safe.
    "checkpoint-sqlite-wal": {
        "task": "memory.tasks.checkpoint_sqlite_wal",
        "schedule": crontab(minute="*"),
    },
    # */5 * * * *  Proactive check-ins: each person whose check-in time has passed today (their
    # time zone) gets one decision per slot, sent or suppressed; fans out one task per person.
    # Every 5 minutes, so a check-in goes out at most about 5 minutes after its time.
    "schedule-check-ins": {
        "task": "memory.tasks.schedule_check_ins",
        "schedule": crontab(minute="*/5"),
    },
    # 7 * * * *  Memories past their lifetime (a feeling after 6 h, an event after a week) are
    # deleted: invisible to reads already, and not to be kept longer than promised.
    "expire-memories": {
        "task": "memory.tasks.expire_memories",
        "schedule": crontab(minute=7),
    },
    # 50 3 * * *  The curator: archives stale low-importance facts and folds near-duplicates,
    # after the nightly trends, when nobody is talking.
    "curate-memories": {
        "task": "memory.tasks.curate_memories",
        "schedule": crontab(minute=50, hour=3),
    },
    # 20 4 * * *  Retention, one task per organisation (memory/retention.py): conversations'
    # text past the organisation's retention period is removed (summaries and analytics stay),
    # people quiet for its set time are marked inactive. Idempotent; after the curator.
    "apply-retention": {
        "task": "memory.tasks.apply_retention_all",
        "schedule": crontab(minute=20, hour=4),
    },
    # * * * * *  Alerts: the ladder's steps that are due (an urgent alert nobody claimed climbs a
    # rung; a claim not resolved in time reminds its claimer, then climbs again), and e-mails
    # held for a caregiver's hours once they begin.
    "sweep-alerts": {
        "task": "dashboard.tasks.sweep_alerts",
        "schedule": crontab(minute="*"),
    },
    # * * * * *  Webhook deliveries whose retry is overdue (a job lost with a worker): queued
    # again. Each delivery's own job normally queues its next try at its backoff.
    "retry-due-webhooks": {
        "task": "memory.tasks.retry_due_webhooks",
        "schedule": crontab(minute="*"),
    },
    # 0 * * * *  Weekly digests: hourly, so each opted-in family member gets theirs in the hour
    # starting 18:00 of their own Sunday (their time zone), once per week.
    "send-weekly-digests": {
        "task": "dashboard.tasks.send_weekly_digests",
        "schedule": crontab(minute=0),
    },
}
