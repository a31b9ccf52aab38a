#!/usr/bin/env python
"""How well does the memory recognise an urgent moment, in the words and the language the
person really uses? (issue 28)

    .venv/bin/python bench/urgent_eval.py             # the report on the held-out half
    .venv/bin/python bench/urgent_eval.py --fit       # choose THRESHOLD and PHRASE_VETO on the tuning half
    .venv/bin/python bench/urgent_eval.py --check     # exit 1 when a held-out target is missed
    .venv/bin/python bench/urgent_eval.py --slice --check   # the fixed slice `make test` runs
    .venv/bin/python bench/urgent_eval.py --errors    # also list what the recogniser got wrong

Data: bench/urgent/eval/<lang>.jsonl, everyday utterances written for evaluation only (never
shipped, never read by the product, written apart from the examples and phrases the recogniser
is built from: memory/data/urgent/). Each line: text, urgent, reason, style, lang, and for calm
lines the kind of hard negative.

Split: each language's lines, urgent and calm apart, ordered by a hash of the text and dealt
alternately into a tuning half and a held-out half. `--fit` reads the tuning half only; every
figure the report prints is on the held-out half (or, with --half tuning, on the tuning half).
The slice (`--slice`) is every third held-out line: what `make test` runs with --check
(tests/memory/conversations/test_urgency_eval.py), against the floors in
bench/urgent/floors.json (the slice's figures when they were recorded: a change that lowers
recall on it fails the tests; `--record-floors` writes them anew).

The recogniser is the product's (memory.conversations.urgency.recognise), run as /context runs
it: on the text alone, with no emotion reading from a bot.

Targets on the held-out half (issue 28): English recall >= 0.97 at precision >= 0.90 and every
reason's recall >= 0.95; every other language recall >= 0.90 at precision >= 0.85.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from memory.conversations.urgency import (  # noqa: E402
    examples,
    heads,
    language,
    phrases,
    reasons,
    recogniser,
)
from memory.conversations.urgency.text import normalise  # noqa: E402

EVAL_DIR = ROOT / "bench" / "urgent" / "eval"
FLOORS = ROOT / "bench" / "urgent" / "floors.json"
ENGLISH_TARGET = {"recall": 0.97, "precision": 0.90, "reason_recall": 0.95}
OTHER_TARGET = {"recall": 0.90, "precision": 0.85}


def load() -> list[dict]:
    rows = []
    for path in sorted(EVAL_DIR.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append(json.loads(line))
    return rows


def split(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(tuning, held_out): per language and label, by a hash of the text, dealt alternately."""
    groups: dict[tuple, list[dict]] = collections.defaultdict(list)
    for row in rows:
        groups[(row["lang"], bool(row["urgent"]))].append(row)
    tuning, held = [], []
    for key in sorted(groups):
        ordered = sorted(groups[key], key=lambda r: hashlib.sha256(r["text"].encode()).hexdigest())
        for index, row in enumerate(ordered):
            (tuning if index % 2 == 0 else held).append(row)
    return tuning, held


def the_slice(held: list[dict]) -> list[dict]:
    return held[::3]


# ---- scoring -----------------------------------------------------------------------------


def measures(rows: list[dict], flagged: list[bool]) -> dict:
    tp = sum(1 for r, f in zip(rows, flagged, strict=True) if f and r["urgent"])
    fp = sum(1 for r, f in zip(rows, flagged, strict=True) if f and not r["urgent"])
    urgent = sum(1 for r in rows if r["urgent"])
    return {
        "n": len(rows),
        "urgent": urgent,
        "tp": tp,
        "fp": fp,
        "recall": tp / urgent if urgent else 1.0,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
    }


def _fmt(m: dict) -> str:
    return (
        f"recall {m['recall']:.3f} ({m['tp']}/{m['urgent']}) · precision {m['precision']:.3f}"
        f" ({m['fp']} false of {m['tp'] + m['fp']} flags) · n={m['n']}"
    )


