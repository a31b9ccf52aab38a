"""Query parameters of the dashboard's pages, read strictly: bad input is a 400 naming it.

A page number is what a "more" button or a pasted link sends; `?page=9223372036854775807` once
reached the database as an offset no column holds (a 500). Pages past the end are empty, not
errors; pages past MAX_PAGE, or not numbers at all, are refused.

A day (`?to=`, `?end=`) is a date between FIRST_DAY and LAST_DAY: `?to=9999-12-31` once reached
the code that adds a day or a time zone to it and overflowed (a 500). Every date parameter of the
dashboard is read by `day()` or, in a form, checked by `validate_day`.
"""

from datetime import date

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

# Far past any real history (10,000 pages of conversations or audit rows), far below overflow.
MAX_PAGE = 10_000
# Before Clara, and far after anyone reading this; far below date.max, so a day and a time zone
# can be added to either end.
FIRST_DAY = date(2000, 1, 1)
LAST_DAY = date(2999, 12, 31)
DAY_RANGE = f"a day from {FIRST_DAY.isoformat()} to {LAST_DAY.isoformat()}"


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


def bad_input(field: str, detail: str) -> JsonResponse:
    """The 400 for a form field a page's script posts (htmx switches, the PDF's dates): JSON
    naming the field."""
    return JsonResponse({"detail": detail, "code": "invalid", "field": field}, status=400)


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


def validate_day(value: date) -> None:
    """A form field's validator: the day is between FIRST_DAY and LAST_DAY."""
    if not FIRST_DAY <= value <= LAST_DAY:
        raise ValidationError(f"Give {DAY_RANGE}.", code="out_of_range")


def day(request: HttpRequest, name: str, *, default: date | None) -> date | None:
    """The day asked for as YYYY-MM-DD (`default` when absent); raises BadParameter when it is
    not a date or is outside FIRST_DAY..LAST_DAY."""
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = date.fromisoformat(raw) if len(raw) == 10 else None
    except ValueError:
        value = None
    if value is None or not FIRST_DAY <= value <= LAST_DAY:
        raise BadParameter(name, f"must be {DAY_RANGE}, as YYYY-MM-DD.")
    return value
