"""The API's shared conventions: the error shape, request bodies that must be objects, bounded text.

Every router (conversations, facts, companion, privacy) builds its schemas from these, so bad
input is refused the same way everywhere: 422 with the field named.
"""

from datetime import datetime, timedelta
from typing import Annotated, Literal

from django.utils import timezone
from ninja import Field, Schema
from ninja.schema import DjangoGetter
from pydantic import AfterValidator, AwareDatetime, BeforeValidator, model_validator

from memory.core.errors import ERROR_CODES
from memory.core.hygiene import spoken_text

MAX_MESSAGE_CHARS = 8000


def _no_nul(value: str) -> str:
    if "\x00" in value:
        # PostgreSQL cannot store NUL in text; refuse it on every database alike.
        raise ValueError("must not contain NUL characters")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate ("\ud800"): no database can encode it. The API's parser refuses
            # it in any JSON body; this covers callers that are not HTTP (MCP, services).
            raise ValueError("must be valid Unicode (no lone surrogates)") from None
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return _no_nul(value)


# How far back a bot may date what it uploads (an exchange buffered offline, a replayed log).
MAX_BACKDATE = timedelta(days=400)
CLOCK_SKEW = timedelta(minutes=1)


def _in_the_past(value: datetime) -> datetime:
    now = timezone.now()
    if value > now + CLOCK_SKEW:
        raise ValueError("must not be in the future")
    if value < now - MAX_BACKDATE:
        raise ValueError("must be within the last 400 days")
    return value


# A moment that already happened, with its time zone.
PastTime = Annotated[AwareDatetime, AfterValidator(_in_the_past)]


def Text(*, max_length: int, min_length: int = 0):  # noqa: N802 - reads as a type
    """A short free-text field: bounded length, no NUL characters."""
    return Annotated[
        str, Field(min_length=min_length, max_length=max_length), AfterValidator(_no_nul)
    ]


MessageText = Annotated[
    str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS), AfterValidator(_not_blank)
]


def _spoken(value):
    """Keep only what was said: reasoning blocks and <think> tags never reach storage."""
    if isinstance(value, str):
        return spoken_text(value)
    if isinstance(value, list) and all(isinstance(block, dict) for block in value):
        return spoken_text(value)
    return value


# The companion's reply: a string, or the LLM's content blocks ([{"type": "text", "text": ...},
# {"type": "thinking", ...}]); reasoning is stripped before anything else sees it.
AssistantText = Annotated[
    str,
    BeforeValidator(_spoken),
    Field(
        min_length=1,
        max_length=MAX_MESSAGE_CHARS,
        description="The reply as said. Content blocks are accepted too; reasoning blocks and "
        "<think> tags are removed before storage.",
    ),
    AfterValidator(_not_blank),
]


ErrorCode = Literal[ERROR_CODES]  # type: ignore[valid-type]


class ErrorItemOut(Schema):
    field: str
    msg: str
    type: str


class ErrorOut(Schema):
    detail: str
    code: ErrorCode = Field(description="What went wrong, for code to branch on.")
    field: str | None = Field(
        default=None, description="The field, header or scope concerned, when there is one."
    )
    # For invalid input: every problem found, each with its location and message.
    errors: list[ErrorItemOut] | None = None


class RequestSchema(Schema):
    """A request body (or part of one) that must be a JSON object.

    Ninja's Schema reads attributes off whatever it is given, so without this check a JSON array,
    string or null validates as an object with every field missing: all-optional bodies would
    be accepted.
    """

    @model_validator(mode="before")
    @classmethod
    def _must_be_object(cls, data):
        # Ninja's own validator has already wrapped the input in a DjangoGetter.
        raw = data._obj if isinstance(data, DjangoGetter) else data
        if not isinstance(raw, dict):
            raise ValueError("must be a JSON object")
        return data


# What every endpoint may answer besides its success: 503 when the database is busy or away
# (reads cannot fall back to the recovery log).
ERRORS = {401: ErrorOut, 404: ErrorOut, 409: ErrorOut, 422: ErrorOut, 503: ErrorOut}
