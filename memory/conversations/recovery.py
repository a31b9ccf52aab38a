"""The recovery log: exchanges the database refused, kept on disk until they can be stored.

An append-only JSON-lines file under data/. Every append is fsynced before the API answers 202,
so an acknowledged exchange survives a crash. Appends and replays take an exclusive `flock` on a
side file, which serialises them across web workers and processes on one machine. A replay stores
each entry through the normal exchange service with its idempotency key, so replaying twice, or
replaying an exchange that a client retry already stored, stores nothing twice. Both messages are
redacted (`memory.core.sensitive`) before they are written: a secret never reaches the file either;
and encrypted with the database's keys (`memory.core.crypto`), so the file holds no plaintext.

Each web process replays its own machine's log (`start_replayer`, started by gunicorn's
`post_worker_init` hook in clara/gunicorn.py and again whenever an exchange is appended): a daemon
thread looks at the file every CLARA_RECOVERY_REPLAY_SECONDS and replays it when it holds
anything. The machine needs no timer of its own, and no worker needs to reach its disk. The
processes of one machine share the file; the lock makes one of them replay, and the others then
find it empty.
"""

import dataclasses
import fcntl
import json
import logging
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError

from memory.conversations.emotion import EmotionReading
from memory.core import crypto
from memory.core.errors import DomainError
from memory.core.sensitive import redact_text

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
# Free text the person or the companion wrote: redacted before it touches the disk.
_FREE_TEXT = ("user_message", "assistant_message")


@dataclass(frozen=True)
class ReplayReport:
    stored: int
    already_stored: int
    remaining: int
    rejected: int


def log_path() -> Path:
    return Path(settings.CLARA_RECOVERY_LOG)


def _rejected_path() -> Path:
    path = log_path()
    return path.with_name(path.stem + ".rejected" + path.suffix)


@contextmanager
def _locked() -> Iterator[None]:
    path = log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _encode(fields: dict[str, Any]) -> str:
    entry: dict[str, Any] = {"version": FORMAT_VERSION}
    for name, value in fields.items():
        if name in _FREE_TEXT and isinstance(value, str):
            # Redacted, then encrypted like the message columns: the file holds no plaintext.
            value = crypto.encrypt(redact_text(value))
        elif dataclasses.is_dataclass(value):
            value = dataclasses.asdict(value)
        elif isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, uuid.UUID):
            value = str(value)
        entry[name] = value
    return json.dumps(entry, ensure_ascii=False, sort_keys=True)


def _decode(line: str) -> dict[str, Any]:
    from memory.conversations.services import NarrativeRef  # services imports this module

    entry = json.loads(line)
    entry.pop("version", None)
    for name in _FREE_TEXT:
        # Entries written before encryption are plain text and read as they are.
        if crypto.is_encrypted(entry.get(name)):
            entry[name] = crypto.decrypt(entry[name])
    entry["session_id"] = uuid.UUID(entry["session_id"])
    if entry.get("organisation_id"):
        # Replayed into the organisation whose key sent it (older entries: the default one).
        entry["organisation_id"] = uuid.UUID(entry["organisation_id"])
    entry["at"] = datetime.fromisoformat(entry["at"])
    if entry.get("emotion"):
        entry["emotion"] = EmotionReading(**entry["emotion"])
    if entry.get("narrative"):
        entry["narrative"] = NarrativeRef(**entry["narrative"])
    return entry


def append(fields: dict[str, Any]) -> None:
    """Append one exchange and fsync it; returns only once it is on disk."""
    line = _encode(fields) + "\n"
    path = log_path()
    with _locked():
        is_new = not path.exists()
        with open(path, "a", encoding="utf-8") as log:
            log.write(line)
            log.flush()
            os.fsync(log.fileno())
        if is_new:
            _fsync_dir(path.parent)


def pending_count() -> int:
    """Entries waiting to be replayed (for health checks and the replay command)."""
    path = log_path()
    if not path.exists():
        return 0
    with open(path, encoding="utf-8") as log:
        return sum(1 for line in log if line.strip())


