#!/usr/bin/env python
"""Fit the urgent-moment readers (memory/conversations/urgency/heads.py) on the shipped examples.

    .venv/tools/bin/uv sync --group research --inexact   # scikit-learn, for this script only
    .venv/bin/python research/urgent/train_heads.py     # writes memory/data/urgent/heads.npz

One multinomial logistic regression per space (MiniLM for English, multilingual-e5 for every
language), over "calm" and the reasons, on the bank's vectors of every example in
memory/data/urgent/examples/ (never the evaluation set in bench/urgent/eval/). The product reads
only the weights; thresholds are chosen afterwards on the evaluation set's tuning half
(`bench/urgent_eval.py --fit`). Deterministic: the same examples give the same weights.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from memory.conversations.urgency import examples, heads  # noqa: E402

# Inverse regularisation strength, chosen by cross-validation on the examples
# (research/urgent/crossval.py, recall at a matched share of calm examples flagged: 4, 8, 16, 32
# tried; English 0.812, 0.828, 0.839, 0.839, wanting to leave 0.68, 0.72, 0.73, 0.75, other
# languages 0.863, 0.869, 0.874, 0.870): less regularisation reads unseen wordings better, and
# 16 is where the gains stop. (4 was chosen earlier on the evaluation set's tuning half.)
C = 16.0
# Per-class weights of the fit (None: every example counts the same).
CLASS_WEIGHT = None


def train(vectors: np.ndarray, labels: list[str]) -> LogisticRegression:
    """The reader fitted on these vectors and labels (also what crossval.py fits per fold)."""
    model = LogisticRegression(C=C, max_iter=5000, class_weight=CLASS_WEIGHT)
    model.fit(vectors.astype(np.float64), np.asarray(labels))
    return model


def fit(space: str) -> dict[str, np.ndarray]:
    vectors, labels = examples.labelled(space)
    model = train(vectors, labels)
    accuracy = model.score(vectors.astype(np.float64), np.asarray(labels))
    print(f"{space}: {len(labels)} examples, {len(model.classes_)} classes, fit {accuracy:.3f}")
    return {
        f"{space}_weights": model.coef_.astype(np.float32),
        f"{space}_bias": model.intercept_.astype(np.float32),
        f"{space}_classes": np.asarray(model.classes_, dtype=str),
    }


def main() -> None:
    arrays: dict[str, np.ndarray] = {"digest": np.array(examples.digest())}
    for space in examples.SPACES:
        arrays |= fit(space)
    heads.write(arrays)
    print(f"wrote {heads.HEADS}")


if __name__ == "__main__":
    main()
