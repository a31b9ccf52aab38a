"""The one NinjaAPI of the project, mounted at /api/v1/."""

import json
import logging
import threading

from django.conf import settings
from django.db import DatabaseError, DataError
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import HttpError, Throttled, ValidationError
from ninja.parser import Parser
from ninja.throttling import BaseThrottle

from clara import openapi, ratelimit
from memory.conversations.api import BotKey
from memory.core import strict_json
from memory.core.errors import DomainError, Unauthenticated

logger = logging.getLogger(__name__)


class ApiKeyRateLimit(BaseThrottle):
    """CLARA_API_RATE_LIMIT_PER_MINUTE requests per API key, counted across every web process.

    Ninja runs throttles after authentication, so `request.auth` is the caller's key and a
    request with a wrong key never spends anyone's budget. Over the limit ninja raises
    `Throttled(wait=...)`, answered below as 429 with Retry-After.
    """

    def __init__(self) -> None:
        # One instance serves every thread of a process: keep each request's wait apart.
        self._local = threading.local()

    def allow_request(self, request: HttpRequest) -> bool:
        key = getattr(request, "auth", None)
        if key is None:
            return True
        decision = ratelimit.hit(
            client_id=f"key:{key.prefix}", limit=settings.CLARA_API_RATE_LIMIT_PER_MINUTE
        )
        self._local.wait = decision.retry_after
        return decision.allowed

    def wait(self) -> float | None:
        return getattr(self._local, "wait", None)


class StrictJsonParser(Parser):
    """Request bodies without NaN, Infinity, 64-bit-overflowing integers or lone surrogates.

    Each is refused as a 422 naming the field (memory/core/strict_json.py) rather than reaching
    a database that cannot store it (a 500, or a 503 that tells the bot to retry forever).
    """

    def parse_body(self, request: HttpRequest):
        return strict_json.loads(request.body)


class ClaraApi(NinjaAPI):
    def get_openapi_operation_id(self, operation) -> str:
        return openapi.operation_id(operation.view_func)

    def get_openapi_schema(self, *, path_prefix=None, path_params=None):
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        return openapi.finish(schema)


api = ClaraApi(
    title="Clara Memory API",
    version="1",
    description="Persistent memory for Clara, a companion for people living with dementia.",
    urls_namespace="api",
    auth=BotKey(),
    throttle=[ApiKeyRateLimit()],
    parser=StrictJsonParser(),
)
# One router per part of the memory app (docs/architecture.md).
api.add_router("/", "memory.conversations.api.router")
api.add_router("/", "memory.companion.api_context.router")
api.add_router("/", "memory.facts.api.router")
api.add_router("/", "memory.api_privacy.router")
api.add_router("/", "memory.companion.api_tools.router")
api.add_router("/", "memory.webhooks.api.router")
api.add_router("/", "memory.companion.api_turns.router")
api.add_router("/", "memory.companion.api_checkins.router")
# The FHIR export reads the clinician report's figures, which live in the dashboard.
api.add_router("/", "dashboard.fhir.api.router")


@api.exception_handler(DomainError)
def domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    body = {"detail": exc.detail, "code": exc.code, "field": exc.field}
    response = api.create_response(request, body, status=exc.status)
    if isinstance(exc, Unauthenticated):
        response["WWW-Authenticate"] = exc.www_authenticate()
    return response


@api.exception_handler(json.JSONDecodeError)
def malformed_json(request: HttpRequest, exc: json.JSONDecodeError) -> HttpResponse:
    body = {
        "detail": f"The body is not valid JSON: {exc.msg}.",
        "code": "malformed",
        "field": "body",
    }
    return api.create_response(request, body, status=422)


@api.exception_handler(Throttled)
def rate_limited(request: HttpRequest, exc: Throttled) -> HttpResponse:
    wait = max(1, int(exc.wait or 1))
    body = {
        "detail": f"Too many requests for this API key; retry in {wait} s.",
        "code": "rate_limited",
        "field": None,
    }
    response = api.create_response(request, body, status=429)
    response["Retry-After"] = str(wait)
    return response


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # Ninja raises HttpError(400) for a body it cannot parse; the contract says 422 for bad input.
    # A body the strict parser refused names its field: answer that.
    if isinstance(exc.__cause__, DomainError):
        return domain_error(request, exc.__cause__)
    if exc.status_code == 400:
        body = {"detail": str(exc), "code": "malformed", "field": "body"}
        return api.create_response(request, body, status=422)
    body = {"detail": str(exc), "code": "error", "field": None}
    return api.create_response(request, body, status=exc.status_code)


_SOURCES = {"body", "path", "query", "header", "cookie", "form", "file"}


def _field_name(loc: list) -> str:
    """`["body", "payload", "emotion", "distress_score"]` -> `"emotion.distress_score"`."""
    parts = [str(part) for part in loc]
    if parts and parts[0] == "body":
        # The second part is the view's parameter name; a body that is wrong as a whole is "body".
        return ".".join(parts[2:]) or "body"
    if parts and parts[0] in _SOURCES:
        parts = parts[1:]
    return ".".join(parts) or "body"


@api.exception_handler(ValidationError)
def invalid_input(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    # The documented error shape ({detail, code, field}), with every problem listed in `errors`.
    errors = [
        {
            "field": _field_name(error.get("loc", [])),
            "msg": error.get("msg", ""),
            "type": error.get("type", ""),
        }
        for error in exc.errors
    ]
    first = errors[0] if errors else {"field": "body", "msg": "Invalid input"}
    body = {
        "detail": f"{first['field']}: {first['msg']}",
        "code": "invalid",
        "field": first["field"],
        "errors": errors,
    }
    return api.create_response(request, body, status=422)


@api.exception_handler(DatabaseError)
def database_unavailable(request: HttpRequest, exc: DatabaseError) -> HttpResponse:
    if isinstance(exc, DataError):
        # The database refused a value (out of range, not storable): bad input, not an outage,
        # so never "retry". Schemas bound what they can; this is the net under them.
        # The type only: the database's message may quote the value, which may be personal.
        logger.warning("database refused a value on %s: %s", request.path, type(exc).__name__)
        body = {
            "detail": "A value in the request is out of range or cannot be stored.",
            "code": "invalid",
            "field": None,
        }
        return api.create_response(request, body, status=422)
    # Reads (and key checks) cannot fall back to the recovery log; tell the bot to retry.
    logger.warning("database error on %s: %s", request.path, type(exc).__name__)
    body = {
        "detail": "The memory store is busy or unavailable; retry shortly.",
        "code": "unavailable",
        "field": None,
    }
    response = api.create_response(request, body, status=503)
    response["Retry-After"] = "1"
    return response