def _rewrite(path: Path, lines: list[str]) -> None:
    if not lines:
        path.unlink(missing_ok=True)
        _fsync_dir(path.parent)
        return
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        out.writelines(lines)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _reject(lines: list[str]) -> None:
    with open(_rejected_path(), "a", encoding="utf-8") as out:
        out.writelines(lines)
        out.flush()
        os.fsync(out.fileno())


# Entries stored per transaction on replay: one commit for many, so a long outage's backlog
# is stored quickly.
REPLAY_BATCH = 100


def replay(record_many: Callable[[list[dict[str, Any]]], list[Any]]) -> ReplayReport:
    """Feed the logged exchanges to `record_many` (the batch exchange service), in logged order.

    Batches the database still refuses stay in the log for the next replay. Entries that can
    never be stored (unreadable, or refused as invalid) move to the `.rejected` file beside it,
    with a warning, rather than block the ones after them.
    """
    path = log_path()
    stored = already = 0
    keep: list[str] = []
    rejected: list[str] = []
    with _locked():
        if not path.exists():
            return ReplayReport(0, 0, 0, 0)
        with open(path, encoding="utf-8") as log:
            lines = [line if line.endswith("\n") else line + "\n" for line in log if line.strip()]
        readable: list[tuple[str, dict[str, Any]]] = []
        for line in lines:
            try:
                readable.append((line, _decode(line)))
            except (ValueError, KeyError, TypeError):
                logger.warning("recovery log: unreadable entry moved aside")
                rejected.append(line)
        for start in range(0, len(readable), REPLAY_BATCH):
            batch = readable[start : start + REPLAY_BATCH]
            try:
                results = record_many([fields for _, fields in batch])
            except DatabaseError:
                keep.extend(line for line, _ in batch)
                continue
            for (line, _), result in zip(batch, results, strict=True):
                if isinstance(result, DomainError):
                    logger.warning(
                        "recovery log: entry refused (%s) and moved aside", result.detail
                    )
                    rejected.append(line)
                elif result.created:
                    stored += 1
                else:
                    already += 1
        if rejected:
            _reject(rejected)
        _rewrite(path, keep)
    return ReplayReport(
        stored=stored, already_stored=already, remaining=len(keep), rejected=len(rejected)
    )


# --- Replayed by the web process itself -------------------------------------------------------

_replayer_pid: int | None = None
_replayer_lock = threading.Lock()


def has_pending() -> bool:
    """Cheap: whether the log has anything in it (one stat, no read, no lock)."""
    try:
        return log_path().stat().st_size > 0
    except FileNotFoundError:
        return False


def start_replayer(replay_now: Callable[[], ReplayReport]) -> bool:
    """Start this process's replay thread, once per process (a forked child starts its own).

    `replay_now` is the replay service (services.recovery_replay). Returns whether a thread
    was started by this call.
    """
    global _replayer_pid
    interval = float(settings.CLARA_RECOVERY_REPLAY_SECONDS)
    if interval <= 0 or _replayer_pid == os.getpid():
        return False
    with _replayer_lock:
        if _replayer_pid == os.getpid():
            return False
        _replayer_pid = os.getpid()
    thread = threading.Thread(
        target=_replay_forever, args=(replay_now, interval), name="clara-recovery", daemon=True
    )
    thread.start()
    return True


def _replay_forever(replay_now: Callable[[], ReplayReport], interval: float) -> None:
    from django.db import connection

    while True:
        # Jittered, so a machine's processes do not all wake at the same moment.
        time.sleep(interval * random.uniform(0.75, 1.25))
        if not has_pending():
            continue
        try:
            report = replay_now()
        except Exception as exc:  # noqa: BLE001 - the thread must outlive any one failure
            logger.warning("recovery log: replay failed: %s", type(exc).__name__)
        else:
            if report.stored or report.rejected:
                logger.info(
                    "recovery log: stored %d, already stored %d, waiting %d, set aside %d",
                    report.stored,
                    report.already_stored,
                    report.remaining,
                    report.rejected,
                )
        finally:
            # The thread's own connection: not held between replays.
            connection.close()
