"""Per-API-key rate limit: a sliding window over the Django cache, shared by every web process.

The estimate for the last minute is `previous window x the part of it still inside the last 60 s
+ current window`, which smooths the burst a fixed window allows at its edges, at two cache keys
per client. Each request increments the current window first and takes the increment back if it
went over, so concurrent requests never overshoot the limit (at worst one is refused early).

With Redis the increment is Redis' atomic INCR, sent with the read of the previous window in one
pipeline (one round trip per request). The file cache's increment is a read and a write, so there
it runs under an exclusive `flock` (one machine, like the file cache itself).

A cache that does not answer lets the request through: the limit protects the service, and
turning bots away because Redis blinked would lose more than it saves.
"""

import fcntl
import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def _counter_lock() -> Iterator[None]:
    if isinstance(cache, RedisCache):
        yield  # INCR is atomic on the server
        return
    path = Path(settings.DATA_DIR) / "ratelimit.lock"
    with open(path, "a") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


def _redis_counts(current_key: str, previous_key: str) -> tuple[int, int]:
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
    pipe.expire(current_full, 2 * WINDOW_SECONDS)
    pipe.get(previous_full)
    current, _, previous = pipe.execute()
    return int(current), int(previous or 0)


def _retry_after(*, limit: int, previous: int, current: int, elapsed: float) -> int:
    """Seconds until `previous * (1 - (elapsed + t) / W) + current + 1 <= limit`."""
    window = WINDOW_SECONDS
    if current + 1 <= limit and previous > 0:
        wait = window - elapsed - (limit - 1 - current) * window / previous
    else:
        # The current window alone is full: wait for it to end, then for enough of it (now the
        # previous window) to slide out.
        wait = window - elapsed + max(0.0, window * (1 - (limit - 1) / max(current, 1)))
    return max(1, math.ceil(wait))


def hit(*, client_id: str, limit: int, now: float | None = None) -> Decision:
    """Count one request for `client_id` and say whether it is within `limit` per minute."""
    if limit <= 0:
        return Decision(allowed=True, limit=limit, retry_after=0)
    now = time.time() if now is None else now
    window_number = int(now // WINDOW_SECONDS)
    elapsed = now - window_number * WINDOW_SECONDS
    current_key = f"ratelimit:{client_id}:{window_number}"
    previous_key = f"ratelimit:{client_id}:{window_number - 1}"
    try:
        if isinstance(cache, RedisCache):
            current, previous = _redis_counts(current_key, previous_key)
        else:
            with _counter_lock():
                # Two windows' life, so the next window can still read this one as previous.
                cache.add(current_key, 0, timeout=2 * WINDOW_SECONDS)
                current = cache.incr(current_key)
                previous = cache.get(previous_key, 0)
        estimate = previous * (WINDOW_SECONDS - elapsed) / WINDOW_SECONDS + current
        if estimate <= limit:
            return Decision(allowed=True, limit=limit, retry_after=0)
        # Refused requests don't count, so a client that waits as told gets back in.
        cache.decr(current_key)
    except Exception as exc:  # the cache is down or evicted the key: fail open, say so
        logger.warning("rate limit not applied: cache error %s", type(exc).__name__)
        return Decision(allowed=True, limit=limit, retry_after=0)
    return Decision(
        allowed=False,
        limit=limit,
        retry_after=_retry_after(
            limit=limit, previous=previous, current=current - 1, elapsed=elapsed
        ),
    )
