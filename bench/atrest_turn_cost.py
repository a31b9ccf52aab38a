#!/usr/bin/env python
"""What encryption alone costs one turn, in CPU time: the crypto calls `memory_query` and
`exchange_record` make, timed without the database around them (issue 15).

A `memory_query` of a session with W messages in its window opens W row-bound message values
(`enc:r1:`, each compared with its row), the person's caregiver context (JSON, row-bound) and
their display name (AES-SIV); an exchange seals two messages and a repetition record's original
message bound to their rows. This times exactly those calls on values shaped like the demo's
(58-character messages), against the same calls on plaintext (what the code does with a value
that has no prefix), alternating the two in rounds so load drifts hit both alike.

    .venv/bin/python bench/atrest_turn_cost.py --window 30 --rounds 2000
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
    ring.decrypt_bound(name, context="people.display_name")
    for _ in range(2):
        if values[0].startswith(crypto.PREFIXES):
            ring.encrypt(MESSAGE, context="chat_messages.content", row=rows[0])
    if values[0].startswith(crypto.PREFIXES):
        ring.encrypt(MESSAGE, context="repetition_tracking.original_message", row=person)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=int, default=30, help="messages opened per query")
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    ring = crypto.keyring()
    person = str(uuid.uuid4())
    rows = [str(uuid.uuid4()) for _ in range(args.window)]
    sealed = (
        [ring.encrypt(MESSAGE, context="chat_messages.content", row=r) for r in rows],
        ring.seal_lookup("Peggy Hughes", context="people.display_name"),
        ring.encrypt(json.dumps(CONTEXT), context="people.caregiver_context", row=person),
    )
    plain = ([MESSAGE] * args.window, "Peggy Hughes", json.dumps(CONTEXT))
    times = {"encrypted": [], "plaintext": []}
    clock = time.thread_time_ns
    for _ in range(args.rounds):
        for label, data in (("encrypted", sealed), ("plaintext", plain)):
            start = clock()
            turn(*data, person=person, rows=rows)
            times[label].append(clock() - start)
    med = {k: statistics.median(v) / 1e6 for k, v in times.items()}
    print(f"load average {os.getloadavg()[0]:.2f}; window {args.window}; {args.rounds} rounds")
    print(
        f"| CPU ms per turn, median | encrypted {med['encrypted']:.4f} |"
        f" plaintext {med['plaintext']:.4f} | encryption's cost {med['encrypted'] - med['plaintext']:.4f} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
