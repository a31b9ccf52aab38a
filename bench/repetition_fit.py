#!/usr/bin/env python
"""Fit the repeat detector's weights on the tuning half (issue 17).

    .venv/bin/python bench/repetition_fit.py            # print the fitted constants
    .venv/bin/python bench/repetition_fit.py --write    # and write them into meaning.py

The detector (memory/conversations/meaning.py) is a logistic regression over the few features
of `Comparison.features()` (FEATURES). This script fits it on the tuning half of
bench/repetition/pairs.jsonl only (the split of bench/repetition_eval.py), never the held-out
half:

- pairs the rule decides without the detector are left out: opposites (never repeats) and
  fingerprint matches (always repeats);
- the weights: L2-penalised logistic regression (Newton's method, numpy; no bias penalty);
- the cut: from out-of-fold probabilities (5 folds, 8 shuffles, averaged), the lowest cut at
  which the whole rule (fingerprint OR detector, opposites never) keeps precision ≥ 0.9 on the
  tuning half, so the cut is not chosen on probabilities the weights were fitted to.

Weights are rounded to one decimal place (the cut to two): they are constants a reader can
check by hand.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import repetition_eval as ev  # noqa: E402  (sets up Django)

from memory.conversations import meaning  # noqa: E402

L2 = 0.03
FOLDS, SHUFFLES = 5, 8
MEANING = ev.ROOT / "memory" / "conversations" / "meaning.py"


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2, iterations: int = 30) -> np.ndarray:
    """Weights then bias of an L2-penalised logistic regression (the bias unpenalised)."""
    x1 = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(x1.shape[1])
    penalty = l2 * np.eye(x1.shape[1])
    penalty[-1, -1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x1 @ w)))
        gradient = x1.T @ (p - y) + penalty @ w
        hessian = x1.T @ (x1 * (p * (1 - p))[:, None]) + penalty
        w -= np.linalg.solve(hessian, gradient)
    return w


def probabilities(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ w[:-1] + w[-1])))


def choose_cut(p: np.ndarray, y: np.ndarray, forced: np.ndarray, vetoed: np.ndarray) -> float:
    """The lowest cut whose whole rule keeps precision ≥ 0.9 (highest recall there)."""
    best = (-1.0, 1.0)
    for cut in np.unique(np.round(p, 2)):
        predicted = forced | (~vetoed & (p >= cut))
        precision, recall, *_ = ev.prf(predicted.tolist(), y.astype(int).tolist())
        if precision >= ev.TARGET_PRECISION and recall > best[0]:
            best = (recall, float(cut))
    return best[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the constants to meaning.py")
    args = parser.parse_args()

    rows = ev.load()
    tuning, _ = ev.split(rows)
    comparisons = ev.analyse_all(tuning)
    x = np.array([comparisons[r["id"]].features() for r in tuning])
    y = np.array([r["label"] for r in tuning], dtype=float)
    vetoed = np.array([comparisons[r["id"]].opposite for r in tuning])
    forced = np.array([r["fingerprint"] for r in tuning]) & ~vetoed
    free = ~vetoed & ~forced

    oof = np.zeros(len(tuning))
    for shuffle in range(SHUFFLES):
        order = np.random.default_rng(shuffle).permutation(len(tuning))
        for fold in range(FOLDS):
            test = order[fold::FOLDS]
            train = np.setdiff1d(order, test)
            train = train[free[train]]
            oof[test] += probabilities(fit(x[train], y[train]), x[test]) / SHUFFLES
    cut = choose_cut(oof, y, forced, vetoed)
    w = fit(x[free], y[free])
    weights = tuple(round(float(v), 1) for v in w[:-1])
    bias = round(float(w[-1]), 1)

    predicted = forced | (~vetoed & (oof >= cut))
    precision, recall, f1, *_ = ev.prf(predicted.tolist(), y.astype(int).tolist())
    print(f"{len(tuning)} tuning pairs, {int(free.sum())} for the weights")
    for name, value in zip(meaning.FEATURES, weights, strict=True):
        print(f"  {name:16s} {value:+.1f}")
    print(f"  {'bias':16s} {bias:+.1f}")
    print(
        f"cut {cut:.2f}: out-of-fold on the tuning half P {precision:.2f} R {recall:.2f} F1 {f1:.2f}"
    )
    if args.write:
        text = MEANING.read_text()
        text = re.sub(r"^WEIGHTS = .*$", f"WEIGHTS = {weights!r}", text, count=1, flags=re.M)
        text = re.sub(r"^BIAS = .*$", f"BIAS = {bias!r}", text, count=1, flags=re.M)
        text = re.sub(r"^CUT = [0-9.]+", f"CUT = {cut!r}", text, count=1, flags=re.M)
        MEANING.write_text(text)
        print(f"written to {MEANING.relative_to(ev.ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
