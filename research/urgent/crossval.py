#!/usr/bin/env python
"""How well do the urgent-moment readers generalise to wordings they were not fitted on? A
yardstick that never touches the evaluation set (bench/urgent/eval/).

    .venv/bin/python research/urgent/crossval.py              # 5 folds, both spaces
    .venv/bin/python research/urgent/crossval.py --folds 10 --space minilm

k-fold cross-validation of the readers on the examples bank (memory/data/urgent/bank.npz): each
fold's examples are scored by a reader fitted, exactly as research/urgent/train_heads.py fits the
shipped one (its `train`), on the other folds' examples, and flagged as the recogniser flags a
message: the probability of urgent at or over THRESHOLD (recogniser.py) of the likeliest
reason. Printed per space: recall per reason (and how often the reason is named right), the
calm examples flagged, by kind of look-alike, and precision; in e5's space per language too.

Near-copies go to the same fold: examples are grouped by their normal form and joined when their
vectors are nearly the same (cosine >= --near, in the space being scored), so a held example's
rewording with one word changed is never in the training folds (that would flatter the figure).
The fold of a group is a hash of its first text: the same examples give the same folds. Figures
read on the whole message's vector (no clause reading, no phrase lists): they measure the
readers, and are comparable from one version of the examples or of the training to the next,
not with the evaluation set's figures. Precision depends on the bank's own mix of calm and
urgent examples.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
import train_heads  # noqa: E402

from memory.conversations.urgency import examples, reasons, recogniser  # noqa: E402
from memory.conversations.urgency.text import normalise  # noqa: E402


def raw_rows() -> list[dict]:
    """The example files' rows in examples()'s order (for the fields it does not keep)."""
    rows = []
    for path in sorted(examples.EXAMPLES_DIR.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append(json.loads(line) | {"file": path.stem})
    return rows


def groups(texts: list[str], vectors: np.ndarray, near: float) -> np.ndarray:
    """A group id per row: the same normal form, or vectors at cosine >= near, share one."""
    parent = list(range(len(texts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    first: dict[str, int] = {}
    for i, text in enumerate(texts):
        join(i, first.setdefault(normalise(text), i))
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    for start in range(0, len(texts), 512):
        sims = unit[start : start + 512] @ unit.T
        for a, b in zip(*np.nonzero(sims >= near), strict=True):
            if start + a < b:
                join(start + a, int(b))
    return np.array([root(i) for i in range(len(texts))])


def fold_of(texts: list[str], group: np.ndarray, k: int, by_file: list[str] | None) -> np.ndarray:
    if by_file is not None:
        key = by_file
    else:
        key = [texts[g] for g in group]
    return np.array([int(hashlib.sha256(s.encode()).hexdigest(), 16) % k for s in key])


def predict(space: str, k: int, near: float, by_file: bool) -> tuple[list[int], np.ndarray, list]:
    """Each example's out-of-fold probability of urgent and likeliest reason in `space`."""
    vectors, labels = examples.labelled(space)
    index = examples._bank()[space].index
    all_examples = examples.examples()
    texts = [all_examples[int(i)].text for i in index]
    rows = raw_rows()
    files = [rows[int(i)]["file"] for i in index] if by_file else None
    fold = fold_of(texts, groups(texts, vectors.astype(np.float32), near), k, files)
    urgent = np.zeros(len(texts))
    reason = np.empty(len(texts), dtype=object)
    for f in range(k):
        held = fold == f
        if not held.any():
            continue
        model = train_heads.train(
            vectors[~held], [lab for lab, h in zip(labels, held, strict=True) if not h]
        )
        p = model.predict_proba(vectors[held].astype(np.float64))
        classes = list(model.classes_)
        calm = classes.index(examples.CALM)
        urgent[held] = 1.0 - p[:, calm]
        p[:, calm] = -1.0
        reason[held] = [classes[j] for j in p.argmax(axis=1)]
    return [int(i) for i in index], urgent, list(reason)


