import time

from memory.core.ids import uuid7


def test_uuid7_has_version_7_and_the_rfc_variant():
    value = uuid7()

    assert value.version == 7
    assert value.variant == "specified in RFC 4122"


def test_uuid7_sorts_by_creation_time():
    first = uuid7()
    time.sleep(0.002)
    second = uuid7()

    assert first < second
    assert first.hex < second.hex  # SQLite stores the hex form


def test_uuid7_embeds_the_current_millisecond():
    before = time.time_ns() // 1_000_000
    value = uuid7()
    after = time.time_ns() // 1_000_000

    assert before <= value.int >> 80 <= after
