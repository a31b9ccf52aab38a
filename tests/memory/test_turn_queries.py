"""The per-turn path's SQL: `/context` and `/exchanges` read and write a fixed number of
statements, however long the session and however many sessions came before (the database's
share of a turn; bench/memory_bench.py times it). A change that adds a statement to the turn
changes the counts here, on purpose."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.memory.test_api_contract import SESSIONS, new_id

pytestmark = pytest.mark.django_db

LINES = [
    "Where am I?",
    "When is Sarah coming to see me?",
    "I had a lovely walk in the garden with the dog",
    "What day is it today?",
    "My husband used to grow tomatoes in the greenhouse",
]


def _statements(api, session_id: str, message: str) -> tuple[list[str], list[str]]:
    """The SQL of one turn: (what /context sent, what /exchanges sent)."""
    with CaptureQueriesContext(connection) as read:
        response = api.post(f"{SESSIONS}/{session_id}/context", {"message": message})
    assert response.status_code == 200, response.content
    with CaptureQueriesContext(connection) as write:
        response = api.post(
            f"{SESSIONS}/{session_id}/exchanges",
            {"user_message": message, "assistant_message": "That sounds lovely, tell me more."},
        )
    assert response.status_code == 201, response.content
    return [q["sql"] for q in read.captured_queries], [q["sql"] for q in write.captured_queries]


def _turn(api, session_id: str, message: str) -> tuple[int, int]:
    """(statements of /context, statements of /exchanges) for one turn."""
    reads, writes = _statements(api, session_id, message)
    return len(reads), len(writes)


def _session(api, user_id: str) -> str:
    sid = new_id()
    response = api.post(SESSIONS, {"session_id": sid, "user_id": user_id, "display_name": "Nana"})
    assert response.status_code == 201, response.content
    return sid


def _counts(api, session_id: str) -> dict[str, tuple[int, int]]:
    """Each line's statements, said once more (every line a repeat by then: a repeat reads its
    stories, so the kind of message changes the count, the length of the history must not)."""
    return {line: _turn(api, session_id, line) for line in LINES}


def test_a_turn_reads_and_writes_the_same_statements_however_long_the_history(api):
    user_id = new_id()
    first = _session(api, user_id)
    for line in LINES * 2:  # warm: the person, the key and the session are known
        _turn(api, first, line)
    early = _counts(api, first)
    for n in range(30):  # a long session, then a second one of the same person
        _turn(api, first, f"{LINES[n % len(LINES)]} ({n})")
    later = _counts(api, first)
    second = _session(api, user_id)
    for line in LINES * 2:
        _turn(api, second, line)
    other_session = _counts(api, second)

    assert early == later == other_session, (early, later, other_session)
    assert max(context for context, _ in early.values()) <= CONTEXT_STATEMENTS, early
    assert max(exchange for _, exchange in early.values()) <= EXCHANGE_STATEMENTS, early


# Today's most (SQLite; PostgreSQL sends fewer, below): a turn that needs more is a change to
# look at.
CONTEXT_STATEMENTS = 13
EXCHANGE_STATEMENTS = 11


def test_a_turn_reads_the_session_and_writes_the_exchange_in_one_round_trip_each_on_postgresql(
    api,
):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite runs in this process: there is no round trip to save")
    session_id = _session(api, new_id())
    _turn(api, session_id, LINES[0])

    reads, sent = _statements(api, session_id, LINES[3])  # a question of a known kind

    together = [sql for sql in reads if "SELECT fingerprint, question_type" in sql]
    assert len(together) == 1, reads
    for read in (
        "FROM detected_emotions",
        "FROM narrative_usage",
        "FROM chat_messages",
        "SELECT COUNT(*) FROM repetition_tracking",  # the person's asking in other sessions
        "SELECT pe.memory_policy FROM people",  # their companion's policy
        "SELECT generation, epoch FROM memory_scopes",  # whether their memories' copy is current
    ):
        assert read in " ".join(together[0].split()), read
    alone = [sql for sql in reads if sql not in together]
    assert not [sql for sql in alone if "memory_policy" in sql or "memory_scopes" in sql], alone
    # A turn that may tell a story reads the library's version, the person's own stories and
    # what they heard lately together.
    stories = [sql for sql in reads if "FROM narratives WHERE person_id IS NULL" in sql]
    assert len(stories) == 1, reads
    assert "FROM narratives WHERE person_id = " in stories[0], stories
    assert "FROM narrative_usage u" in stories[0], stories
    # The exchange locks the session and reads its earlier fingerprints and latest distress
    # (the bot sent no emotion reading) in one round trip, the lock first.
    locks = [sql for sql in sent if "FOR UPDATE" in sql]
    assert len(locks) == 1, sent
    lock = " ".join(locks[0].split())
    assert lock.index("FOR UPDATE") < lock.index("FROM repetition_tracking"), lock
    assert "FROM detected_emotions WHERE session_id" in lock, lock
    writes = [sql for sql in sent if sql.lstrip().startswith(("INSERT", "UPDATE"))]
    assert len(writes) == 1, writes
    for write in (
        "INSERT INTO chat_messages",
        "INSERT INTO detected_emotions",
        "INSERT INTO repetition_tracking",
        "UPDATE sessions",
        "UPDATE people",
    ):
        assert write in writes[0], write
