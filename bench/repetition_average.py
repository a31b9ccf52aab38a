#!/usr/bin/env python
"""Average several repeat-check adapters into one low-rank adapter (issue 17, rounds five and six).

    .venv/bin/python bench/repetition_average.py --out memory/data/repeat_adapter.npz \
        --rank 24 $CLARA_BENCH_DIR/a.npz $CLARA_BENCH_DIR/b.npz ...

Each adapter is a low-rank change of MiniLM's linear products (W + B·A, the scale folded into
B; memory/core/embeddings.py). Runs trained with different seeds (or sets) make different
mistakes; their merged changes B·A are averaged product by product and the mean is factored
back to `--rank` by SVD (B = U·√S, A = √S·Vᵀ, float16). The adapter is merged into the model's
weights when it loads, so neither the rank nor the number of runs changes what the check costs.
Pass a file twice to weigh it twice (a file that is itself a mean of two runs). Prints the
share of each mean change's energy the rank keeps (the least and the mean over products). numpy
only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def average(paths: list[Path], rank: int) -> tuple[dict[str, np.ndarray], list[float]]:
    files = [np.load(p) for p in paths]
    names = [n.removesuffix("_a") for n in files[0].files if n.endswith("_a")]
    arrays: dict[str, np.ndarray] = {}
    kept: list[float] = []
    for name in names:
        delta = sum(
            f[name + "_b"].astype(np.float32) @ f[name + "_a"].astype(np.float32) for f in files
        ) / len(files)
        u, s, vt = np.linalg.svd(delta, full_matrices=False)
        kept.append(float((s[:rank] ** 2).sum() / (s**2).sum()))
        root = np.sqrt(s[:rank])
        arrays[name + "_b"] = (u[:, :rank] * root).astype(np.float16)
        arrays[name + "_a"] = (root[:, None] * vt[:rank]).astype(np.float16)
    runs = [json.loads(bytes(f["meta"]).decode()) if "meta" in f.files else {} for f in files]
    meta = {**runs[0], "rank": rank, "averaged": runs}
    arrays["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
    return arrays, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("adapters", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rank", type=int, default=16)
    args = parser.parse_args()
    arrays, kept = average(args.adapters, args.rank)
    np.savez(args.out, **arrays)
    print(
        f"{args.out}: {len(args.adapters)} adapters averaged, rank {args.rank}, energy kept "
        f"least {min(kept):.3f} mean {np.mean(kept):.3f}, {args.out.stat().st_size} bytes"
    )


if __name__ == "__main__":
    main()