def report(rows: list[dict], verdicts: list, *, errors: bool = False) -> dict:
    flagged = [v.urgent for v in verdicts]
    out: dict = {"languages": {}, "reasons": {}, "styles": {}}
    by_lang = collections.defaultdict(list)
    for i, row in enumerate(rows):
        by_lang[row["lang"]].append(i)
    print("\n## By language")
    for lang in sorted(by_lang, key=lambda c: (c != "en", c)):
        idx = by_lang[lang]
        m = measures([rows[i] for i in idx], [flagged[i] for i in idx])
        said = sum(
            1
            for i in idx
            if rows[i]["urgent"] and verdicts[i].urgent and verdicts[i].language == lang
        )
        m["language_named"] = said / m["tp"] if m["tp"] else 1.0
        out["languages"][lang] = m
        print(
            f"- {lang} {language.NAMES.get(lang, lang)}: {_fmt(m)} · language named right "
            f"on {m['language_named']:.2f} of its flags"
        )
    english = [i for i in by_lang.get("en", [])]
    print("\n## English, by reason (recall; reason named right)")
    for reason in reasons.ORDER:
        idx = [i for i in english if rows[i]["urgent"] and rows[i]["reason"] == reason]
        if not idx:
            continue
        hit = sum(1 for i in idx if flagged[i])
        right = sum(1 for i in idx if flagged[i] and verdicts[i].reason == reason)
        out["reasons"][reason] = {"n": len(idx), "recall": hit / len(idx)}
        print(f"- {reason}: {hit / len(idx):.3f} ({hit}/{len(idx)}); reason right {right}/{hit}")
    print("\n## English, by style (recall on urgent; false alarms on calm)")
    styles = sorted({rows[i].get("style", "?") for i in english})
    for style in styles:
        urgent = [i for i in english if rows[i]["urgent"] and rows[i].get("style") == style]
        calm = [i for i in english if not rows[i]["urgent"] and rows[i].get("style") == style]
        hit = sum(1 for i in urgent if flagged[i])
        false = sum(1 for i in calm if flagged[i])
        out["styles"][style] = {"recall": hit / len(urgent) if urgent else None}
        print(f"- {style}: recall {hit}/{len(urgent)} · false alarms {false}/{len(calm)}")
    print("\n## Calm messages flagged, by kind of hard negative (all languages)")
    kinds = collections.Counter(
        rows[i].get("negative") for i in range(len(rows)) if not rows[i]["urgent"]
    )
    for kind, total in sorted(kinds.items(), key=lambda item: str(item[0])):
        false = sum(
            1
            for i in range(len(rows))
            if not rows[i]["urgent"] and rows[i].get("negative") == kind and flagged[i]
        )
        print(f"- {kind}: {false}/{total}")
    sources = collections.Counter(v.source for v in verdicts if v.urgent)
    print(f"\nFlags by source: {dict(sources)}")
    other = [i for i in range(len(rows)) if rows[i]["lang"] != "en"]
    out["english"] = measures([rows[i] for i in english], [flagged[i] for i in english])
    out["other"] = measures([rows[i] for i in other], [flagged[i] for i in other])
    print(f"\nEnglish: {_fmt(out['english'])}")
    print(f"Other languages pooled: {_fmt(out['other'])}")
    if errors:
        print("\n## Errors")
        for row, verdict in zip(rows, verdicts, strict=True):
            if verdict.urgent != bool(row["urgent"]):
                kind = "MISSED" if row["urgent"] else "FALSE"
                why = verdict.rule or (verdict.example and f"~ {verdict.example}") or ""
                print(
                    f"{kind} [{row['lang']} {row.get('reason') or row.get('negative')} "
                    f"{row.get('style')}] {row['text']!r} {why}"
                )
    return out


def misses(out: dict, *, floors: dict | None = None) -> list[str]:
    problems = []
    english = out["languages"].get("en")
    if english:
        if english["recall"] < ENGLISH_TARGET["recall"]:
            problems.append(f"English recall {english['recall']:.3f} < {ENGLISH_TARGET['recall']}")
        if english["precision"] < ENGLISH_TARGET["precision"]:
            problems.append(
                f"English precision {english['precision']:.3f} < {ENGLISH_TARGET['precision']}"
            )
        for reason, m in out["reasons"].items():
            if m["recall"] < ENGLISH_TARGET["reason_recall"]:
                problems.append(f"English {reason} recall {m['recall']:.3f} < 0.95")
    for lang, m in out["languages"].items():
        if lang == "en":
            continue
        if m["recall"] < OTHER_TARGET["recall"]:
            problems.append(f"{lang} recall {m['recall']:.3f} < {OTHER_TARGET['recall']}")
        if m["precision"] < OTHER_TARGET["precision"]:
            problems.append(f"{lang} precision {m['precision']:.3f} < {OTHER_TARGET['precision']}")
    return problems


