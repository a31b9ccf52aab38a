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


class Unauthenticated(DomainError):
    """No usable API key; answered 401 with `WWW-Authenticate: Bearer` (RFC 6750).

    `bearer_error` is RFC 6750's error attribute: None when the request offered no Bearer
    credentials at all (a missing header, another scheme), "invalid_token" when it offered a key
    that is not good. Each reason has its own `code` so a bot developer sees what to fix.
    """

    status = 401
    code = "unknown_api_key"
    bearer_error: str | None = "invalid_token"

    def __init__(self, detail: str, *, field: str | None = "Authorization") -> None:
        super().__init__(detail, field=field)

    def www_authenticate(self) -> str:
        value = 'Bearer realm="clara"'
        if self.bearer_error:
            # error_description is quoted text: the detail has no double quotes or backslashes.
            value += f', error="{self.bearer_error}", error_description="{self.detail}"'
        return value


class MissingApiKey(Unauthenticated):
    code = "missing_api_key"
    bearer_error = None


class UnsupportedAuthScheme(Unauthenticated):
    code = "unsupported_auth_scheme"
    bearer_error = None


class MalformedApiKey(Unauthenticated):
    code = "malformed_api_key"


class UnknownApiKey(Unauthenticated):
    code = "unknown_api_key"


class RevokedApiKey(Unauthenticated):
    code = "revoked_api_key"


class ExpiredApiKey(Unauthenticated):
    code = "expired_api_key"


# Every `code` an API error body may carry (the OpenAPI document's enum). The DomainError codes
# above, and those clara/api.py and the middlewares answer with themselves.
ERROR_CODES = (
    "invalid",
    "malformed",
    "not_found",
    "conflict",
    "forbidden",
    "insufficient_scope",
    "missing_api_key",
    "unsupported_auth_scheme",
    "malformed_api_key",
    "unknown_api_key",
    "revoked_api_key",
    "expired_api_key",
    "too_large",
    "rate_limited",
    "method_not_allowed",
    "unavailable",
    "internal_error",
    "error",
)
