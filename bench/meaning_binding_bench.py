"""What binding stored meanings to their row costs a turn: `repeats.repeat_flags` on 30 stored
meanings, before (bound to the column, read without a row) and after (bound to the record's id,
checked on every read), alternated in one process.

    DEBUG=1 .venv/bin/python bench/meaning_binding_bench.py --before <git revision>

The "before" code is `memory/conversations/repeats.py` as it was at that revision (read with
`git show`, loaded as its own module); the "after" is the working tree's. Three states a turn
meets: cold (no decoded meaning cached: a new process, or an evicted session), decoded (the
meanings decoded already, the verdicts not: /context of a new message), warm (verdicts known:
the exchange write after /context). Rows are given as SQLite selects them (32 hex digits) and
as PostgreSQL does (UUID objects). Medians of per-call wall time, and the after/before ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHRASES = [
    "Where am I?", "When is my daughter coming?", "What day is it?", "What time is it?",
    "Who are you?", "Where is my husband?", "I want to go home.", "Is it morning or night?",
    "What is this place?", "I don't know where I am.", "Have you seen my mother?",
    "When is my son coming to visit?", "I like a cup of tea in the garden.",
    "Did I take my tablets?", "Where did I put my glasses?", "Is it raining outside?",
    "Can we go for a walk?", "My feet are cold.", "Who was that at the door?",
    "What are we having for lunch?", "I need to feed the cat.", "Where's my handbag?",
    "Is my sister coming today?", "I used to work at the bakery.", "What's on the radio?",
    "I'm tired, can I lie down?", "Has the post come?", "When do we go to church?",
    "I don't like this room.", "Where are my keys?",
]  # fmt: skip
CURRENT = "Have you seen my coat anywhere?"


def _load_before(revision: str):
    source = subprocess.run(
        ["git", "show", f"{revision}:memory/conversations/repeats.py"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    path = Path(tempfile.mkdtemp()) / "repeats_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("repeats_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["repeats_before"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="git revision of the code before")
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
    os.environ.setdefault("DEBUG", "1")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from memory.conversations import meaning, repeats, repetition
    from memory.core import crypto

    before = _load_before(args.before)
    meanings = [meaning.analyse(text) for text in PHRASES]
    scope = repetition.scope_of(person_id=uuid.uuid4(), session_id=None)
    fingerprints = [repetition.stored_fingerprint(t, scope=scope) for t in PHRASES]
    qtypes = [repetition.question_type(t) for t in PHRASES]
    rows = [uuid.uuid4() for _ in PHRASES]
    old_rows = [
        (fp, qt, crypto.encrypt_bytes(meaning.to_stored(m), context=repeats.MEANING_CONTEXT))
        for fp, qt, m in zip(fingerprints, qtypes, meanings, strict=True)
    ]
    new_values = [repeats.to_db(m, row=r) for m, r in zip(meanings, rows, strict=True)]
    new_sqlite = [
        (fp, qt, v, r.hex)
        for fp, qt, v, r in zip(fingerprints, qtypes, new_values, rows, strict=True)
    ]
    new_pg = [
        (fp, qt, v, r) for fp, qt, v, r in zip(fingerprints, qtypes, new_values, rows, strict=True)
    ]
    variants = repetition.stored_variants(repetition.fingerprint(CURRENT), scope=scope)
    qtype = repetition.question_type(CURRENT)
    current = meaning.analyse(CURRENT)

    cases = {
        "before": (before, old_rows),
        "after (SQLite ids)": (repeats, new_sqlite),
        "after (PostgreSQL UUIDs)": (repeats, new_pg),
    }
    assert len({tuple(m.repeat_flags(variants=variants, question_type=qtype, meaning=current,
                                     earlier=e)) for m, e in cases.values()}) == 1  # fmt: skip
    times = {(name, state): [] for name in cases for state in ("cold", "decoded", "warm")}
    clock = time.perf_counter_ns
    for _ in range(args.rounds):
        for name, (module, earlier) in cases.items():  # alternated: the same load for each
            for state in ("cold", "decoded", "warm"):
                if state == "cold":
                    module._decrypted.cache_clear()
                if state != "warm":
                    current.verdicts.clear()
                t0 = clock()
                module.repeat_flags(
                    variants=variants, question_type=qtype, meaning=current, earlier=earlier
                )
                times[(name, state)].append(clock() - t0)

    print(f"repeat_flags on {len(PHRASES)} stored meanings, {args.rounds} rounds alternated; "
          f"load average {os.getloadavg()[0]:.2f} at the end")  # fmt: skip
    for state in ("cold", "decoded", "warm"):
        base = statistics.median(times[("before", state)])
        for name in cases:
            median = statistics.median(times[(name, state)])
            print(f"  {state:8} {name:26} median {median / 1e3:8.1f} µs  ×{median / base:.3f}")


if __name__ == "__main__":
    main()
