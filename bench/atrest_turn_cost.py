#!/usr/bin/env python
"""What encryption alone costs one turn, in CPU time: the crypto calls `memory_query` and
`exchange_record` make, timed without the database around them (issue 15).

A `memory_query` of a session with W messages in its window opens W row-bound message values
(`enc:r1:`, each compared with its row), the person's caregiver context (JSON, row-bound) and
their display name (AES-SIV); an exchange seals two messages and a repetition record's original
message bound to their rows. This times exactly those calls on values shaped like the demo's
(58-character messages), against the same calls on plaintext (what the code does with a value
that has no prefix), alternating the two in rounds so load drifts hit both alike.

The name is timed in both forms, alternated in the same rounds: sealed deterministically for
lookups (AES-SIV, `enc:d1:`, as stored before issue 15 round four) and bound to the person's row
(`enc:r1:`, opened and row-checked, as stored now). `--cold` empties the keyring's cache of
opened values before every turn (a session's first turn in a process); without it, every turn
after the first finds its values opened already (later turns).

    .venv/bin/python bench/atrest_turn_cost.py --window 30 --rounds 2000
    .venv/bin/python bench/atrest_turn_cost.py --window 30 --rounds 2000 --cold
"""

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("SECRET_KEY", "bench")
os.environ.setdefault("CLARA_ENCRYPTION_KEYS", "YmVuY2gtb25seS1rZXktbm90LWZvci1yZWFsLWRhdGE")

import django  # noqa: E402

django.setup()

from memory.core import crypto  # noqa: E402
from memory.core.fields import row_text  # noqa: E402

MESSAGE = "Where is my husband Frank? He said he would be back by four."
CONTEXT = {"preferredName": "Peggy", "pronouns": "she", "knownTopics": ["roses", "Margate"]}


def turn(values, name, context_value, *, person: str, rows: list[str]) -> None:
    """The crypto of one memory_query and one exchange_record, as the per-turn code calls it."""
    ring = crypto.keyring()
    for value, row in zip(values, rows, strict=True):
        plain, bound = ring.decrypt_bound(value, context="chat_messages.content")
        crypto.check_row(bound, row_text(row), context="chat_messages.content")
    plain, bound = ring.decrypt_bound(context_value, context="people.caregiver_context")
    crypto.check_row(bound, person, context="people.caregiver_context")
    if crypto.is_encrypted(plain) or plain.startswith("{"):
        json.loads(plain)
    plain, bound = ring.decrypt_bound(name, context="people.display_name")
    crypto.check_row(bound, person, context="people.display_name")
    for _ in range(2):
        if values[0].startswith(crypto.PREFIXES):
            ring.encrypt(MESSAGE, context="chat_messages.content", row=rows[0])
    if values[0].startswith(crypto.PREFIXES):
        ring.encrypt(MESSAGE, context="repetition_tracking.original_message", row=person)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=int, default=30, help="messages opened per query")
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument(
        "--cold", action="store_true", help="empty the cache of opened values before each turn"
    )
    args = parser.parse_args()
    ring = crypto.keyring()
    person = str(uuid.uuid4())
    rows = [str(uuid.uuid4()) for _ in range(args.window)]
    messages = [ring.encrypt(MESSAGE, context="chat_messages.content", row=r) for r in rows]
    context = ring.encrypt(json.dumps(CONTEXT), context="people.caregiver_context", row=person)
    variants = {
        "name d1 (before)": (
            messages,
            ring.seal_lookup("Peggy Hughes", context="people.display_name"),
            context,
        ),
        "name r1 (after)": (
            messages,
            ring.encrypt("Peggy Hughes", context="people.display_name", row=person),
            context,
        ),
        "plaintext": ([MESSAGE] * args.window, "Peggy Hughes", json.dumps(CONTEXT)),
    }
    names = {label: data[1] for label, data in variants.items() if label != "plaintext"}
    times = {label: [] for label in variants}
    name_times = {label: [] for label in names}
    clock = time.thread_time_ns
    for _ in range(args.rounds):
        for label, data in variants.items():
            if args.cold:
                ring._open.cache_clear()
            start = clock()
            turn(*data, person=person, rows=rows)
            times[label].append(clock() - start)
    # The name alone, cold (opened, then checked against its row), both forms alternated.
    for _ in range(args.rounds):
        for label, name in names.items():
            ring._open.cache_clear()
            start = clock()
            _, bound = ring.decrypt_bound(name, context="people.display_name")
            crypto.check_row(bound, person, context="people.display_name")
            name_times[label].append(clock() - start)
    med = {k: statistics.median(v) / 1e6 for k, v in times.items()}
    plain = med["plaintext"]
    print(
        f"load average {os.getloadavg()[0]:.2f}; window {args.window}; {args.rounds} rounds; "
        f"{'cold' if args.cold else 'warm'} cache"
    )
    print("| CPU ms per turn, median | turn | encryption's cost (turn - plaintext) |")
    for label, value in med.items():
        print(f"| {label} | {value:.4f} | {value - plain:.4f} |")
    for label, values in name_times.items():
        print(f"| the name alone, cold, {label} | {statistics.median(values) / 1e3:.2f} µs | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
