"""Errors the services raise; the API maps each to a status and a `{detail, code, field}` body."""


class DomainError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


class NotFound(DomainError):
    status = 404
    code = "not_found"


class Conflict(DomainError):
    status = 409
    code = "conflict"


class Invalid(DomainError):
    status = 422
    code = "invalid"


class Forbidden(DomainError):
    """The caller is known but may not do this (an API key without the scope)."""

    status = 403
    code = "forbidden"


class InsufficientScope(Forbidden):
    code = "insufficient_scope"
