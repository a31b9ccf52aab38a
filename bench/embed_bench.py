#!/usr/bin/env python
"""Speed of the numpy all-MiniLM-L6-v2 and of the keyword and conversation ranking.

    .venv/bin/python bench/embed_bench.py            # ~1 minute
    .venv/bin/python bench/embed_bench.py --quick    # fewer texts

Prints: the model's load time (a fresh process, import + weights + tokenizer), sentences per
second for short (12 words) and long (60 words) texts on one BLAS thread and on OpenBLAS's
default, the median latency of one query, and the median time to score a query with BM25 and
with ConversationSearch (precomputed vectors) at 10k and 100k documents. Texts are random
vocabulary words (seeded), which tokenise like ordinary English: about 1.2 tokens a word.
The machine is shared: the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import conversation_search as retrieval  # noqa: E402
from memory.core.embeddings import HashingEmbedder, MiniLMEmbedder, model_dir  # noqa: E402


def vocabulary() -> list[str]:
    words = []
    for line in (model_dir() / "vocab.txt").read_text().splitlines():
        if line.isalpha() and len(line) >= 3 and line.islower():
            words.append(line)
    return words


def sentences(words: list[str], n: int, length: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(words, k=length)) + "." for _ in range(n)]


def load_time() -> float:
    """Seconds for a fresh interpreter to import the module and load the model (median of 3)."""
    code = (
        "import time; t=time.perf_counter(); from memory.core.embeddings import MiniLMEmbedder; "
        "m=MiniLMEmbedder(); m.load(); m.encode(['warm']); print(time.perf_counter()-t)"
    )
    runs = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        )
        runs.append(float(out.stdout.strip()))
    return statistics.median(runs)


def rate(model: MiniLMEmbedder, texts: list[str], repeats: int = 2) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        model.encode(texts)
        best = min(best, time.perf_counter() - started)
    return len(texts) / best


def median_ms(function, arguments: list) -> float:
    times = []
    for argument in arguments:
        started = time.perf_counter()
        function(argument)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    short_n, long_n, queries = (128, 48, 20) if args.quick else (512, 192, 50)

    words = vocabulary()
    short = sentences(words, short_n, 12, 1)
    long = sentences(words, long_n, 60, 2)
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores)")
    print(
        f"model load, fresh process (import + weights + tokenizer + first encode): {load_time():.2f} s"
    )

    one = MiniLMEmbedder(threads=1)
    default = MiniLMEmbedder(threads=None)
    tokens = one.tokenize(short[:50] + long[:50])
    print(
        f"tokens per text: short {np.mean([len(t) for t in tokens[:50]]):.1f}, long {np.mean([len(t) for t in tokens[50:]]):.1f}"
    )
    for label, model in (("1 BLAS thread (default)", one), ("OpenBLAS default threads", default)):
        model.encode(["warm up"])
        single = median_ms(lambda q, m=model: m.encode([q]), short[:queries])
        print(
            f"{label:26s}: short {rate(model, short):6.0f}/s   long {rate(model, long):6.0f}/s   "
            f"one query {single:6.1f} ms (median)"
        )

    rng = np.random.default_rng(0)
    pool = sentences(words, 2000, 15, 3)
    for size in (10_000, 100_000):
        docs = [pool[i % len(pool)] for i in range(size)]
        index = retrieval.BM25Index([retrieval.tokenize(d) for d in docs])
        qs = [retrieval.tokenize(q) for q in sentences(words, queries, 8, 4)]
        bm25 = median_ms(index.scores, qs)
        turns = [
            retrieval.Turn(
                str(i),
                "Rose" if i % 2 else "Tom",
                d,
                session=i // 20,
                position=i % 20,
                date="2023-05-08",
            )
            for i, d in enumerate(docs)
        ]
        vectors = rng.normal(size=(size, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        search = retrieval.ConversationSearch(
            turns,
            HashingEmbedder(),
            vectors=(
                vectors,
                vectors[: len(retrieval.exchange_pairs(retrieval.session_codes(turns)))],
            ),
        )
        query_vectors = rng.normal(size=(queries, 384)).astype(np.float32)
        texts = sentences(words, queries, 8, 5)
        full = median_ms(
            lambda i, s=search, t=texts, v=query_vectors: s.scores(
                t[i] + " Rose in May 2023", v[i]
            ),
            list(range(queries)),
        )
        print(
            f"{size:>7,} docs: BM25 scores {bm25:.2f} ms, ConversationSearch.scores {full:.2f} ms (query vector given)"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