def floor_misses(out: dict, floors: dict) -> list[str]:
    problems = []
    for lang, floor in floors.get("languages", {}).items():
        m = out["languages"].get(lang)
        if m is None:
            problems.append(f"{lang}: no evaluation lines")
            continue
        # The floors are kept to 4 places: compare the figures as recorded.
        if round(m["recall"], 4) < floor["recall"]:
            problems.append(f"{lang} recall {m['recall']:.3f} fell below {floor['recall']:.3f}")
        if round(m["precision"], 4) < floor["precision"]:
            problems.append(
                f"{lang} precision {m['precision']:.3f} fell below {floor['precision']:.3f}"
            )
    return problems


# ---- fitting -----------------------------------------------------------------------------


def _fit_inputs(rows: list[dict]) -> tuple[dict, list]:
    """Each row's probability of urgent per space and its phrase hit, kept in bench/results/
    per version of the readers (computing them is most of --fit's time)."""
    texts = [row["text"] for row in rows]
    said = [language.identify(t) for t in texts]
    hits = [
        phrases.search(normalise(t), prefer=s.code, languages=s.candidates)
        for t, s in zip(texts, said, strict=True)
    ]
    # The weights themselves, not only the examples they were fitted on: a reader fitted anew
    # on the same examples (another C) must not be read from an older reader's cache.
    weights = hashlib.sha256(heads.HEADS.read_bytes()).hexdigest()
    key = hashlib.sha256(("|".join(texts) + weights + "v3").encode()).hexdigest()[:16]
    cache = ROOT / "bench" / "results" / f"urgent_fit_{key}.npz"
    if cache.exists():
        return dict(np.load(cache)), hits
    probability = {space: np.full(len(rows), np.nan) for space in examples.SPACES}
    for space in examples.SPACES:
        probability[f"{space}_reason"] = np.full(len(rows), "", dtype=object)
    for i, (text, s) in enumerate(zip(texts, said, strict=True)):
        for meaning in recogniser.meaning_in(text, recogniser.spaces_for(s, normalise(text))):
            probability[meaning.reading.space][i] = meaning.reading.urgent
            probability[f"{meaning.reading.space}_reason"][i] = meaning.reading.reason
    for space in examples.SPACES:
        probability[f"{space}_reason"] = probability[f"{space}_reason"].astype(str)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **probability)
    return probability, hits


NOISE_SEEDS = (7, 1, 2)
NOISE_TARGET = 1.0  # false urgent alerts per person-week on the demo month (bench/urgent_noise.py)


def _demo_month() -> tuple[list[str], list[list[int]], set[int], float]:
    """The demo month's person messages (unique), each session's messages as indexes, which
    are scripted urgent, and the person-weeks: what --fit keeps alarm noise within."""
    from datetime import UTC, datetime

    from memory import demo

    scripted_lines = {demo.FEARFUL_LINE, demo.STILL_FEARFUL_LINE}
    lines: dict[str, int] = {}
    sessions: list[list[int]] = []
    person_weeks = 0.0
    for seed in NOISE_SEEDS:
        plan = demo.build_plan(seed=seed, now=datetime(2026, 11, 28, 12, tzinfo=UTC))
        started = [session.started_at for session in plan.sessions]
        person_weeks += len(plan.people) * max((max(started) - min(started)).days / 7, 1 / 7)
        for session in plan.sessions:
            sessions.append(
                [lines.setdefault(e.person_message, len(lines)) for e in session.exchanges]
            )
    scripted = {lines[line] for line in scripted_lines if line in lines}
    return list(lines), sessions, scripted, person_weeks / len(NOISE_SEEDS)


