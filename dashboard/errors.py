"""The dashboard's own 403, 404 and 500 pages, whatever DEBUG says.

Django shows its technical pages under DEBUG (a 404 lists every URL pattern, a 500 prints
settings and local variables), and `make run` runs with DEBUG on. So the middleware answers
for every path outside the API, the admin and static files: an `Http404` or `PermissionDenied`
raised by a view, a URL that matched nothing (the API's in its JSON error shape), and
(outside the API) an unexpected exception,
which is still logged with its traceback and still reaches the test client. The same views are
Django's handler403/404/500 and CSRF failure view for DEBUG off.

A person of another organisation is answered exactly as an unknown one: one 404 page, with no
word of why.
"""

import logging
from collections.abc import Callable

from django.core.exceptions import PermissionDenied
from django.core.signals import got_request_exception
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

logger = logging.getLogger("django.request")

# Paths with their own error answers: the API (JSON bodies), the admin, static files.
OWN_ERRORS = ("/api/", "/admin/", "/static/")

PAGES = {
    403: (
        "You can't open this",
        "Your role does not allow this page. If you need it, ask an admin of the care team.",
    ),
    404: ("Not found", "There is nothing here."),
    500: (
        "Something went wrong",
        "The dashboard could not show this page. Nothing you did caused it. "
        "Please try again in a minute; the team that runs Clara has been told.",
    ),
}


def error_page(request: HttpRequest, status: int) -> HttpResponse:
    """The page for `status` in the dashboard's style; plain HTML if even that fails."""
    title, text = PAGES[status]
    context = {"status": status, "title": title, "text": text}
    try:
        content = render_to_string("dashboard/error.html", context, request=request)
    except Exception:  # a 500 may come from a broken database: no user, no session
        logger.exception("Could not render the dashboard's %s page", status)
        content = (
            f'<!doctype html><html lang="en-GB"><title>{title}</title>'
            f"<main><h1>{title}</h1><p>{text}</p></main></html>"
        )
    return HttpResponse(content, status=status)


API_ERRORS = {403: "forbidden", 404: "not_found", 500: "internal_error"}


def _answer(request: HttpRequest, status: int) -> HttpResponse:
    # The API answers in its own error shape ({"detail", "code"}), never an HTML page.
    if request.path.startswith("/api/"):
        detail = {403: "Forbidden.", 404: "Not found.", 500: "Internal error."}[status]
        return JsonResponse({"detail": detail, "code": API_ERRORS[status]}, status=status)
    return error_page(request, status)


def forbidden(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, 403)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, 404)


def server_error(request: HttpRequest) -> HttpResponse:
    return _answer(request, 500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    return error_page(request, 403)


def _ours(request: HttpRequest) -> bool:
    return not request.path.startswith(OWN_ERRORS)


class ErrorPagesMiddleware:
    """Answers 403, 404 and 500 on the dashboard's paths with the dashboard's pages."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        # No URL matched (resolver_match is never set): under DEBUG Django's answer lists
        # every URL pattern; the API's unmatched paths get its JSON error shape.
        if (
            response.status_code == 404
            and getattr(request, "resolver_match", None) is None
            and not request.path.startswith(("/admin/", "/static/"))
        ):
            return _answer(request, 404)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception):
        if not _ours(request):
            return None
        if isinstance(exception, Http404):
            return error_page(request, 404)
        if isinstance(exception, PermissionDenied):
            return error_page(request, 403)
        logger.error(
            "Internal Server Error: %s",
            request.path,
            exc_info=exception,
            extra={"request": request},
        )
        # As Django does for an unhandled exception: the test client re-raises it from this.
        got_request_exception.send(sender=None, request=request)
        return error_page(request, 500)
