#!/usr/bin/env python
"""Train the repeat check's LoRA adapter for MiniLM (issue 17, round four).

Two steps, two interpreters (torch is never a dependency of the project):

    # 1. in the project's venv: canonical texts of the training pairs and of the tuning half
    #    of pairs.jsonl (what meaning.analyse embeds), and numpy reference vectors
    export CLARA_BENCH_DIR=../benchdata        # any directory outside the checkout
    DEBUG=1 .venv/bin/python bench/repetition_train.py prepare

    # 2. in a separate venv with CPU torch (outside the checkout):
    #    python3 -m venv $CLARA_BENCH_DIR/train-venv
    #    $CLARA_BENCH_DIR/train-venv/bin/pip install torch==2.13.0 safetensors tokenizers numpy
    $CLARA_BENCH_DIR/train-venv/bin/python \
        bench/repetition_train.py train --model-dir "$(.venv/bin/python -c \
        'from memory.core.embeddings import model_dir; print(model_dir())')" \
        --out memory/data/repeat_adapter.npz

Training: MiniLM written here in torch from the shipped safetensors (checked against the numpy
pass's vectors, cosine ≥ 0.9999, before anything is trained), every weight frozen; low-rank
adapters (W + alpha/r · B·A, B starting at zero) on the attention's query, key, value and output
and on both FFN products of all six layers. Loss: multiple-negatives ranking (softmax over cosine
× SCALE) of each repeat pair against the other pairs of the batch and its own hard negative (a
message labelled "not a repeat" beside one of the two), both directions; messages of one concern
(connected by repeat pairs) are never each other's negatives. One thread, seed 0.

Selection: after each epoch, the plain cosine of the adapted model on the tuning half of
bench/repetition/pairs.jsonl (never the held-out half): its best recall at precision ≥ 0.9 and
the ranking AUC. The adapter of the best epoch is written (float16 matrices; rank 16: 1.3 MB;
the shipped file is a mean of several runs: bench/repetition_average.py).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "bench" / "repetition" / "train_pairs.jsonl"
TARGETS = ("query", "key", "value", "attn_out", "inner", "out")


def bench_dir() -> Path:
    path = Path(os.environ.get("CLARA_BENCH_DIR", "/tmp/clara-bench"))
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- Step 1: prepare (project venv) ----------------------------------------------------------


def prepare() -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
    import django

    django.setup()
    from repetition_eval import load, split

    from memory.conversations.wording import canonical_text
    from memory.core.embeddings import MiniLMEmbedder

    train = [json.loads(line) for line in TRAIN.read_text().splitlines() if line.strip()]
    tuning, _ = split(load())
    for row in train + tuning:
        row["earlier_c"] = canonical_text(row["earlier"])
        row["current_c"] = canonical_text(row["current"])
    probe = [r["earlier_c"] for r in tuning[:40]]
    reference = MiniLMEmbedder().encode(probe)
    out = bench_dir() / "train_prepared.json"
    out.write_text(
        json.dumps(
            {
                "train": train,
                "tuning": [
                    {k: r[k] for k in ("id", "label", "earlier_c", "current_c")} for r in tuning
                ],
                "probe": probe,
                "reference": reference.tolist(),
            }
        )
    )
    print(f"{out}: {len(train)} training pairs, {len(tuning)} tuning pairs")


# --- Step 2: train (torch venv) --------------------------------------------------------------


def build_model(model_dir: Path, rank: int, alpha: float, targets: tuple[str, ...], seed: int):
    import torch
    from safetensors.numpy import load_file

    torch.manual_seed(seed)
    config = json.loads((model_dir / "config.json").read_text())
    w = {
        k: torch.tensor(np.asarray(v, dtype=np.float32))
        for k, v in load_file(str(model_dir / "model.safetensors")).items()
    }
    heads = int(config["num_attention_heads"])
    hidden = int(config["hidden_size"])
    eps = float(config["layer_norm_eps"])
    layers = int(config["num_hidden_layers"])
    names = {
        "query": "attention.self.query",
        "key": "attention.self.key",
        "value": "attention.self.value",
        "attn_out": "attention.output.dense",
        "inner": "intermediate.dense",
        "out": "output.dense",
    }

    class Lora(torch.nn.Module):
        def __init__(self, weight, bias):
            super().__init__()
            self.weight, self.bias = weight, bias
            out_f, in_f = weight.shape
            self.a = torch.nn.Parameter(torch.randn(rank, in_f) / math.sqrt(in_f))
            self.b = torch.nn.Parameter(torch.zeros(out_f, rank))
            self.scale = alpha / rank

        def forward(self, x):
            return x @ self.weight.T + self.bias + self.scale * ((x @ self.a.T) @ self.b.T)

    class Plain(torch.nn.Module):
        def __init__(self, weight, bias):
            super().__init__()
            self.weight, self.bias = weight, bias

        def forward(self, x):
            return x @ self.weight.T + self.bias

    class MiniLM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linears = torch.nn.ModuleDict()
            for i in range(layers):
                for target, name in names.items():
                    p = f"encoder.layer.{i}.{name}"
                    cls = Lora if target in targets else Plain
                    self.linears[f"l{i}_{target}"] = cls(w[p + ".weight"], w[p + ".bias"])

        def forward(self, ids, mask):
            n, t = ids.shape
            x = w["embeddings.word_embeddings.weight"][ids]
            x = (
                x
                + w["embeddings.position_embeddings.weight"][:t]
                + w["embeddings.token_type_embeddings.weight"][0]
            )
            x = torch.nn.functional.layer_norm(
                x, (hidden,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps
            )
            bias = (1.0 - mask[:, None, None, :].float()) * -1e9
            d = hidden // heads
            for i in range(layers):
                p = f"encoder.layer.{i}."

                def lin(k, i=i):
                    return self.linears[f"l{i}_{k}"]

                def split(y):
                    return y.view(n, t, heads, d).transpose(1, 2)

                q, k, v = split(lin("query")(x)), split(lin("key")(x)), split(lin("value")(x))
                scores = q @ k.transpose(-1, -2) / math.sqrt(d) + bias
                ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(n, t, hidden)
                x = torch.nn.functional.layer_norm(
                    lin("attn_out")(ctx) + x,
                    (hidden,),
                    w[p + "attention.output.LayerNorm.weight"],
                    w[p + "attention.output.LayerNorm.bias"],
                    eps,
                )
                inner = torch.nn.functional.gelu(lin("inner")(x))
                x = torch.nn.functional.layer_norm(
                    lin("out")(inner) + x,
                    (hidden,),
                    w[p + "output.LayerNorm.weight"],
                    w[p + "output.LayerNorm.bias"],
                    eps,
                )
            m = mask[:, :, None].float()
            pooled = (x * m).sum(1) / m.sum(1)
            return torch.nn.functional.normalize(pooled, dim=-1)

    return MiniLM(), layers


def adapter_arrays(model, rank: int, alpha: float) -> dict[str, np.ndarray]:
    """The adapter as the project reads it: `l{i}_{target}_a` (r, in), `l{i}_{target}_b`
    (out, r) with the scale folded into B, float16."""
    out: dict[str, np.ndarray] = {}
    for name, module in model.linears.items():
        if hasattr(module, "a"):
            out[name + "_a"] = module.a.detach().numpy().astype(np.float16)
            out[name + "_b"] = (module.b.detach().numpy() * (alpha / rank)).astype(np.float16)
    return out


def train(args) -> None:
    import torch
    from tokenizers import Tokenizer

    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    data = json.loads((bench_dir() / "train_prepared.json").read_text())
    tokenizer = Tokenizer.from_file(str(args.model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    targets = tuple(args.targets.split(","))
    model, _ = build_model(args.model_dir, args.rank, args.alpha, targets, args.seed)

    def encode(texts):
        enc = tokenizer.encode_batch(list(texts))
        t = max(len(e.ids) for e in enc)
        ids = torch.zeros((len(enc), t), dtype=torch.long)
        mask = torch.zeros((len(enc), t), dtype=torch.long)
        for row, e in enumerate(enc):
            ids[row, : len(e.ids)] = torch.tensor(e.ids)
            mask[row, : len(e.ids)] = 1
        return model(ids, mask)

    def embed(texts, batch=64):
        with torch.no_grad():
            return torch.cat(
                [encode(texts[i : i + batch]) for i in range(0, len(texts), batch)]
            ).numpy()

    # The torch pass must be the numpy pass before training (B is zero: the base model).
    got = embed(data["probe"])
    ref = np.asarray(data["reference"], dtype=np.float32)
    agreement = float((got * ref).sum(1).min())
    print(f"torch vs numpy forward, least cosine over {len(ref)} texts: {agreement:.6f}")
    if agreement < 0.9999:
        raise SystemExit("the torch forward pass does not reproduce the numpy vectors")

    def dev_scores():
        rows = data["tuning"]
        a = embed([r["earlier_c"] for r in rows])
        b = embed([r["current_c"] for r in rows])
        cos = (a * b).sum(1)
        y = np.asarray([r["label"] for r in rows])
        order = np.argsort(-cos)
        tp = np.cumsum(y[order])
        precision = tp / np.arange(1, len(y) + 1)
        recall = tp / y.sum()
        ok = precision >= 0.9
        best = float(recall[ok].max()) if ok.any() else 0.0
        pos, neg = cos[y == 1], cos[y == 0]
        auc = float((pos[:, None] > neg[None, :]).mean())
        return best, auc

    # Concerns: messages joined by repeat pairs; hard negatives: messages labelled 0 beside one.
    train_rows = data["train"]
    parent: dict[str, str] = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r in train_rows:
        for text, name in zip((r["earlier_c"], r["current_c"]), r["concerns"], strict=True):
            parent[find(text)] = find("concern:" + name)
    negatives: dict[str, list[str]] = {}
    for r in train_rows:
        if r["label"] == 0:
            negatives.setdefault(r["earlier_c"], []).append(r["current_c"])
            negatives.setdefault(r["current_c"], []).append(r["earlier_c"])
    positives = [(r["earlier_c"], r["current_c"]) for r in train_rows if r["label"] == 1]
    texts = sorted(t for t in parent if not t.startswith("concern:"))
    print(
        f"{len(positives)} repeat pairs, {len(texts)} messages, {len({find(t) for t in texts})} concerns"
    )

    params = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    steps_per_epoch = math.ceil(len(positives) / args.batch)
    total = steps_per_epoch * args.epochs
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / max(1, total // 10)) * max(0.0, (total - s) / total)
    )
    best = (dev_scores(), 0, adapter_arrays(model, args.rank, args.alpha))
    print(f"epoch 0: tuning recall@P0.9 {best[0][0]:.3f} AUC {best[0][1]:.4f}")
    start = time.time()
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(positives))
        total_loss = 0.0
        for s in range(steps_per_epoch):
            batch = [positives[i] for i in order[s * args.batch : (s + 1) * args.batch]]
            if rng.random() < 0.5:
                batch = [(b, a) for a, b in batch]
            anchors = [a for a, _ in batch]
            others = [b for _, b in batch]
            hard = []
            for a, b in batch:
                pool = [
                    n for n in negatives.get(a, []) + negatives.get(b, []) if find(n) != find(a)
                ]
                hard.append(
                    pool[rng.integers(len(pool))] if pool else texts[rng.integers(len(texts))]
                )
            vectors = encode(anchors + others + hard)
            n = len(batch)
            va, vb, vn = vectors[:n], vectors[n : 2 * n], vectors[2 * n :]
            groups = [find(t) for t in anchors]
            same = torch.tensor([[groups[i] == find(t) for t in others + hard] for i in range(n)])
            same_b = torch.tensor([[find(others[i]) == g for g in groups] for i in range(n)])
            own = torch.arange(n)
            logits = args.scale * va @ torch.cat([vb, vn]).T
            logits = logits.masked_fill(
                same & ~torch.nn.functional.one_hot(own, 2 * n).bool(), -1e4
            )
            back = args.scale * vb @ va.T
            back = back.masked_fill(same_b & ~torch.eye(n, dtype=torch.bool), -1e4)
            loss = torch.nn.functional.cross_entropy(
                logits, own
            ) + torch.nn.functional.cross_entropy(back, own)
            # Hard negatives also pushed below a margin in plain cosine (what the detector reads).
            loss = (
                loss + args.margin_weight * torch.relu((va * vn).sum(1) - args.margin).pow(2).mean()
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total_loss += float(loss.detach())
        scores = dev_scores()
        print(
            f"epoch {epoch}: loss {total_loss / steps_per_epoch:.4f}, tuning recall@P0.9 "
            f"{scores[0]:.3f} AUC {scores[1]:.4f} ({time.time() - start:.0f} s)",
            flush=True,
        )
        if scores > best[0]:
            best = (scores, epoch, adapter_arrays(model, args.rank, args.alpha))
    arrays = best[2]
    meta = {
        "rank": args.rank,
        "alpha": args.alpha,
        "targets": targets,
        "epoch": best[1],
        "epochs": args.epochs,
        "lr": args.lr,
        "batch": args.batch,
        "scale": args.scale,
        "margin": args.margin,
        "margin_weight": args.margin_weight,
        "seed": args.seed,
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
    if args.out:
        np.savez(args.out, **arrays)
        print(
            f"{args.out}: epoch {best[1]}, tuning recall@P0.9 {best[0][0]:.3f} AUC {best[0][1]:.4f}, {Path(args.out).stat().st_size} bytes"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("prepare")
    t = sub.add_parser("train")
    t.add_argument("--model-dir", type=Path, required=True)
    t.add_argument("--out", type=Path, default=None)
    t.add_argument("--rank", type=int, default=16)
    t.add_argument("--alpha", type=float, default=32.0)
    t.add_argument("--targets", default=",".join(TARGETS))
    t.add_argument("--epochs", type=int, default=5)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--scale", type=float, default=20.0)
    t.add_argument("--margin", type=float, default=0.4)
    t.add_argument("--margin-weight", type=float, default=1.0)
    t.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.step == "prepare":
        prepare()
    else:
        train(args)


if __name__ == "__main__":
    main()
