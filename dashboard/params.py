"""Query parameters of the dashboard's pages, read strictly: bad input is a 400 naming it.

A page number is what a "more" button or a pasted link sends; `?page=9223372036854775807` once
reached the database as an offset no column holds (a 500). Pages past the end are empty, not
errors; pages past MAX_PAGE, or not numbers at all, are refused.
"""

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

# Far past any real history (10,000 pages of conversations or audit rows), far below overflow.
MAX_PAGE = 10_000


class BadParameter(Exception):
    """A query parameter the page cannot use; `response()` is the 400 to send."""

    def __init__(self, name: str, detail: str) -> None:
        super().__init__(f"{name}: {detail}")
        self.name = name
        self.detail = detail

    def response(self) -> HttpResponse:
        return HttpResponseBadRequest(
            f"{self.name}: {self.detail}", content_type="text/plain; charset=utf-8"
        )


def page_number(request: HttpRequest, name: str = "page") -> int:
    """The page asked for (1 when absent); raises BadParameter outside 1..MAX_PAGE."""
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return 1
    if not raw.isascii() or not raw.isdigit() or len(raw) > len(str(MAX_PAGE)):
        raise BadParameter(name, f"must be a whole number from 1 to {MAX_PAGE}.")
    page = int(raw)
    if not 1 <= page <= MAX_PAGE:
        raise BadParameter(name, f"must be a whole number from 1 to {MAX_PAGE}.")
    return page
