"""Which facts were used: the ones that reached a prompt and the ones a search handed out.

The preference ranking and curation read `use_count` and `last_used_at`, so each use must be
recorded; but the per-turn path must not wait for a write. Uses are gathered in the process and
handed to a job (`memory.tasks.record_fact_use`) a few seconds later, from a timer thread, in one
message for everything gathered meanwhile. The job writes them (`store.memories_used`).

A prompt's use counts once per conversation: the same pinned fact in every turn of one session is
one use (counted only if the fact was not used since the session began), so a fact is not ranked up merely for being always at
hand. A search hit counts each time. A use lost with a process that dies in those seconds is a
count off by one, not a fact lost.
"""

import logging
import os
import threading
import uuid
from datetime import datetime

from django.conf import settings
from django.utils import timezone

logger = logging.getLogger(__name__)

_lock = threading.Lock()
# (memory id, session id or "") -> [uses, the latest time of use as ISO text].
_pending: dict[tuple[str, str], list] = {}
_timer: tuple[int, threading.Timer] | None = None


def note(ids, *, session_id: uuid.UUID | None = None, at: datetime | None = None) -> None:
    """Record that these memories were used now (or `at`); with `session_id`, once in it."""
    global _timer
    ids = [str(memory_id) for memory_id in ids]
    if not ids:
        return
    when = (at or timezone.now()).isoformat()
    key_since = str(session_id) if session_id else ""
    with _lock:
        for memory_id in ids:
            _add(memory_id, key_since, 1, when)
        # A timer of a parent process does not survive a fork: start one in this process.
        if _timer is None or _timer[0] != os.getpid():
            timer = threading.Timer(settings.CLARA_FACT_USE_FLUSH_SECONDS, _flush_from_timer)
            timer.daemon = True
            _timer = (os.getpid(), timer)
            timer.start()


def _add(memory_id: str, session: str, count: int, at: str) -> None:
    """Under _lock."""
    entry = _pending.setdefault((memory_id, session), [0, at])
    entry[0] += count
    entry[1] = max(entry[1], at)


def pending() -> list[list]:
    """What the next job will carry: [memory id, session id or "", uses, latest use]."""
    with _lock:
        return [[m, session, n, at] for (m, session), (n, at) in _pending.items()]


def flush() -> int:
    """Queue the job for everything gathered; returns how many uses it carries."""
    global _timer
    with _lock:
        uses = [[m, session, n, at] for (m, session), (n, at) in _pending.items()]
        _pending.clear()
        if _timer is not None and _timer[0] == os.getpid():
            _timer[1].cancel()
        _timer = None
    if uses:
        from memory.facts.tasks import record_fact_use

        try:
            record_fact_use.delay(uses)
        except Exception:
            with _lock:  # kept for the next flush
                for memory_id, session, count, at in uses:
                    _add(memory_id, session, count, at)
            raise
    return len(uses)


def _flush_from_timer() -> None:
    global _timer
    try:
        flush()
    except Exception:  # a broker down: the counts wait for the next use, nothing else is hurt
        logger.warning("fact use: could not queue the job; kept for the next try", exc_info=True)
    finally:
        from django.db import connection

        connection.close()  # this thread's own connection, if the job ran eagerly


def parse(uses: list[list]) -> list[tuple[uuid.UUID, datetime | None, int, datetime]]:
    """The job's message as (memory id, count once after this time or None, uses, latest use):
    a session's uses count once after the session began."""
    from memory.conversations.models import Session

    sessions = {uuid.UUID(session) for _, session, _, _ in uses if session}
    began = dict(Session.objects.filter(id__in=sessions).values_list("id", "created_at"))
    out = []
    for memory_id, session, count, at in uses:
        since = None
        if session:
            # A session gone (erased) counts from the time of use: once.
            since = began.get(uuid.UUID(session)) or datetime.fromisoformat(at)
        out.append((uuid.UUID(memory_id), since, int(count), datetime.fromisoformat(at)))
    return out