def fit(rows: list[dict]) -> None:
    """THRESHOLD per space and PHRASE_VETO, on `rows` (the tuning half): the highest recall
    (English overall, its weakest reason, and every other language) among the settings that keep
    every language at its precision target and the demo month within its alarm noise (at most
    one false urgent alert per person-week); ties to the higher precision. Printed for
    recogniser.py."""
    probability, hits = _fit_inputs(rows)
    best_p = np.fmax(probability[examples.ENGLISH_SPACE], probability[examples.MULTILINGUAL_SPACE])
    has_hit = np.array([h is not None for h in hits])
    distanced = np.array([h is not None and h.distanced for h in hits])
    urgent = np.array([bool(r["urgent"]) for r in rows])
    langs = np.array([r["lang"] for r in rows])
    reason_rows = {
        reason: (langs == "en") & urgent & np.array([r.get("reason") == reason for r in rows])
        for reason in reasons.ORDER
    }
    demo_lines, demo_sessions, scripted, person_weeks = _demo_month()
    demo_rows = [{"text": line, "lang": "en", "urgent": False} for line in demo_lines]
    demo_p, demo_hits = _fit_inputs(demo_rows)
    demo_best = np.fmax(demo_p[examples.ENGLISH_SPACE], demo_p[examples.MULTILINGUAL_SPACE])
    demo_hit = np.array([h is not None for h in demo_hits])
    demo_distanced = np.array([h is not None and h.distanced for h in demo_hits])

    def flags(p: dict, best: np.ndarray, hit, far, threshold: dict, veto: float) -> np.ndarray:
        meaning = np.zeros(len(best), dtype=bool)
        for space in examples.SPACES:
            bar = np.array([threshold[space].get(r, 2.0) for r in p[f"{space}_reason"]])
            meaning |= np.nan_to_num(p[space], nan=-1.0) >= bar
        return meaning | (hit & np.where(far, meaning, np.nan_to_num(best) >= veto))

    def noise(threshold: dict, veto: float) -> float:
        flagged = flags(demo_p, demo_best, demo_hit, demo_distanced, threshold, veto)
        false = sum(
            1
            for session in demo_sessions
            if any(flagged[i] for i in session)
            and not any(flagged[i] for i in session if i in scripted)
        )
        return false / person_weeks / len(NOISE_SEEDS)

    def scores(flagged: np.ndarray) -> tuple[bool, float, float]:
        ok, recall_sum, precision_sum = True, 0.0, 0.0
        for lang in sorted(set(langs)):
            mask = langs == lang
            tp = int((flagged & urgent & mask).sum())
            fp = int((flagged & ~urgent & mask).sum())
            recall = tp / max(int((urgent & mask).sum()), 1)
            precision = tp / (tp + fp) if tp + fp else 1.0
            target = ENGLISH_TARGET if lang == "en" else OTHER_TARGET
            # With a margin of one false alarm more than the tuning half shows: a language
            # has only some fifteen calm lines in each half, so one line is the difference.
            ok &= tp / (tp + fp + 1) >= target["precision"]
            recall_sum += recall
            precision_sum += precision
        weakest = min(
            (flagged & mask).sum() / mask.sum() for mask in reason_rows.values() if mask.any()
        )
        return ok, recall_sum + weakest, precision_sum

    def key(threshold: dict, veto: float) -> tuple:
        ok, recall, precision = scores(
            flags(probability, best_p, has_hit, distanced, threshold, veto)
        )
        return (ok and noise(threshold, veto) <= NOISE_TARGET, recall, precision)

    def uniform(english: float, e5: float) -> dict:
        return {
            examples.ENGLISH_SPACE: dict.fromkeys(reasons.ORDER, english),
            examples.MULTILINGUAL_SPACE: dict.fromkeys(reasons.ORDER, e5),
        }

    # One bar per space first, then each reason's bar in each space moved on its own (two
    # rounds): reasons differ in how often calm talk resembles them ("I need to go home" and
    # wanting to leave; a fall and "I fell asleep").
    grid = [round(float(t), 3) for t in np.arange(0.05, 0.951, 0.025)]
    best = None
    for english in grid:
        for e5 in grid:
            for veto in (0.0, 0.05, 0.1, 0.2, 0.3):
                found = key(uniform(english, e5), veto)
                if best is None or found > best[0]:
                    best = (found, uniform(english, e5), veto)
    found, threshold, veto = best
    # A reason's own bar stays at or above 0.3: below it the reader is sure the line is calm,
    # and a bar there would rest on a handful of tuning lines.
    # Each reason's bar is taken from the middle of the run of bars that give the best recall
    # within the targets, not from its top end: the tuning half's recall is near 1 for a
    # wide range of bars, and the highest of them fits the tuning lines' exact scores (new
    # wordings of a reason score a little lower, so a bar at the edge loses them).
    for _ in range(2):
        for space in examples.SPACES:
            for reason in reasons.ORDER:
                tried = []
                for t in (t for t in grid if t >= 0.3):
                    trial = {sp: dict(bars) for sp, bars in threshold.items()}
                    trial[space][reason] = t
                    tried.append((t, trial, key(trial, veto)))
                top = max(candidate[:2] for _t, _trial, candidate in tried)
                if top < found[:2]:
                    continue
                best_at = max(range(len(tried)), key=lambda i: tried[i][2])
                run = [best_at]  # the contiguous bars around the best that share its recall
                while run[0] > 0 and tried[run[0] - 1][2][:2] == top:
                    run.insert(0, run[0] - 1)
                while run[-1] < len(tried) - 1 and tried[run[-1] + 1][2][:2] == top:
                    run.append(run[-1] + 1)
                _t, threshold, found = tried[run[len(run) // 2]]
    ok, recall, _ = found
    print(
        f"tuning half: every precision target kept and the demo month within its alarm noise: "
        f"{ok} ({noise(threshold, veto):.2f} false alerts per person-week, average of seeds "
        f"{NOISE_SEEDS}); recall sum {recall:.3f}"
    )
    print(f"THRESHOLD = {threshold}\nPHRASE_VETO = {veto}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--fit", action="store_true", help="choose THRESHOLD and PHRASE_VETO on the tuning half"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--slice", action="store_true", help="the fixed slice make test runs")
    parser.add_argument("--half", choices=["held-out", "tuning", "all"], default="held-out")
    parser.add_argument("--errors", action="store_true")
    parser.add_argument("--record-floors", action="store_true")
    parser.add_argument("--lang", help="only these languages (comma-separated)")
    args = parser.parse_args(argv)

    rows = load()
    if args.lang:
        keep = set(args.lang.split(","))
        rows = [r for r in rows if r["lang"] in keep]
    tuning, held = split(rows)
    if args.fit:
        fit(tuning)
        return 0
    chosen = {"held-out": held, "tuning": tuning, "all": rows}[args.half]
    if args.slice:
        chosen = the_slice(held)
    name = "slice of the held-out half" if args.slice else f"{args.half} half"
    print(
        f"# Urgent moments: {len(chosen)} lines ({name}) of {len(rows)}; "
        f"{len(examples.examples())} examples, "
        f"{sum(len(lex.reasons) for lex in phrases.lexicons().values())} phrase lists"
    )
    started = time.perf_counter()
    verdicts = [recogniser.recognise(row["text"]) for row in chosen]
    elapsed = time.perf_counter() - started
    print(f"{elapsed:.1f} s, {elapsed / max(len(chosen), 1) * 1000:.1f} ms a line (cold)")
    out = report(chosen, verdicts, errors=args.errors)
    if args.record_floors:
        floors = {
            "languages": {
                lang: {"recall": round(m["recall"], 4), "precision": round(m["precision"], 4)}
                for lang, m in out["languages"].items()
            }
        }
        FLOORS.write_text(json.dumps(floors, indent=2) + "\n")
        print(f"\nwrote {FLOORS}")
    if not args.check:
        return 0
    if args.slice:
        problems = floor_misses(out, json.loads(FLOORS.read_text())) if FLOORS.exists() else []
    else:
        problems = misses(out)
    if problems:
        print("\nMISSED:\n" + "\n".join(f"- {p}" for p in problems))
        return 1
    print("\nAll targets met.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
