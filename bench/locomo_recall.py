#!/usr/bin/env python
"""Retrieval quality on LoCoMo: recall@k of the turns that hold each question's answer.

    .venv/bin/python bench/locomo_recall.py --data ../shared/data/locomo/locomo_dev.json

Method (the LoCoMo paper's "recall accuracy", see the data's README): one index per
conversation, each turn one document, the question text as the query; recall@k is the share of
the question's evidence turns found in the top k, averaged over questions (a question without
evidence counts as 1; an evidence id that names no turn is a miss for every system).

Three retrievers are reported, each with a per-category breakdown:
- MiniLM: cosine of all-MiniLM-L6-v2 vectors of `<speaker> said, "<text>"` (the paper's text);
- BM25: memory.facts.ranking's tokenizer and BM25 over the same texts;
- hybrid: bench/conversation_search.py, the product's method for stored conversations
  (see that module for what it adds: neighbouring turns, the session, the speakers named).

Only what a memory system has is used: speakers, turn text, image captions, session dates and
the order of turns. The dataset's annotated observations, summaries, answers and evidence are
never read except to score.

Embeddings are cached under data/bench/ (git-ignored), keyed by model and text hash, so reruns
take seconds; from nothing, the first run embeds ~2,800 turns a few times over (a few minutes
on this machine).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import conversation_search as retrieval  # noqa: E402
from memory.core.embeddings import Embedder, MiniLMEmbedder  # noqa: E402

CACHE_DIR = ROOT / "data" / "bench"
KS = (5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


# --- Data -------------------------------------------------------------------------------------


@dataclass
class Question:
    text: str
    evidence: list[str]
    category: int


@dataclass
class Conversation:
    sample_id: str
    speakers: list[str]
    turns: list[retrieval.Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


_SESSION = re.compile(r"^session_(\d+)$")


def load(path: Path) -> list[Conversation]:
    """Conversations with their turns in order and their questions (nothing else is read)."""
    items = json.loads(Path(path).read_text())
    conversations = []
    for item in items:
        conv = item["conversation"]
        speakers = [conv[k] for k in ("speaker_a", "speaker_b") if conv.get(k)]
        c = Conversation(item.get("sample_id", str(len(conversations))), speakers)
        sessions = sorted(
            (int(m.group(1)), key)
            for key in conv
            if (m := _SESSION.match(key)) and isinstance(conv[key], list)
        )
        for number, key in sessions:
            date = conv.get(f"{key}_date_time")
            for position, turn in enumerate(conv[key]):
                c.turns.append(
                    retrieval.Turn(
                        id=turn["dia_id"],
                        speaker=turn.get("speaker", ""),
                        text=turn.get("text", ""),
                        caption=turn.get("blip_caption"),
                        session=number,
                        position=position,
                        date=date,
                    )
                )
        for qa in item.get("qa", []):
            evidence = [e for raw in qa.get("evidence", []) for e in re.split(r"[;,\s]+", raw) if e]
            c.questions.append(Question(qa["question"], evidence, int(qa.get("category", 0))))
        conversations.append(c)
    return conversations


# --- Embedding cache --------------------------------------------------------------------------


class CachedEmbedder:
    """Wraps an embedder with an on-disk cache keyed by (model name, sha1 of the text)."""

    def __init__(self, embedder: Embedder, directory: Path = CACHE_DIR) -> None:
        self.embedder = embedder
        self.name, self.dim = embedder.name, embedder.dim
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"locomo-embeddings-{embedder.name}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        self.computed = 0
        self.seconds = 0.0
        if self.path.exists():
            with np.load(self.path) as data:
                for key, vector in zip(data["keys"], data["vectors"], strict=True):
                    self.vectors[str(key)] = vector

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self.key(t) for t in texts]
        missing = list(
            dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in self.vectors)
        )
        if missing:
            started = time.perf_counter()
            vectors = self.embedder.encode(missing)
            self.seconds += time.perf_counter() - started
            self.computed += len(missing)
            for text, vector in zip(missing, vectors, strict=True):
                self.vectors[self.key(text)] = vector
            self.save()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, k in enumerate(keys):
            out[i] = self.vectors[k]
        return out

    def save(self) -> None:
        keys = np.array(list(self.vectors), dtype="U40")
        vectors = np.stack(list(self.vectors.values())) if self.vectors else np.zeros((0, self.dim))
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vectors=vectors.astype(np.float32))
        tmp.replace(self.path)


# --- Scoring ----------------------------------------------------------------------------------

Ranker = Callable[[Conversation], list[np.ndarray]]  # one score array per question


def recall_table(conversations: list[Conversation], ranker: Ranker) -> dict:
    """Recall@k overall and per category for one retriever."""
    per_category: dict[int, list[list[float]]] = defaultdict(list)
    overall: list[list[float]] = []
    for conv in conversations:
        index = {t.id: i for i, t in enumerate(conv.turns)}
        for question, scores in zip(conv.questions, ranker(conv), strict=True):
            order = retrieval.top_k(scores, max(KS))
            position = {int(doc): rank for rank, doc in enumerate(order)}
            row = []
            for k in KS:
                if not question.evidence:
                    row.append(1.0)
                    continue
                found = sum(
                    1 for e in question.evidence if e in index and position.get(index[e], k) < k
                )
                row.append(found / len(question.evidence))
            overall.append(row)
            per_category[question.category].append(row)
    return {
        "all": np.mean(overall, axis=0).tolist(),
        "n": len(overall),
        "categories": {
            c: (np.mean(r, axis=0).tolist(), len(r)) for c, r in sorted(per_category.items())
        },
    }


def print_table(name: str, table: dict) -> None:
    print(f"\n== {name} ({table['n']} questions)")
    for k, value in zip(KS, table["all"], strict=True):
        print(f"R@{k} {value:.3f}")
    print("  " + " ".join(f"{'R@' + str(k):>6}" for k in KS) + "      n  category")
    for category, (values, n) in table["categories"].items():
        label = CATEGORIES.get(category, str(category))
        print("  " + " ".join(f"{v:6.3f}" for v in values) + f"  {n:5d}  {category} {label}")


# --- Retrievers -------------------------------------------------------------------------------


def minilm_ranker(embedder: Embedder) -> Ranker:
    def rank(conv: Conversation) -> list[np.ndarray]:
        docs = embedder.encode([retrieval.turn_text(t) for t in conv.turns])
        queries = embedder.encode([q.text for q in conv.questions])
        return list(queries @ docs.T)

    return rank


def bm25_ranker(conv: Conversation) -> list[np.ndarray]:
    index = retrieval.BM25Index([retrieval.tokenize(retrieval.turn_text(t)) for t in conv.turns])
    return [index.scores(retrieval.tokenize(q.text)) for q in conv.questions]


def hybrid_ranker(
    embedder: Embedder, weights: retrieval.ConversationWeights | None = None
) -> Ranker:
    def rank(conv: Conversation) -> list[np.ndarray]:
        search = retrieval.ConversationSearch(conv.turns, embedder, weights=weights)
        queries = embedder.encode([q.text for q in conv.questions])
        return [search.scores(q.text, v) for q, v in zip(conv.questions, queries, strict=True)]

    return rank


def ablation(conversations: list[Conversation], embedder: Embedder) -> None:
    """What each signal adds: built up one at a time, then each removed from the full method."""
    off = {"exchanges": False, "neighbour": 0.0, "session": 0.0, "speaker": 0.0, "date": 0.0}
    steps = [
        ("fusion: MiniLM + BM25 (0.5 / 0.5, min-max)", dict(off)),
        ("+ exchanges embedded with each turn", {**off, "exchanges": True}),
        (
            "+ neighbour propagation",
            {**off, "exchanges": True, "neighbour": retrieval.NEIGHBOUR_WEIGHT},
        ),
        ("+ session's best score", {k: v for k, v in off.items() if k in ("speaker", "date")}),
        ("+ speaker named in the query", {"date": 0.0}),
        ("+ date named in the query (= hybrid)", {}),
    ]

    def plain_bm25(conv: Conversation) -> list[np.ndarray]:
        words = lambda text: re.findall(r"\w+", text.lower())  # noqa: E731
        index = retrieval.BM25Index([words(retrieval.turn_text(t)) for t in conv.turns])
        return [index.scores(words(q.text)) for q in conv.questions]

    print("\n== ablation: the keyword tokenizer (R@5 R@10 R@25 R@50)")
    table = recall_table(conversations, plain_bm25)
    print("  " + " ".join(f"{v:.3f}" for v in table["all"]) + "  BM25 over plain lower-cased words")
    table = recall_table(conversations, bm25_ranker)
    print("  " + " ".join(f"{v:.3f}" for v in table["all"]) + "  BM25 with stopwords and stemming")
    print("== ablation: built up (R@5 R@10 R@25 R@50)")
    for label, changes in steps:
        table = recall_table(
            conversations, hybrid_ranker(embedder, retrieval.ConversationWeights(**changes))
        )
        print("  " + " ".join(f"{v:.3f}" for v in table["all"]) + f"  {label}")
    print("== ablation: full method minus one")
    for key, value in off.items():
        table = recall_table(
            conversations, hybrid_ranker(embedder, retrieval.ConversationWeights(**{key: value}))
        )
        print("  " + " ".join(f"{v:.3f}" for v in table["all"]) + f"  without {key}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument(
        "--only", choices=["minilm", "bm25", "hybrid"], action="append", help="run only these"
    )
    parser.add_argument("--ablation", action="store_true", help="also show what each signal adds")
    parser.add_argument("--cache", type=Path, default=CACHE_DIR, help="embedding cache directory")
    args = parser.parse_args(argv)

    conversations = load(args.data)
    n_turns = sum(len(c.turns) for c in conversations)
    n_questions = sum(len(c.questions) for c in conversations)
    print(
        f"{args.data}: {len(conversations)} conversations, {n_turns} turns, {n_questions} questions"
    )
    embedder = CachedEmbedder(MiniLMEmbedder(), args.cache)
    runs = {
        "minilm": ("MiniLM alone (cosine over turns)", minilm_ranker(embedder)),
        "bm25": ("BM25 alone (memory.facts.ranking tokenizer)", bm25_ranker),
        "hybrid": ("hybrid: bench/conversation_search.py", hybrid_ranker(embedder)),
    }
    for key in args.only or list(runs):
        name, ranker = runs[key]
        started = time.perf_counter()
        table = recall_table(conversations, ranker)
        print_table(name, table)
        print(f"  ({time.perf_counter() - started:.1f} s)")
    if args.ablation:
        ablation(conversations, embedder)
    if embedder.computed:
        rate = embedder.computed / embedder.seconds if embedder.seconds else 0.0
        print(
            f"\nembedded {embedder.computed} new texts in {embedder.seconds:.1f} s ({rate:.0f}/s); cache {embedder.path}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
