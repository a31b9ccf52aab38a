from enum import Enum


class ErrorOutCode(str, Enum):
    CONFLICT = "conflict"
    ERROR = "error"
    EXPIRED_API_KEY = "expired_api_key"
    FORBIDDEN = "forbidden"
    INSUFFICIENT_SCOPE = "insufficient_scope"
    INTERNAL_ERROR = "internal_error"
    INVALID = "invalid"
    MALFORMED = "malformed"
    MALFORMED_API_KEY = "malformed_api_key"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    MISSING_API_KEY = "missing_api_key"
    NOT_FOUND = "not_found"
    RATE_LIMITED = "rate_limited"
    REVOKED_API_KEY = "revoked_api_key"
    TOO_LARGE = "too_large"
    UNAVAILABLE = "unavailable"
    UNKNOWN_API_KEY = "unknown_api_key"
    UNSUPPORTED_AUTH_SCHEME = "unsupported_auth_scheme"

    def __str__(self) -> str:
        return str(self.value)
