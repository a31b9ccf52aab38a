"""Per-API-key rate limit: a sliding window over the Django cache, shared by every web process.

The estimate for the last minute is `previous window x the part of it still inside the last 60 s
+ current window`, which smooths the burst a fixed window allows at its edges, at two cache keys
per client. Each request increments the current window first and takes the increment back if it
went over, so concurrent requests never overshoot the limit (at worst one is refused early).

With Redis the increment is Redis' atomic INCR, sent with the read of the previous window in one
pipeline (one round trip per request). Without Redis the two counters of a client are one small
record in a file of their own under DATA_DIR/ratelimit/ (shared by the processes of one machine,
like the file cache), read and rewritten in place under an exclusive `flock`: one open, one read
and one write per request. Going through the file cache instead cost about a fifth of a bot
request's CPU (a pickle, a temporary file and a rename per increment, and a directory listing
on every write to decide whether to cull; docs/benchmarks.md).

A cache that does not answer lets the request through: the limit protects the service, and
turning bots away because Redis blinked would lose more than it saves.
"""

import fcntl
import hashlib
import logging
import math
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.cache.backends.redis import RedisCache

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    # Seconds until a request would be allowed again (0 when allowed).
    retry_after: int


# A client's record: the window number it was last counted in, that window's count and the
# count of the window before it.
_RECORD = struct.Struct("<qqq")


def _counter_path(client_id: str) -> Path:
    # Hashed: a fixed-length, filesystem-safe name whatever the client id holds.
    name = hashlib.sha256(client_id.encode()).hexdigest()[:32]
    return Path(settings.DATA_DIR) / "ratelimit" / name


def _file_counts(client_id: str, window_number: int, decide) -> tuple[int, int, bool]:
    """Count one request in the client's record file and keep it only if `decide` allows.

    `decide(current, previous)` gets the counts with this request included. Returns them and the
    decision. The whole read-decide-write runs under the file's exclusive lock, so concurrent
    processes never lose an increment or overshoot.
    """
    path = _counter_path(client_id)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = os.pread(fd, _RECORD.size, 0)
        stored_window, stored_current, stored_previous = (
            _RECORD.unpack(data) if len(data) == _RECORD.size else (0, 0, 0)
        )
        if stored_window == window_number:
            current, previous = stored_current, stored_previous
        elif stored_window == window_number - 1:
            current, previous = 0, stored_current
        else:
            current, previous = 0, 0
        current += 1
        allowed = decide(current, previous)
        # Refused requests don't count, so a client that waits as told gets back in.
        kept = current if allowed else current - 1
        os.pwrite(fd, _RECORD.pack(window_number, kept, previous), 0)
        return current, previous, allowed
    finally:
        os.close(fd)  # releases the lock


def _redis_counts(current_key: str, previous_key: str, window: int) -> tuple[int, int]:
    """INCR the current window and read the previous one in one round trip to Redis.

    Goes under Django's cache API (to its redis-py client) because the cache API needs three
    round trips for the same; the keys are made exactly as the cache makes them, so
    `cache.decr` and `cache.get` see the same counters.
    """
    current_full = cache.make_and_validate_key(current_key)
    previous_full = cache.make_and_validate_key(previous_key)
    client = cache._cache.get_client(current_full, write=True)
    pipe = client.pipeline(transaction=False)
    pipe.incr(current_full)
    # Two windows' life, so the next window can still read this one as its previous.
    pipe.expire(current_full, 2 * window)
    pipe.get(previous_full)
    current, _, previous = pipe.execute()
    return int(current), int(previous or 0)


def _retry_after(*, limit: int, previous: int, current: int, elapsed: float, window: int) -> int:
    """Seconds until `previous * (1 - (elapsed + t) / W) + current + 1 <= limit`."""
    if current + 1 <= limit and previous > 0:
        wait = window - elapsed - (limit - 1 - current) * window / previous
    else:
        # The current window alone is full: wait for it to end, then for enough of it (now the
        # previous window) to slide out.
        wait = window - elapsed + max(0.0, window * (1 - (limit - 1) / max(current, 1)))
    return max(1, math.ceil(wait))


def hit(
    *, client_id: str, limit: int, now: float | None = None, window: int = WINDOW_SECONDS
) -> Decision:
    """Count one request for `client_id` and say whether it is within `limit` per `window`
    seconds (a minute unless said; a client id is counted over one window length only)."""
    if limit <= 0:
        return Decision(allowed=True, limit=limit, retry_after=0)
    now = time.time() if now is None else now
    window_number = int(now // window)
    elapsed = now - window_number * window
    current_key = f"ratelimit:{client_id}:{window_number}"
    previous_key = f"ratelimit:{client_id}:{window_number - 1}"

    def within(current: int, previous: int) -> bool:
        return previous * (window - elapsed) / window + current <= limit

    try:
        if isinstance(cache, RedisCache):
            current, previous = _redis_counts(current_key, previous_key, window)
            allowed = within(current, previous)
            if not allowed:
                # Refused requests don't count, so a client that waits as told gets back in.
                cache.decr(current_key)
        else:
            current, previous, allowed = _file_counts(client_id, window_number, within)
    except Exception as exc:  # the cache is down or evicted the key: fail open, say so
        logger.warning("rate limit not applied: counter error %s", type(exc).__name__)
        return Decision(allowed=True, limit=limit, retry_after=0)
    if allowed:
        return Decision(allowed=True, limit=limit, retry_after=0)
    return Decision(
        allowed=False,
        limit=limit,
        retry_after=_retry_after(
            limit=limit, previous=previous, current=current - 1, elapsed=elapsed, window=window
        ),
    )
