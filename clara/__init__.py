# The Celery app is loaded with Django, so that `shared_task` binds to it and
# `task.delay_on_commit()` works from services.
from clara.celery import app as celery_app
from clara.tracing import install_log_record_trace_id

# Every log record carries the current trace id (the log formats print it; "-" with tracing off).
install_log_record_trace_id()

__all__ = ("celery_app",)
