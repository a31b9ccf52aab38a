"""Urgent moments by meaning: a linear reader over each space's sentence vectors.

The examples (examples.py) teach two small classifiers, one per space: multinomial logistic
regression over "calm" and the reasons, fitted on the bank's vectors of every example (English
ones in MiniLM's space, every one in multilingual-e5's). A message's vector gives a probability
that it is urgent (one minus the probability of calm) and the likeliest reason. A reader of this
kind generalises from thousands of examples to wordings none of them has, where "the three
nearest examples" (kept for the explanation) depends on which few examples happen to lie near.

The weights are data, like the bank: memory/data/urgent/heads.npz, fitted offline by
`research/urgent/train_heads.py` (scikit-learn, never imported here) from the shipped bank, and
stamped with the bank's digest; a test fails when they were fitted for other examples. Reading
is one small matrix product and a softmax: the same vector always gives the same numbers.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import numpy as np

from memory.conversations.urgency import examples
from memory.conversations.urgency.phrases import DATA_DIR

logger = logging.getLogger(__name__)

HEADS = DATA_DIR / "heads.npz"
CALM = examples.CALM


@dataclass(frozen=True)
class Reading:
    """What one space's reader makes of one vector."""

    space: str
    urgent: float  # the probability that the message is urgent (1 - P(calm))
    reason: str  # the likeliest reason (never calm)


@dataclass(frozen=True)
class _Head:
    weights: np.ndarray  # (classes, dim) float32
    bias: np.ndarray  # (classes,) float32
    classes: tuple[str, ...]
    calm: int  # the row of CALM


@functools.cache
def _heads() -> dict[str, _Head]:
    data = np.load(HEADS)
    if str(data["digest"]) != examples.digest():
        logger.warning(
            "urgent-moment readers were fitted for other examples: run "
            "research/urgent/train_heads.py (the shipped weights are used meanwhile)"
        )
    heads = {}
    for space in examples.SPACES:
        classes = tuple(str(name) for name in data[f"{space}_classes"])
        heads[space] = _Head(
            weights=data[f"{space}_weights"].astype(np.float32),
            bias=data[f"{space}_bias"].astype(np.float32),
            classes=classes,
            calm=classes.index(CALM),
        )
    return heads


def digest() -> str:
    """The bank digest the shipped weights were fitted for."""
    return str(np.load(HEADS)["digest"])


def read(space: str, vectors: np.ndarray) -> list[Reading]:
    """The reading of each row of `vectors` (unit sentence vectors of `space`)."""
    head = _heads()[space]
    logits = np.atleast_2d(vectors).astype(np.float32) @ head.weights.T + head.bias
    logits -= logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    readings = []
    for row in probabilities:
        urgent_only = row.copy()
        urgent_only[head.calm] = -1.0
        readings.append(
            Reading(
                space=space,
                urgent=round(float(1.0 - row[head.calm]), 4),
                reason=head.classes[int(np.argmax(urgent_only))],
            )
        )
    return readings


def write(arrays: dict[str, np.ndarray]) -> None:
    """Write fitted weights (the training script's output) to heads.npz."""
    tmp = HEADS.with_name(HEADS.stem + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(HEADS)
    _heads.cache_clear()
