#!/usr/bin/env python
"""Alarm noise: how many false urgent alerts the demo month would raise (issue 28).

    .venv/bin/python bench/urgent_noise.py            # the demo's default plan (seed 7)
    .venv/bin/python bench/urgent_noise.py --seeds 1,2,3,4,5,6,7

The demo (memory/demo.py) is four weeks of everyday conversations of four people, with exactly
one moment scripted to need a person (a frightened evening). Every other message is ordinary
talk of a person living with dementia: questions asked again and again, "I need to go home",
"I can't find my glasses", missing someone, a stiff knee. Each message is read by the
recogniser as /context reads it; an alert is raised once per session (its first flag), so a
false alert is a session with a flag whose only flags are on messages the demo did not script
as urgent. Target: at most one false urgent alert per person-week.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from memory import demo  # noqa: E402
from memory.conversations.urgency import recognise  # noqa: E402

TARGET_PER_PERSON_WEEK = 1.0
SCRIPTED = {demo.FEARFUL_LINE, demo.STILL_FEARFUL_LINE}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="7", help="demo seeds (comma-separated)")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    worst = 0.0
    for seed in (int(s) for s in args.seeds.split(",")):
        plan = demo.build_plan(seed=seed, now=datetime(2026, 11, 28, 12, tzinfo=UTC))
        weeks = (
            max(s.started_at for s in plan.sessions) - min(s.started_at for s in plan.sessions)
        ).days / 7
        person_weeks = len(plan.people) * max(weeks, 1 / 7)
        false_sessions, true_sessions = 0, 0
        flagged_lines: collections.Counter = collections.Counter()
        messages = 0
        for session in plan.sessions:
            flags = []
            for exchange in session.exchanges:
                messages += 1
                verdict = recognise(exchange.person_message)
                if verdict.urgent:
                    flags.append(exchange.person_message)
                    if exchange.person_message not in SCRIPTED:
                        flagged_lines[(exchange.person_message, verdict.reason)] += 1
            if flags:
                if any(line in SCRIPTED for line in flags):
                    true_sessions += 1
                else:
                    false_sessions += 1
        rate = false_sessions / person_weeks
        worst = max(worst, rate)
        print(
            f"seed {seed}: {messages} messages of the person, {len(plan.sessions)} sessions, "
            f"{person_weeks:.1f} person-weeks; scripted urgent sessions flagged {true_sessions}; "
            f"false urgent alerts {false_sessions} = {rate:.2f} per person-week"
        )
        for (line, reason), count in flagged_lines.most_common():
            print(f"  flagged {count}x as {reason}: {line!r}")
    met = worst <= TARGET_PER_PERSON_WEEK
    print(
        f"\nworst {worst:.2f} false alerts per person-week (target <= {TARGET_PER_PERSON_WEEK}): "
        f"{'met' if met else 'MISSED'}"
    )
    return 0 if met or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