def summary(space: str, positions: list[int], urgent: np.ndarray, reason: list, rows: list[dict]):
    bars = recogniser.THRESHOLD[space]
    flagged = np.array([u >= bars[r] for u, r in zip(urgent, reason, strict=True)])
    truth = [rows[i] for i in positions]
    out = {}

    def block(title: str, mask: np.ndarray) -> dict:
        is_urgent = np.array([bool(r["urgent"]) for r in truth])
        tp = int((flagged & mask & is_urgent).sum())
        fp = int((flagged & mask & ~is_urgent).sum())
        n_urgent = int((mask & is_urgent).sum())
        n_calm = int((mask & ~is_urgent).sum())
        m = {
            "recall": tp / n_urgent if n_urgent else float("nan"),
            "precision": tp / (tp + fp) if tp + fp else float("nan"),
            "false": fp,
            "calm": n_calm,
        }
        print(
            f"{title}: recall {m['recall']:.3f} ({tp}/{n_urgent}) · precision "
            f"{m['precision']:.3f} · calm flagged {fp}/{n_calm}"
        )
        per = {}
        for name in reasons.ORDER:
            rm = mask & np.array([r["urgent"] and r.get("reason") == name for r in truth])
            if not rm.any():
                continue
            hit = int((flagged & rm).sum())
            right = int(sum(1 for i in np.nonzero(flagged & rm)[0] if reason[i] == name))
            per[name] = hit / int(rm.sum())
            print(
                f"    {name:16s} {hit / rm.sum():.3f} ({hit}/{int(rm.sum())}); reason right {right}"
            )
        kinds = collections.Counter(
            r.get("negative") for r, mm in zip(truth, mask, strict=True) if mm and not r["urgent"]
        )
        wrong = collections.Counter(
            r.get("negative")
            for r, mm, f in zip(truth, mask, flagged, strict=True)
            if mm and f and not r["urgent"]
        )
        if wrong:
            print(
                "    calm flagged by kind: "
                + ", ".join(
                    f"{kind} {wrong[kind]}/{kinds[kind]}" for kind in sorted(wrong, key=str)
                )
            )
        m["reasons"] = per
        return m

    langs = np.array([r.get("lang", "en") for r in truth])
    margin = urgent - np.array([bars[r] for r in reason])
    is_urgent = np.array([bool(r["urgent"]) for r in truth])

    def matched(title: str, mask: np.ndarray, rate: float) -> dict:
        out = per_bar(title, mask, rate, margin, "today's bars moved together")
        out["one_bar"] = per_bar(title, mask, rate, urgent, "one bar for all")
        return out

    def per_bar(title: str, mask: np.ndarray, rate: float, margin: np.ndarray, how: str) -> dict:
        """Recall with every bar moved by one amount so that `rate` of the calm examples are
        flagged: comparable between readers whose probabilities are scaled differently."""
        calm = np.sort(margin[mask & ~is_urgent])[::-1]
        shift = calm[int(rate * len(calm))]
        hit = margin > shift
        m = {"recall": float(hit[mask & is_urgent].mean())}
        parts = []
        for name in reasons.ORDER:
            rm = mask & np.array([r["urgent"] and r.get("reason") == name for r in truth])
            if rm.any():
                m[name] = float(hit[rm].mean())
                parts.append(f"{name} {m[name]:.3f}")
        print(
            f"{title} at {rate:.0%} of calm flagged ({how}): recall {m['recall']:.3f} · "
            + ", ".join(parts)
        )
        return m

    print(f"\n## {space}")
    if space == examples.ENGLISH_SPACE:
        out["en"] = block("en", langs == "en")
        out["en_matched"] = matched("en", langs == "en", 0.05)
    else:
        for lang in ("cy", "pa"):
            out[lang] = block(lang, langs == lang)
        out["other"] = block("other languages (not en)", langs != "en")
        out["other_matched"] = matched("other languages", langs != "en", 0.10)
        out["cy_matched"] = matched("cy", langs == "cy", 0.10)
        out["en_in_e5"] = block("en (read in e5 when unsure)", langs == "en")
    return out


