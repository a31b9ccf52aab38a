"""Project middleware: health probes, privacy headers, malformed requests, the API body size limit."""

import re
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.module_loading import import_string

from clara import health

API_PREFIX = "/api/"
# Responses that carry no personal data and may be cached (static files also carry their own
# far-future Cache-Control from WhiteNoise).
_CACHEABLE_PATHS = ("/healthz",)


class HealthCheckMiddleware:
    """Answers /healthz and /readyz before anything else runs.

    Load balancers probe by IP address and over plain HTTP; answered here, the probes need
    neither an ALLOWED_HOSTS entry for that address nor an exemption from the HTTPS redirect,
    and a broken session store or database cannot turn liveness into a 500.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == "/healthz":
            return health.healthz(request)
        if request.path == "/readyz":
            return health.readyz(request)
        return self.get_response(request)


# What an API error that no API handler shaped is called (Django's and ninja's own answers).
_API_ERROR_CODES = {
    400: ("Bad request.", "malformed"),
    403: ("Forbidden.", "forbidden"),
    404: ("No such API path.", "not_found"),
    405: ("This path does not take this method.", "method_not_allowed"),
    413: ("The body is too large.", "too_large"),
}


class ApiJsonErrorsMiddleware:
    """Every error under /api/ in the API's JSON shape, even those no API handler wrote.

    Ninja answers a wrong method with a plain-text 405, Django a bad Host with an HTML 400 and
    some unmatched /api/ paths with an HTML 404; a client that parses the documented error shape
    would crash on them. Outside everything that may answer so, inside the privacy headers.
    The 405's Allow header is kept.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code < 400
            or not request.path.startswith(API_PREFIX)
            or response.get("Content-Type", "").startswith("application/json")
        ):
            return response
        status = response.status_code
        detail, code = _API_ERROR_CODES.get(
            status, ("Internal error.", "internal_error") if status >= 500 else ("Error.", "error")
        )
        if status == 405 and response.get("Allow"):
            detail = f"This path takes {response['Allow']}, not {request.method}."
        shaped = JsonResponse({"detail": detail, "code": code, "field": None}, status=status)
        for header in ("Allow", "Retry-After", "WWW-Authenticate"):
            if header in response:
                shaped[header] = response[header]
        return shaped


class PrivacyHeadersMiddleware:
    """Content-Security-Policy and `Cache-Control: no-store` on every response but static files.

    Dashboard pages, the admin and the API all carry personal data, so no browser or proxy may
    keep a copy; listing the exceptions is safer than listing the pages. A view that sets its own
    Content-Security-Policy keeps it.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        static_url = settings.STATIC_URL
        self.static_prefix = static_url if static_url.startswith("/") else "/" + static_url

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        path = request.path
        if path.startswith(self.static_prefix) or path in _CACHEABLE_PATHS:
            return response
        if settings.CLARA_CONTENT_SECURITY_POLICY and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = settings.CLARA_CONTENT_SECURITY_POLICY
        # Replace, don't merge: "public, max-age=600, no-store" would still read as cacheable to
        # some proxies.
        if "no-store" not in response.get("Cache-Control", ""):
            response["Cache-Control"] = "no-store"
        return response


# RFC 9110: Content-Length = 1*DIGIT. Anything else (abc, -1, 1e3, " 5") is a malformed request.
_CONTENT_LENGTH = re.compile(r"[0-9]{1,19}")


class MalformedRequestMiddleware:
    """400 for a request whose framing is broken, before anything reads its body.

    Django reads a bad Content-Length in some places as 0 and in others raises ValueError (a
    500 from `request.body` or `request.POST`); RFC 9112 says such a request gets 400. The API
    answers in its JSON error shape with the header named; other pages get a plain line.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = request.META.get("CONTENT_LENGTH")
        if length and not _CONTENT_LENGTH.fullmatch(length):
            detail = "The Content-Length header must be a whole number of bytes."
            if request.path.startswith(API_PREFIX):
                body = {"detail": detail, "code": "malformed", "field": "Content-Length"}
                return JsonResponse(body, status=400)
            return HttpResponse(
                f"Bad request: {detail}", status=400, content_type="text/plain; charset=utf-8"
            )
        return self.get_response(request)


class ApiBodyLimitMiddleware:
    """413 with the API's JSON error shape for a bot API body over CLARA_API_MAX_BODY_BYTES.

    Judged by Content-Length, before anything reads the body. A body without Content-Length
    (chunked) reaches Django as empty, so it cannot slip past.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.CLARA_API_MAX_BODY_BYTES
        if limit and request.path.startswith(API_PREFIX):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0  # Django reads a malformed length as 0 too
            if length > limit:
                return JsonResponse(
                    {
                        "detail": f"The body is {length} bytes; the limit is {limit}.",
                        "code": "too_large",
                        "field": "body",
                    },
                    status=413,
                )
        return self.get_response(request)


def _api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


# --- Browser-only middleware -----------------------------------------------------------------
#
# The bot API authenticates each request by its key (Authorization: Bearer) and uses no login,
# flash message or second factor. Reading the login loaded the session on every bot request, and
# these middlewares cost about a tenth of a per-turn request (docs/benchmarks.md), so on /api/
# they are skipped; on every other path they run exactly as before. Django's own are subclassed,
# so the admin's checks still find them. The session and CSRF middlewares stay as Django ships
# them (`check --deploy` looks for them by name); untouched, they cost a bot request next to
# nothing.


class _SkippedOnApi:
    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _api(request):
            return self.get_response(request)
        return super().__call__(request)


class BrowserAuthenticationMiddleware(_SkippedOnApi, AuthenticationMiddleware):
    pass


class BrowserMessageMiddleware(_SkippedOnApi, MessageMiddleware):
    pass


class BrowserOnly:
    """Runs the middleware named by `wrapped` on every path but the bot API's."""

    wrapped = ""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.inner = import_string(self.wrapped)(get_response)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _api(request):
            return self.get_response(request)
        return self.inner(request)


class BrowserOTPMiddleware(BrowserOnly):
    wrapped = "django_otp.middleware.OTPMiddleware"


class BrowserLoginSessionMiddleware(BrowserOnly):
    wrapped = "dashboard.sessions.LoginSessionMiddleware"


class BrowserSecondFactorMiddleware(BrowserOnly):
    wrapped = "dashboard.two_factor.SecondFactorMiddleware"
