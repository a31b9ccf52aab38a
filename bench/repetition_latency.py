#!/usr/bin/env python
"""What the meaning-based repeat check costs on a turn (issue 17).

    .venv/bin/python bench/repetition_latency.py            # ~1-2 minutes
    .venv/bin/python bench/repetition_latency.py --runs 500

Measures, for messages of the evaluation set (bench/repetition/pairs.jsonl), medians and p99 of
wall time and CPU time (time.process_time) for:
- embed one message: numpy (`MiniLMEmbedder`, fp32), ONNX Runtime fp32, ONNX Runtime int8
  (memory/core/onnx_minilm.py);
- analyse: `meaning.analyse` (the forward pass plus the word features), numpy and ONNX int8,
  the per-process cache bypassed;
- analyse, cached: the same message again (the per-process LRU);
- compare ×40: decode 40 stored meanings of earlier messages (`from_stored`) and compare them,
  one at a time (`compare`, before) or all at once (`count_repeats`, after); after, with the
  decoded-meanings cache empty (a process's first turn) or holding them (a session's next
  turn: 39 of its 40 earlier messages were decoded on the turn before);
- whole check, before: numpy analyse + 40 × (`from_stored` + `compare`);
- whole check, after: ONNX int8 analyse + 40 × `from_stored` + `count_repeats`, cold and warm.
The steps are taken in turn, run by run, so a change in load falls on all of them alike. The
machine is shared: the load average is printed before and after; rerun when it is high.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")

import django  # noqa: E402

django.setup()

from memory.conversations import meaning  # noqa: E402
from memory.core.embeddings import MiniLMEmbedder  # noqa: E402
from memory.core.onnx_minilm import OnnxMiniLM  # noqa: E402


def measure(steps, runs):
    """Each step `runs` times, the steps taken in turn (step 1, step 2, …, step 1, …) so that a
    change in the machine's load falls on every step alike."""
    results = {name: ([], []) for name in steps}
    for i in range(runs):
        for name, (function, items) in steps.items():
            item = items[i % len(items)]
            wall, cpu = time.perf_counter(), time.process_time()
            function(item)
            results[name][0].append((time.perf_counter() - wall) * 1e3)
            results[name][1].append((time.process_time() - cpu) * 1e3)
    return results


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--earlier", type=int, default=40)
    args = parser.parse_args()

    rows = [json.loads(line) for line in (ROOT / "bench/repetition/pairs.jsonl").open()]
    texts = sorted({r["current"] for r in rows} | {r["earlier"] for r in rows})
    random.Random(17).shuffle(texts)
    numpy_model = MiniLMEmbedder()
    numpy_model.load()
    # The repeat check's runners: with its adapter merged (round four), as shipped.
    adapter = meaning.repeat_adapter()
    onnx_fp32 = OnnxMiniLM("fp32", adapter=adapter)
    onnx_int8 = OnnxMiniLM("int8", adapter=adapter)
    onnx_fp32.load()
    onnx_int8.load()
    tokens = [len(ids) for ids in numpy_model.tokenize(texts)]
    hasher = meaning._default_hasher  # passed explicitly: bypasses the per-process cache
    stored = [
        meaning.to_stored(meaning.analyse(t, embedder=onnx_int8, hasher=hasher))
        for t in texts[:200]
    ]
    sessions = [stored[i : i + args.earlier] for i in range(0, 200 - args.earlier, 7)]

    def embed(model):
        return lambda text: model.encode_with_tokens(text, layer=meaning.WORD_LAYER)

    def analyse(model):
        return lambda text: meaning.analyse(text, embedder=model, hasher=hasher)

    def cached(text):
        meaning.analyse(text, embedder=onnx_int8)

    seen = texts[:200]  # within the cache's 256
    for text in seen:
        cached(text)

    current = meaning.analyse(texts[0], embedder=onnx_int8, hasher=hasher)

    # Before: the first version's stored bytes (a loop per word to read) and no cache.
    first_version = {b: meaning.to_stored_v1(meaning.from_stored(b)) for b in stored}

    def compare_one_by_one(session):
        for blob in session:
            meaning.same_meaning(meaning._from_stored_v1(first_version[blob]), current)

    def compare_all(session):
        meaning.count_repeats(current, [(meaning.from_stored(b), False) for b in session])

    def compare_all_cold(session):
        meaning._decoded.clear()  # nothing decoded before: the first turn of a process
        compare_all(session)

    def check_before(text):
        now = meaning.analyse(text, embedder=numpy_model, hasher=hasher)
        for blob in sessions[0]:
            meaning.same_meaning(meaning._from_stored_v1(first_version[blob]), now)

    def check_after(text):
        now = meaning.analyse(text, embedder=onnx_int8, hasher=hasher)
        meaning.count_repeats(now, [(meaning.from_stored(b), False) for b in sessions[0]])

    def check_after_cold(text):
        meaning._decoded.clear()
        check_after(text)

    steps = {
        "embed, numpy fp32 (before)": (embed(numpy_model), texts),
        "embed, ONNX Runtime fp32": (embed(onnx_fp32), texts),
        "embed, ONNX Runtime int8 (after)": (embed(onnx_int8), texts),
        "analyse, numpy (before)": (analyse(numpy_model), texts),
        "analyse, ONNX int8 (after)": (analyse(onnx_int8), texts),
        "analyse, same text again (LRU)": (cached, seen),
        f"compare ×{args.earlier}, one by one (before)": (compare_one_by_one, sessions),
        f"compare ×{args.earlier}, all at once, none decoded before (after)": (
            compare_all_cold,
            sessions,
        ),
        f"compare ×{args.earlier}, all at once, decoded last turn (after)": (compare_all, sessions),
        f"**whole check, before** (numpy + {args.earlier} compares)": (check_before, texts),
        "**whole check, after**, none decoded before": (check_after_cold, texts),
        "**whole check, after**, earlier decoded last turn": (check_after, texts),
    }
    load_before = os.getloadavg()
    measure(steps, 20)  # warm up
    results = measure(steps, args.runs)
    print(
        f"{len(texts)} messages, median {statistics.median(tokens)} tokens "
        f"(max {max(tokens)}); {args.runs} runs each; load average before {load_before}, "
        f"after {os.getloadavg()}"
    )
    print(f"stored meaning: median {statistics.median(len(b) for b in stored)} bytes")
    print()
    print("| step | wall p50 | wall p99 | CPU p50 | CPU p99 |")
    print("|---|---|---|---|---|")
    for name, (walls, cpus) in results.items():
        print(
            f"| {name} | {statistics.median(walls):.2f} ms | {quantile(walls, 0.99):.2f} ms | "
            f"{statistics.median(cpus):.2f} ms | {quantile(cpus, 0.99):.2f} ms |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
