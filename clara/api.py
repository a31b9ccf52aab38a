"""The one NinjaAPI of the project, mounted at /api/v1/."""

import json

from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import HttpError

from memory.api import BotKey
from memory.errors import DomainError

api = NinjaAPI(
    title="Clara Memory API",
    version="1",
    description="Persistent memory for Clara, a companion for people living with dementia.",
    urls_namespace="api",
    auth=BotKey(),
)
api.add_router("/", "memory.api.router")


@api.exception_handler(DomainError)
def domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    body = {"detail": exc.detail, "code": exc.code, "field": exc.field}
    return api.create_response(request, body, status=exc.status)


@api.exception_handler(json.JSONDecodeError)
def malformed_json(request: HttpRequest, exc: json.JSONDecodeError) -> HttpResponse:
    body = {"detail": f"The body is not valid JSON: {exc.msg}.", "code": "malformed", "field": "body"}
    return api.create_response(request, body, status=422)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # Ninja raises HttpError(400) for a body it cannot parse; the contract says 422 for bad input.
    status = 422 if exc.status_code == 400 else exc.status_code
    body = {"detail": str(exc), "code": "malformed" if status == 422 else "error", "field": None}
    return api.create_response(request, body, status=status)
