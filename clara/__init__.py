# The Celery app is loaded with Django, so that `shared_task` binds to it and
# `task.delay_on_commit()` works from services.
from clara.celery import app as celery_app

__all__ = ("celery_app",)
