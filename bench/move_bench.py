"""How long `manage.py move_database` takes, for docs/deploy.md's downtime figure.

Builds a SQLite database from the demo (memory/demo.py), then grows its conversation tables to
--messages rows by copying the demo's messages (with their emotions) under new ids into new
sessions, keeping the stored ciphertext (the move copies it as it is, so its speed does not
depend on the words), then moves it into a new PostgreSQL database and prints the time per table
and in total. One run:

    DEBUG=1 .venv/bin/python bench/move_bench.py --messages 100000 \
        --postgres postgres://postgres@127.0.0.1:5432/postgres
"""

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent


def grow(path: Path, messages: int) -> int:
    db = sqlite3.connect(path)
    have = db.execute("SELECT count(*) FROM chat_messages").fetchone()[0]
    sessions = db.execute("SELECT * FROM sessions").fetchall()
    session_columns = [r[1] for r in db.execute("PRAGMA table_info(sessions)")]
    message_columns = [r[1] for r in db.execute("PRAGMA table_info(chat_messages)")]
    emotion_columns = [r[1] for r in db.execute("PRAGMA table_info(detected_emotions)")]
    sid = session_columns.index("id")
    copies = 0
    while have < messages:
        for session in sessions:
            new_session = uuid.uuid4().hex
            row = list(session)
            row[sid] = new_session
            db.execute(f"INSERT INTO sessions VALUES ({','.join('?' * len(row))})", row)
            rows = db.execute(
                "SELECT * FROM chat_messages WHERE session_id = ?", [session[sid]]
            ).fetchall()
            for message in rows:
                new = list(message)
                old_id = new[message_columns.index("id")]
                new[message_columns.index("id")] = uuid.uuid4().hex
                new[message_columns.index("session_id")] = new_session
                if new[message_columns.index("idempotency_key")]:
                    new[message_columns.index("idempotency_key")] += f"-{copies}"
                db.execute(f"INSERT INTO chat_messages VALUES ({','.join('?' * len(new))})", new)
                for emotion in db.execute(
                    "SELECT * FROM detected_emotions WHERE message_id = ?", [old_id]
                ).fetchall():
                    e = list(emotion)
                    e[emotion_columns.index("id")] = uuid.uuid4().hex
                    e[emotion_columns.index("message_id")] = new[message_columns.index("id")]
                    e[emotion_columns.index("session_id")] = new_session
                    db.execute(
                        f"INSERT INTO detected_emotions VALUES ({','.join('?' * len(e))})", e
                    )
                have += 1
            copies += 1
            if have >= messages:
                break
    db.commit()
    db.close()
    return have


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="clara-move-bench-"))
    env = {**os.environ, "DEBUG": "1", "CLARA_DATA_DIR": str(work), "DATABASE_URL": ""}
    env.pop("DATABASE_URL")
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True)
    subprocess.run([*manage, "load_demo"], env=env, check=True)
    total = grow(work / "clara.sqlite3", args.messages)
    name = f"clara_move_bench_{os.getpid()}"
    base = args.postgres.rsplit("/", 1)[0]
    with psycopg.connect(args.postgres, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        started = time.monotonic()
        subprocess.run([*manage, "move_database", "--to", f"{base}/{name}"], env=env, check=True)
        seconds = time.monotonic() - started
    finally:
        with psycopg.connect(args.postgres, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    size = (work / "clara.sqlite3").stat().st_size / 1e6
    print(f"messages {total}, SQLite file {size:.0f} MB: move_database took {seconds:.1f} s")


if __name__ == "__main__":
    main()
