"""Health endpoints for load balancers and uptime monitors: /healthz and /readyz.

`/healthz` (liveness) says the process answers; it touches nothing else, so a database outage
never makes an orchestrator restart healthy web processes. `/readyz` (readiness) checks what a
request needs: the database, the Celery broker, the recovery log (exchanges waiting to be
replayed), and on SQLite the integrity of the file. Both answer JSON with no personal data:
only states, counts and exception class names (never messages, which may hold connection
strings). What /readyz found in detail (the database engine, the recovery backlog, which check
failed) is for operators: a client on CLARA_INTERNAL_NETWORKS (the load balancer, monitoring) or
a logged-in superuser who passed the second factor. Anyone else gets the bare status, and the
same status code.
"""

import logging
import os
import threading
import time
from importlib import import_module
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse

from clara.client_ip import is_internal
from memory.conversations import recovery

logger = logging.getLogger(__name__)

_redis_client = None
_redis_lock = threading.Lock()

# The last SQLite quick_check per process: (monotonic time, ok, result). quick_check reads the
# whole file, so it runs at most every CLARA_READYZ_SQLITE_CHECK_SECONDS.
_integrity: tuple[float, bool, str] | None = None
_integrity_lock = threading.Lock()


def _json(body: dict[str, Any], status: int) -> JsonResponse:
    response = JsonResponse(body, status=status)
    # Answered before the other middleware (see HealthCheckMiddleware), so set these here.
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _is_sqlite() -> bool:
    return connection.vendor == "sqlite"


def check_database() -> dict[str, Any]:
    """One round trip to the database."""
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        # Drop the broken connection so the next request starts afresh.
        connection.close_if_unusable_or_obsolete()
        return {"ok": False, "vendor": connection.vendor, "error": type(exc).__name__}
    return {
        "ok": True,
        "vendor": connection.vendor,
        "ms": round((time.perf_counter() - started) * 1000, 2),
    }


def _redis():
    global _redis_client
    with _redis_lock:
        if _redis_client is None:
            import redis

            _redis_client = redis.Redis.from_url(
                settings.CELERY_BROKER_URL, socket_connect_timeout=1, socket_timeout=1
            )
        return _redis_client


def check_broker() -> dict[str, Any]:
    """Redis answers PING; the embedded broker's queue folder exists and is writable."""
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://", "unix://")):
        try:
            _redis().ping()
        except Exception as exc:  # any failure to reach Redis means "not ready"
            return {"ok": False, "kind": "redis", "error": type(exc).__name__}
        return {"ok": True, "kind": "redis"}
    if url.startswith("filesystem://"):
        folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]
        ok = os.path.isdir(folder) and os.access(folder, os.W_OK)
        return (
            {"ok": ok, "kind": "filesystem"}
            if ok
            else {
                "ok": False,
                "kind": "filesystem",
                "error": "queue folder missing or read-only",
            }
        )
    return {"ok": False, "kind": "unknown", "error": "unsupported broker"}


def check_recovery_log() -> dict[str, Any]:
    """How many refused exchanges wait for replay. Informational: each web process replays its
    machine's log itself (memory.conversations.recovery.start_replayer), the beat its worker's."""
    try:
        return {"ok": True, "pending": recovery.pending_count()}
    except OSError as exc:
        return {"ok": False, "error": type(exc).__name__}


def check_sqlite_integrity(*, force: bool = False) -> dict[str, Any]:
    """`PRAGMA quick_check`, reused for CLARA_READYZ_SQLITE_CHECK_SECONDS."""
    global _integrity
    with _integrity_lock:
        now = time.monotonic()
        fresh = (
            _integrity is not None
            and now - _integrity[0] < settings.CLARA_READYZ_SQLITE_CHECK_SECONDS
        )
        if force or not fresh:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("PRAGMA quick_check")
                    rows = [row[0] for row in cursor.fetchall()]
                result = "ok" if rows == ["ok"] else f"{len(rows)} problem(s)"
                _integrity = (now, rows == ["ok"], result)
            except DatabaseError as exc:
                # Not cached: the database check reports the outage; try again next probe.
                return {"ok": False, "error": type(exc).__name__}
        checked_at, ok, result = _integrity
    return {"ok": ok, "result": result, "age_s": round(time.monotonic() - checked_at, 1)}


def check_search() -> dict[str, Any]:
    """Where long-term search runs (informational: either path serves)."""
    from memory.facts import vector_pg

    return {"ok": True, **vector_pg.status()}


def readiness() -> tuple[bool, dict[str, Any]]:
    """Every check; ready when the database, the broker and (on SQLite) the file are fine."""
    checks: dict[str, dict[str, Any]] = {"database": check_database()}
    if _is_sqlite() and checks["database"]["ok"]:
        checks["sqlite_integrity"] = check_sqlite_integrity()
    checks["broker"] = check_broker()
    checks["recovery_log"] = check_recovery_log()
    checks["search"] = check_search()
    ready = all(check["ok"] for check in checks.values())
    if not ready:
        failed = sorted(name for name, check in checks.items() if not check["ok"])
        logger.warning("not ready: %s", ", ".join(failed))
    return ready, checks


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: 200 while the process can answer. Touches no database or broker."""
    if request.method not in ("GET", "HEAD"):
        return _json({"detail": "Use GET.", "code": "method_not_allowed", "field": None}, 405)
    return _json({"status": "ok"}, 200)


def readyz(request: HttpRequest) -> HttpResponse:
    """Readiness: 200 when the database and broker answer (and SQLite is intact), else 503."""
    if request.method not in ("GET", "HEAD"):
        return _json({"detail": "Use GET.", "code": "method_not_allowed", "field": None}, 405)
    ready, checks = readiness()
    body: dict[str, Any] = {"status": "ok" if ready else "unavailable"}
    if may_see_details(request):
        body["checks"] = checks
    response = _json(body, 200 if ready else 503)
    if not ready:
        response["Retry-After"] = "5"
    return response


def may_see_details(request: HttpRequest) -> bool:
    """The internal network, or an operator: an active superuser past the second factor.

    Answered before the session and authentication middleware run (HealthCheckMiddleware), so
    the session is read here, never saved, and an expired login does not count.
    """
    if is_internal(request):
        return True
    key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    if not key:
        return False
    from django.contrib.auth import get_user
    from django_otp import DEVICE_ID_SESSION_KEY
    from django_otp.models import Device

    from dashboard.sessions import login_expired

    try:
        session = import_module(settings.SESSION_ENGINE).SessionStore(key)
        if login_expired(session, now=time.time()):
            return False
        user = get_user(SimpleNamespace(session=session))
        if not (user.is_authenticated and user.is_active and user.is_superuser):
            return False
        device = Device.from_persistent_id(session.get(DEVICE_ID_SESSION_KEY) or "")
        return device is not None and device.user_id == user.pk and device.confirmed
    except DatabaseError:
        # The session store is the database, which is down: the bare status says so.
        return False
