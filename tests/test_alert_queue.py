"""Telling people of an urgent moment has a queue of its own (clara/settings.py
CLARA_ALERTS_QUEUE), which every worker reads beside the default one: an alert's delivery never
waits behind the turns' jobs."""

from django.conf import settings

from clara.celery import app

ALERT_JOBS = (
    "dashboard.tasks.deliver_alert",
    "dashboard.tasks.sweep_alerts",
    "memory.tasks.deliver_webhook",
    "memory.tasks.retry_due_webhooks",
)


# As a worker does at start: every app's tasks module (and what it imports) registered.
app.loader.import_default_modules()


def _queue_of(task_name: str) -> str:
    route = app.amqp.router.route({}, task_name)
    return route["queue"].name


def test_alert_deliveries_and_escalation_go_to_the_alerts_queue():
    for name in ALERT_JOBS:
        assert name in app.tasks, name  # a renamed task would silently lose its route
        assert _queue_of(name) == settings.CLARA_ALERTS_QUEUE, name


def test_the_turns_jobs_stay_on_the_default_queue():
    for name in ("memory.tasks.remember_message", "memory.tasks.update_rolling_summary"):
        assert name in app.tasks, name
        assert _queue_of(name) == settings.CELERY_TASK_DEFAULT_QUEUE, name


def test_a_worker_reads_both_queues_without_being_told():
    # `celery -A clara worker` (the Procfiles name no -Q) consumes every queue in task_queues.
    consumed = set(app.amqp.queues)
    assert {settings.CELERY_TASK_DEFAULT_QUEUE, settings.CLARA_ALERTS_QUEUE} <= consumed
