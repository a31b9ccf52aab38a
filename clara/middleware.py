"""Project middleware: health probes, privacy headers, and the API body size limit."""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

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
