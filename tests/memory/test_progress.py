"""Long operator commands' progress: a bar on a terminal, plain lines in a log."""

import io
import re

import pytest
from django.core.management import call_command

from memory.core.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_plain_lines_with_done_of_total_rate_and_time_left(monkeypatch):
    now = [0.0]
    monkeypatch.setattr("memory.core.progress.time.monotonic", lambda: now[0])
    lines: list[str] = []
    meter = Progress(desc="copying rows", total=1000, log=lines.append, file=io.StringIO())
    now[0] = 5.0
    meter.update(100)  # too soon for a line
    now[0] = 11.0
    meter.update(100)
    now[0] = 50.0
    meter.update(800)
    meter.close()
    assert lines == [
        "copying rows: 200/1000 (20.0%), 18 rows/s, about 44 s left",
        "copying rows: 1000/1000 (100.0%), 20 rows/s, done in 50 s",
    ]


def test_a_terminal_gets_a_bar_and_no_log_lines():
    lines: list[str] = []
    screen = Terminal()
    with Progress(desc="search columns", unit="scopes", log=lines.append, file=screen) as meter:
        meter.add_total(4)
        meter.update(4)
    assert lines == []
    assert re.search(r"search columns: 100%.*4/4", screen.getvalue())


def test_the_total_may_be_unknown():
    lines: list[str] = []
    with Progress(desc="rows", log=lines.append, file=io.StringIO()) as meter:
        meter.update(3)
    assert lines[-1].startswith("rows: 3, ")


@pytest.mark.django_db(transaction=True)
def test_backup_in_a_log_says_how_far_it_got(tmp_path):
    out = io.StringIO()
    call_command("backup", output=str(tmp_path / "copy.sqlite3"), stdout=out, stderr=io.StringIO())
    assert re.search(r"^backup: (\d+)/\1 \(100\.0%\), .*done in", out.getvalue(), re.M), (
        out.getvalue()
    )