def english_in_both(k: int, near: float) -> None:
    """What reading every English message in both spaces would give (a question, not what the
    recogniser does: English is read in MiniLM's space alone unless the identifier is unsure):
    out-of-fold recall of English examples at a matched share of calm flagged, with one bar for
    every reason, for each space alone, their mean and their maximum."""
    rows = raw_rows()
    pm, um, _ = predict(examples.ENGLISH_SPACE, k, near, False)
    pe, ue, _ = predict(examples.MULTILINGUAL_SPACE, k, near, False)
    in_e5 = {p: i for i, p in enumerate(pe)}
    ue = ue[[in_e5[p] for p in pm]]
    truth = [rows[p] for p in pm]
    is_urgent = np.array([bool(r["urgent"]) for r in truth])
    print("\n## English read in both spaces (one bar for every reason)")
    for name, score in (
        ("minilm", um),
        ("e5", ue),
        ("mean", (um + ue) / 2),
        ("max", np.maximum(um, ue)),
    ):
        for rate in (0.03, 0.05):
            calm = np.sort(score[~is_urgent])[::-1]
            hit = score > calm[int(rate * len(calm))]
            parts = [
                f"{n} {hit[np.array([r.get('reason') == n for r in truth])].mean():.3f}"
                for n in reasons.ORDER
            ]
            print(
                f"{name:6s} at {rate:.0%} of calm flagged: recall {hit[is_urgent].mean():.3f} · "
                + ", ".join(parts)
            )


def _file_prefixes(given: str) -> tuple[str, ...]:
    """Example files named by stem prefix ("cy_more5") or by name ("cy_more5.jsonl"): rows carry
    the stem, so a name with its suffix would match nothing and score every file."""
    return tuple(part.strip().removesuffix(".jsonl") for part in given.split(",") if part.strip())


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--near", type=float, default=0.95, help="cosine joining near-copies")
    parser.add_argument("--by-file", action="store_true", help="one example file per fold")
    parser.add_argument("--space", choices=examples.SPACES)
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument(
        "--score-files",
        help="score only examples of files whose names start with one of these (comma-separated)"
        " prefixes; the others still train: do new examples help read the old ones?",
    )
    parser.add_argument(
        "--skip-files", help="score every file but these (comma-separated prefixes)"
    )
    parser.add_argument("--C", type=float, help="try another C than train_heads.py's")
    parser.add_argument(
        "--errors", help="list the examples of this reason, calm kind or language read wrong"
    )
    parser.add_argument(
        "--english-both", action="store_true", help="what reading English in both spaces gives"
    )
    parser.add_argument("--balanced", action="store_true", help="class_weight='balanced'")
    args = parser.parse_args(argv)
    if args.balanced:
        train_heads.CLASS_WEIGHT = "balanced"
    if args.C:
        train_heads.C = args.C
    if args.english_both:
        english_in_both(args.folds, args.near)
        return {}
    rows = raw_rows()
    assert len(rows) == len(examples.examples())
    print(
        f"# {args.folds}-fold cross-validation of the readers ({len(rows)} examples, C="
        f"{train_heads.C}, near-copies at cosine >= {args.near}"
        f"{', by file' if args.by_file else ''})"
    )
    figures = {}
    for space in [args.space] if args.space else examples.SPACES:
        positions, urgent, reason = predict(space, args.folds, args.near, args.by_file)
        keep = np.ones(len(positions), dtype=bool)
        if args.score_files:
            prefixes = _file_prefixes(args.score_files)
            keep &= np.array([rows[i]["file"].startswith(prefixes) for i in positions])
        if args.skip_files:
            prefixes = _file_prefixes(args.skip_files)
            keep &= np.array([not rows[i]["file"].startswith(prefixes) for i in positions])
        positions = [p for p, k in zip(positions, keep, strict=True) if k]
        reason = [r for r, k in zip(reason, keep, strict=True) if k]
        figures[space] = summary(space, positions, urgent[keep], reason, rows)
        if args.errors:
            bars = recogniser.THRESHOLD[space]
            print(f"\n## {space}: examples read wrong out of fold")
            for position, u, r in zip(positions, urgent[keep], reason, strict=True):
                row = rows[position]
                if args.errors not in (row.get("reason"), row.get("negative"), row.get("lang")):
                    continue
                if (u >= bars[r]) != bool(row["urgent"]):
                    kind = "MISSED" if row["urgent"] else f"FALSE ({r} {u:.2f})"
                    print(f"{kind} [{row.get('lang', 'en')} {row.get('style')}] {row['text']}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return figures


if __name__ == "__main__":
    main()
