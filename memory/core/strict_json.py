"""JSON as the API accepts it: only values every layer below can store, refused with the field named.

Python's `json` reads `NaN`, `Infinity` and `1e999` as floats that no JSON column, encrypted
field or PostgreSQL `jsonb` accepts, and `"\\ud800"` (a lone surrogate) as a string that cannot
be encoded as UTF-8 for any database. Integers wider than 64 bits fit no column either. Refused
here, at the door, they are a 422 naming the field (`metadata.mood`), never a database error
that reads as an outage (503, "retry") or a 500.

`loads` parses a request body; `check` inspects a value already parsed by someone else (the MCP
server's tool arguments).
"""

import json
import math
from typing import Any

from memory.core.errors import Invalid

# The widest integer a database column (bigint) or JSON column round-trips.
MAX_INT = 2**63 - 1


class _NotANumber:
    """What `NaN`, `Infinity`, `-Infinity` and overflowing floats parse to, until they are refused."""

    def __init__(self, text: str) -> None:
        self.text = text


def _constant(text: str) -> _NotANumber:
    return _NotANumber(text)


def _float(text: str) -> float | _NotANumber:
    value = float(text)
    return value if math.isfinite(value) else _NotANumber(text)


def loads(body: bytes | str) -> Any:
    """The parsed body; raises `Invalid` naming the first value no database could store.

    Malformed JSON raises `json.JSONDecodeError` (or `UnicodeDecodeError`) as `json.loads` does.
    """
    value = json.loads(body, parse_constant=_constant, parse_float=_float)
    check(value)
    return value


def _has_lone_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _name(where: "_Path") -> str:
    parts: list[str] = []
    while where is not None:
        where, part = where
        parts.append(part)
    return ".".join(reversed(parts)) or "body"


# A path as a chain of (parent, part) pairs: extending one is O(1) however deep the body.
_Path = tuple | None


def _root(path: list[str] | None) -> _Path:
    where: _Path = None
    for part in path or []:
        where = (where, part)
    return where


def check(value: Any, path: list[str] | None = None) -> None:
    """Raise `Invalid` at the first non-finite number, oversized integer or lone surrogate."""
    # Iterative, so a deeply nested body cannot exhaust the stack here.
    stack: list[tuple[Any, _Path]] = [(value, _root(path))]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if _has_lone_surrogate(item):
                raise Invalid(
                    f"{_name(where)}: text must be valid Unicode (a lone surrogate was sent).",
                    field=_name(where),
                )
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int):
            if not -MAX_INT - 1 <= item <= MAX_INT:
                raise Invalid(
                    f"{_name(where)}: the number is too large (at most 64-bit integers).",
                    field=_name(where),
                )
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise Invalid(f"{_name(where)}: must be a finite number.", field=_name(where))
        elif isinstance(item, _NotANumber):
            raise Invalid(
                f"{_name(where)}: {item.text} is not a number JSON allows; send a finite number.",
                field=_name(where),
            )
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and _has_lone_surrogate(key):
                    raise Invalid(
                        f"{_name(where)}: a key is not valid Unicode (a lone surrogate was sent).",
                        field=_name(where),
                    )
                stack.append((child, (where, str(key))))
        elif isinstance(item, list | tuple):
            for index, child in enumerate(item):
                stack.append((child, (where, str(index))))
