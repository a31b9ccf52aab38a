"""Time-ordered ids for the append-only tables.

A random UUID lands each new row's primary-key entry on a random index page, so every exchange
dirties pages all over the index. A UUIDv7 (RFC 9562) starts with the millisecond clock, so new
ids sort after old ones and index inserts become appends. Python 3.14 has `uuid.uuid7`; this
is the same layout for 3.11.
"""

import os
import time
import uuid

_VERSION = 7 << 76
_VARIANT = 0b10 << 62


def uuid7() -> uuid.UUID:
    """48 bits of Unix time in milliseconds, then the version, 74 random bits and the variant."""
    millis = time.time_ns() // 1_000_000
    value = (millis & ((1 << 48) - 1)) << 80 | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | _VERSION
    value = (value & ~(0b11 << 62)) | _VARIANT
    return uuid.UUID(int=value)


def uuid7_text() -> str:
    """A `uuid7` as text: for a text primary key that code, not a person, chooses (a
    narrative's), so no one can guess another organisation's ids from their own."""
    return str(uuid7())
