"""Progress of a long operator command: done of total, rate and time left.

On a terminal it is a tqdm bar, redrawn in place. Anywhere else (a log, a pipe, cron, systemd) a
plain line every `interval` seconds and one at the end, so a log shows how far the command got
without one line per row:

    copying rows: 120000/1556913 (7.7%), 10432 rows/s, about 2 min 18 s left

A command makes one with `for_command(self, ...)`; services take any `Progress` (or None) and
only call `update`, `add_total` and `close`.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import IO


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


class Progress:
    """Counts work done against a total (which may grow, or be unknown: None)."""

    def __init__(
        self,
        *,
        desc: str,
        total: int | None = None,
        unit: str = "rows",
        log: Callable[[str], None] | None = None,
        file: IO[str] | None = None,
        interval: float = 10.0,
        tty: bool | None = None,
    ) -> None:
        self.desc = desc
        self.total = total
        self.unit = unit
        self.done = 0
        self.interval = interval
        self.started = time.monotonic()
        self._last_line = self.started
        self._closed = False
        self._lock = threading.Lock()  # the demo load plays people in threads
        self._logged_done = -1
        file = file if file is not None else sys.stderr
        self._log = log or (lambda line: print(line, file=file, flush=True))
        self._bar = None
        if tty if tty is not None else _isatty(file):
            from tqdm import tqdm

            self._bar = tqdm(
                total=total, desc=desc, unit=f" {unit}", file=file, dynamic_ncols=True, leave=True
            )

    def add_total(self, n: int) -> None:
        """More work found (a table counted): the total grows by `n`."""
        self.total = (self.total or 0) + n
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
            if self._bar is not None:
                self._bar.update(n)
                return
            now = time.monotonic()
            if now - self._last_line < self.interval:
                return
            self._last_line = now
            self._logged_done = self.done
            line = self.line(now)
        self._log(line)

    def line(self, now: float | None = None) -> str:
        """The plain line: done of total, rate, time left."""
        elapsed = max((now or time.monotonic()) - self.started, 1e-9)
        rate = self.done / elapsed
        parts = [f"{self.desc}: {self.done}"]
        if self.total:
            parts[0] += f"/{self.total} ({100 * self.done / self.total:.1f}%)"
        parts.append(f"{rate:.0f} {self.unit}/s")
        if self.total and rate > 0 and self.done < self.total:
            parts.append(f"about {_duration((self.total - self.done) / rate)} left")
        elif self.total and self.done >= self.total:
            parts.append(f"done in {_duration(elapsed)}")
        return ", ".join(parts)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self._logged_done != self.done:  # the last line said it all already
            self._log(self.line())

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _isatty(file) -> bool:
    isatty = getattr(file, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed file
        return False


def for_command(command, *, desc: str, total: int | None = None, unit: str = "rows") -> Progress:
    """A `Progress` on a management command's output (a bar on a terminal, else log lines)."""
    out = getattr(command.stdout, "_out", command.stdout)
    return Progress(desc=desc, total=total, unit=unit, log=command.stdout.write, file=out)
