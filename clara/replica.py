"""Read replicas: with DATABASE_REPLICA_URL set, the caregivers' page reads go to the replica.

`ReplicaReadsMiddleware` marks a dashboard GET or HEAD (not the bot API, not the admin, not the
health checks) as a replica-reading request; `ReplicaRouter` then sends its ORM reads to the
`replica` alias. Everything else reads the primary: the bot's per-turn path (which must see the
exchange it just wrote), every POST, every job unless it asks (`replica_reads()`), and reads
inside a transaction. Logins, sessions and lockouts are always read from the primary, so a
caregiver who just signed in is never signed out by replication lag. Every write goes to the
primary, whatever alias the instance was read from.

What a replica trades: a page may show data a moment old (the replica's lag). A caregiver's own
change is a POST answered by the primary; the page they are redirected to may lag behind it by
that moment.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.http import HttpRequest, HttpResponse

REPLICA_ALIAS = "replica"
# Authentication, sessions, lockouts, second factors: read where they were just written.
PRIMARY_ONLY_APPS = frozenset(
    {"auth", "sessions", "axes", "contenttypes", "admin", "django_otp", "otp_totp", "otp_static"}
)
# The same, for models of other apps: the second factor's devices (dashboard/second_factor).
PRIMARY_ONLY_MODELS = frozenset(
    {"dashboard.authenticatordevice", "dashboard.recoverydevice", "dashboard.recoverycode"}
)
# Not the dashboard: the bot API, the admin, the health checks.
PRIMARY_PATHS = ("/api/", "/admin/", "/healthz", "/readyz")

_replica_reads: ContextVar[bool] = ContextVar("clara_replica_reads", default=False)


@contextmanager
def replica_reads() -> Iterator[None]:
    """ORM reads in this block go to the replica (when one is configured): for dashboard pages
    and analytics that can show data a moment old."""
    token = _replica_reads.set(True)
    try:
        yield
    finally:
        _replica_reads.reset(token)


def reading_replica() -> bool:
    return _replica_reads.get() and REPLICA_ALIAS in settings.DATABASES


class ReplicaRouter:
    def db_for_read(self, model, **hints):
        if (
            reading_replica()
            and model._meta.app_label not in PRIMARY_ONLY_APPS
            and model._meta.label_lower not in PRIMARY_ONLY_MODELS
            and not connections[DEFAULT_DB_ALIAS].in_atomic_block
        ):
            return REPLICA_ALIAS
        return DEFAULT_DB_ALIAS

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        # The replica is the same data: rows read from either may be related.
        return True

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        # The replica follows the primary's schema by replication, never by migrate.
        return db != REPLICA_ALIAS


class ReplicaReadsMiddleware:
    """Dashboard GETs and HEADs read from the replica (see the module docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in ("GET", "HEAD") and not request.path.startswith(PRIMARY_PATHS):
            with replica_reads():
                return self.get_response(request)
        return self.get_response(request)
