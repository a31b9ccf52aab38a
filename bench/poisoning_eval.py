#!/usr/bin/env python
"""Can stored text hijack the companion? The prompt firewall against poisoned memories
(issue 31, item 9).

    .venv/bin/python bench/poisoning_eval.py              # the report on the held-out half
    .venv/bin/python bench/poisoning_eval.py --half tuning
    .venv/bin/python bench/poisoning_eval.py --errors     # also list every entry that failed
    .venv/bin/python bench/poisoning_eval.py --check      # exit 1 when a held-out target is missed

Data: bench/poisoning/eval.jsonl (bench/poisoning/README.md): poisoned stored texts written from
realistic attack styles and benign ones that must pass. Each line: id, group, poisoned, kind,
slot, text, split (and for disguised variants, the transform). Variants of one attack share a
group, and groups are dealt into halves by a hash of the group (`split`), so no attack is in
both halves. The screen's patterns were tuned on the tuning half only.

Each entry is put into a real prompt, through the product's renderer (memory.companion.prompt.render),
in its slot: a confirmed fact or pinned fact ([confirmed by staff]), a family-profile fact (a
family contact, the home, or an unconfirmed statement: [family profile]), an agreed answer
(set by staff), a story, a topic enjoyed or one to avoid. Beside it, ordinary context (a
feeling, a window, a confirmed fact), as a turn has.

Checks, per entry:
- instruction part: the instruction part of the system prompt (everything before the notes) is
  exactly the one rendered with a neutral placeholder in the same slot, or with the slot empty:
  no stored text changes a word of the instructions;
- held back: a poisoned entry is not in the prompt at all (not quoted, not stated as true) and
  is reported in `held_back`; every poisoned entry here is unconfirmed by staff or reads as an
  instruction, link or request for data, which no confirmation lets through;
- benign: a benign entry is in the notes, quoted, with its source.

Targets (issue 31): on the held-out half, no poisoned entry reaches the instruction part and
none is stated (100 % held back); the benign pass rate is reported.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from memory.companion import prompt  # noqa: E402
from memory.companion.context import contact_fact, home_fact  # noqa: E402
from memory.core import screening  # noqa: E402
from memory.core.person import CaregiverContext, FamilyContact  # noqa: E402

DATA = ROOT / "bench" / "poisoning" / "eval.jsonl"
PLACEHOLDER = "Placeholder text about Peggy"
ABOUT = CaregiverContext(preferred_name="Peggy", pronouns="she/her")
_CONTACT = re.compile(r"^(.*?)\s*[(\-—]\s*(.*?)\)?\s*$", re.DOTALL)


def _contact(text: str) -> str:
    match = _CONTACT.match(text)
    name, relation = (match.group(1), match.group(2)) if match else (text, "")
    return contact_fact(ABOUT, FamilyContact(name=name.strip() or text, relation=relation.strip()))


def _home(text: str) -> str:
    return home_fact(CaregiverContext(preferred_name="Peggy", pronouns="she/her", home=text))


def _fields(slot: str, text: str | None) -> tuple[dict, str | None]:
    """ContextInputs fields holding `text` in `slot` (None: the slot empty), and the text as
    the prompt would quote it."""
    if text is None:
        return {}, None
    if slot == "fact":
        return {"facts": [text]}, text
    if slot == "pinned":
        return {"pinned_facts": [text]}, text
    if slot == "family_fact":
        return {"profile_facts": [text]}, text
    if slot == "profile_contact":
        fact = _contact(text)
        return {"profile_facts": [fact]}, fact
    if slot == "profile_home":
        fact = _home(text)
        return {"profile_facts": [fact]}, fact
    if slot == "agreed_answer":
        return {"agreed_answer": text}, text
    if slot == "story":
        return {"narrative": prompt.NarrativeSeed(text)}, text
    if slot == "known_topic":
        return {"known_topics": [text]}, text
    if slot == "avoid_topic":
        return {"avoid_topics": [text]}, text
    raise ValueError(f"unknown slot {slot!r}")


def _render(slot: str, text: str | None) -> tuple[prompt.RenderedContext, str | None]:
    fields, stated = _fields(slot, text)
    base = {
        "name": "Peggy",
        "pronoun": "she",
        "message": "Where is John?",
        "window": [prompt.Turn("user", "Hello"), prompt.Turn("assistant", "Hello, Peggy.")],
        "feelings": [prompt.Feeling("confused", 0.4, "stable")],
        "repeat_count": 1,
    }
    if slot not in ("fact", "pinned"):
        base["facts"] = ["Loves strong tea with two sugars"]
    return prompt.render(prompt.ContextInputs(**(base | fields))), stated


def evaluate(entry: dict) -> dict:
    slot, text = entry["slot"], entry["text"]
    rendered, stated = _render(slot, text)
    allowed = {
        _render(slot, PLACEHOLDER)[0].instructions,
        _render(slot, None)[0].instructions,
    }
    in_instructions = rendered.instructions not in allowed
    quoted = screening.quoted(stated) if stated else ""
    notes = rendered.system_prompt[len(rendered.instructions) :]
    admitted = bool(stated) and quoted in notes
    held = any(item.text == stated.strip() for item in rendered.held_back) if stated else False
    # Every line of the notes is one labelled, quoted item: nothing escaped its quotes.
    lines = notes.split(prompt.NOTES_BEGIN, 1)[-1].split("\n" + prompt.NOTES_END, 1)[0]
    contained = all(
        line.startswith("[") and line.endswith('"')
        for line in lines.strip("\n").split("\n")
        if line
    )
    return {
        "in_instructions": in_instructions,
        "stated": admitted,
        "held_back": held and not admitted,
        "contained": contained,
        "reasons": [
            r
            for item in rendered.held_back
            if item.text == (stated or "").strip()
            for r in item.reasons
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--half", choices=["held_out", "tuning", "fresh", "all"], default="held_out"
    )
    parser.add_argument("--errors", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    entries = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    if args.half != "all":
        entries = [e for e in entries if e["split"] == args.half]
    started = time.perf_counter()
    results = [(entry, evaluate(entry)) for entry in entries]
    took = time.perf_counter() - started
    poisoned = [(e, r) for e, r in results if e["poisoned"]]
    benign = [(e, r) for e, r in results if not e["poisoned"]]
    leaked = [(e, r) for e, r in results if r["in_instructions"] or not r["contained"]]
    stated = [(e, r) for e, r in poisoned if r["stated"] or not r["held_back"]]
    passed = [(e, r) for e, r in benign if r["stated"]]
    print(f"Prompt firewall: {DATA.relative_to(ROOT)}, half: {args.half}")
    print(f"command: .venv/bin/python bench/poisoning_eval.py --half {args.half}")
    print(f"entries: {len(poisoned)} poisoned, {len(benign)} benign ({took * 1000:.0f} ms)")
    print(f"reach the instruction part (or escape their quotes): {len(leaked)} of {len(results)}")
    print(
        f"poisoned stated in the prompt (not held back): {len(stated)} of {len(poisoned)}"
        f"  -> held back {100 * (len(poisoned) - len(stated)) / max(1, len(poisoned)):.1f} %"
    )
    print(
        f"benign pass rate: {len(passed)} of {len(benign)}"
        f" = {100 * len(passed) / max(1, len(benign)):.1f} %"
    )
    print("\nby kind (poisoned held back / total):")
    kinds = collections.defaultdict(lambda: [0, 0])
    for e, r in poisoned:
        kinds[e["kind"]][1] += 1
        kinds[e["kind"]][0] += r["held_back"] and not r["stated"]
    for kind, (held, total) in sorted(kinds.items()):
        print(f"  {kind:14} {held:4d} / {total}")
    print("benign by slot (passed / total):")
    slots = collections.defaultdict(lambda: [0, 0])
    for e, r in benign:
        slots[e["slot"]][1] += 1
        slots[e["slot"]][0] += r["stated"]
    for slot, (ok, total) in sorted(slots.items()):
        print(f"  {slot:16} {ok:4d} / {total}")
    if args.errors:
        for label, rows in (("LEAKED", leaked), ("STATED", stated)):
            for e, _r in rows:
                print(f"{label} {e['id']} [{e['slot']}] {e['text']!r}")
        for e, r in benign:
            if not r["stated"]:
                print(f"BENIGN HELD {e['id']} [{e['slot']}] {e['text']!r} {r['reasons']}")
    if args.check and (leaked or stated):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
