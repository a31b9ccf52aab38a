"""The numpy all-MiniLM-L6-v2, the hashing embedder for tests, and vector storage."""

import math
import threading

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured

from memory.core import embeddings
from memory.core.embeddings import (
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    bytes_to_matrix,
    bytes_to_vector,
    get_embedder,
    vector_to_bytes,
)


@pytest.fixture(scope="module")
def minilm():
    model = MiniLMEmbedder()
    model.load()
    return model


def cos(a, b):
    return float(np.dot(a, b))


# --- Numerics ---------------------------------------------------------------------------------


def test_erf_and_gelu_match_the_exact_functions_to_float32_precision():
    x = np.linspace(-10, 10, 20001, dtype=np.float32)
    exact_erf = np.array([math.erf(float(v)) for v in x])
    exact_gelu = np.array([float(v) * 0.5 * (1 + math.erf(float(v) / math.sqrt(2))) for v in x])
    assert np.abs(embeddings.erf(x) - exact_erf).max() < 1e-6
    gelu = embeddings.gelu_(x.copy())
    assert gelu.dtype == np.float32
    assert np.abs(gelu - exact_gelu).max() < 1e-6
    # Not the tanh approximation: it differs from the erf form by ~1e-3 around |x| ≈ 2.
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    assert np.abs(tanh_form - exact_gelu).max() > 1e-4


def test_gelu_works_across_chunk_boundaries_in_place():
    x = np.random.default_rng(0).normal(0, 3, size=(3, embeddings.GELU_CHUNK)).astype(np.float32)
    expected = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.ravel().tolist()])
    out = embeddings.gelu_(x)
    assert out is x
    assert np.abs(x.ravel() - expected).max() < 1e-5


# --- MiniLM -----------------------------------------------------------------------------------


def test_tokenizer_is_bert_uncased_wordpiece(minilm):
    # bert-base-uncased vocabulary: [CLS] where is my daughter ? [SEP]
    assert minilm.tokenize(["Where is my DAUGHTER?"]) == [[101, 2073, 2003, 2026, 2684, 1029, 102]]
    # Unknown words split into pieces rather than becoming [UNK] (100).
    pieces = minilm.tokenizer.encode("Gwendolyn's tomatoes").tokens
    assert "[UNK]" not in pieces and any(p.startswith("##") for p in pieces)


def test_long_texts_are_truncated_to_the_sentence_transformers_limit(minilm):
    assert minilm.max_length == 256
    ids = minilm.tokenize(["word " * 600])[0]
    assert len(ids) == 256 and ids[0] == 101 and ids[-1] == 102
    # Everything past the limit is ignored, as in sentence-transformers.
    a, b = minilm.encode(["word " * 600, "word " * 300 + "tomato " * 300])
    assert cos(a, b) > 0.9999


def test_vectors_are_unit_float32_rows_in_input_order(minilm):
    texts = ["short", "a much longer sentence about going to the market on Sunday morning", ""]
    vectors = minilm.encode(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Sorting by length inside encode must not reorder the output.
    for text, vector in zip(texts, vectors, strict=True):
        assert np.allclose(minilm.encode([text])[0], vector, atol=1e-5)
    assert minilm.encode([]).shape == (0, 384)
    with pytest.raises(TypeError):
        minilm.encode("a bare string")


def test_padding_does_not_change_a_vector(minilm):
    short = "Sarah visits on Sundays."
    alone = minilm.encode([short])[0]
    padded = minilm.encode([short, "A long sentence that forces padding " * 8])[0]
    assert np.abs(alone - padded).max() < 1e-5


def test_one_text_goes_through_onnx_runtime_with_numpy_s_vector():
    fast, numpy_only = MiniLMEmbedder(), MiniLMEmbedder(onnx=False)
    for text in ["Where is my daughter?", "x " * 300, "Tea at four with Margaret, then the bus"]:
        assert np.abs(fast.encode([text])[0] - numpy_only.encode([text])[0]).max() < 1e-5
    assert fast._onnx_runner is not None
    assert not fast._loaded  # the numpy weights (90 MB) are read only when a batch needs them
    assert numpy_only._onnx_runner is None


def test_without_onnx_runtime_one_text_falls_back_to_numpy_and_says_so_once(monkeypatch, caplog):
    from memory.core import onnx_minilm

    def unavailable(self):
        raise ImportError("no onnxruntime here")

    monkeypatch.setattr(onnx_minilm.OnnxMiniLM, "load", unavailable)
    model = MiniLMEmbedder()
    with caplog.at_level("WARNING", logger="memory.core.embeddings"):
        first = model.encode(["Where is my daughter?"])[0]
        second = model.encode(["When will Sarah visit?"])[0]
    assert [r.getMessage() for r in caplog.records].count(
        "embeddings: ONNX Runtime unavailable, one text at a time in numpy"
    ) == 1
    reference = MiniLMEmbedder(onnx=False)
    assert np.abs(first - reference.encode(["Where is my daughter?"])[0]).max() < 1e-6
    assert np.abs(second - reference.encode(["When will Sarah visit?"])[0]).max() < 1e-6


def test_small_batches_give_the_same_vectors(minilm):
    texts = [f"Message number {i} about the garden and {'roses ' * (i % 7)}" for i in range(40)]
    tiny = MiniLMEmbedder(tokens_per_batch=64, max_batch=3)
    assert np.abs(tiny.encode(texts) - minilm.encode(texts)).max() < 1e-5


def test_similarities_match_the_published_sentence_transformers_figures(minilm):
    # sentence-transformers' quickstart for all-MiniLM-L6-v2 prints this matrix (torch):
    # [[1.0000, 0.6660, 0.1046], [0.6660, 1.0000, 0.1411], [0.1046, 0.1411, 1.0000]]
    v = minilm.encode(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    sims = v @ v.T
    assert sims[0, 1] == pytest.approx(0.6660, abs=6e-5)
    assert sims[0, 2] == pytest.approx(0.1046, abs=6e-5)
    assert sims[1, 2] == pytest.approx(0.1411, abs=6e-5)


def test_meaning_not_words(minilm):
    daughter, sarah, soup = minilm.encode(
        ["Where is my daughter?", "When will Sarah visit?", "I like tomato soup"]
    )
    assert cos(daughter, sarah) > cos(daughter, soup) + 0.2
    garden, flowers, taxes = minilm.encode(
        ["I used to grow roses in my garden", "She loved planting flowers", "The tax office called"]
    )
    assert cos(garden, flowers) > cos(garden, taxes) + 0.2


def test_first_encode_from_many_threads_loads_once_and_agrees(minilm):
    fresh = MiniLMEmbedder()
    texts = ["Tea at four with Margaret", "The dog is called Biscuit"]
    results, errors = [], []

    def work():
        try:
            results.append(fresh.encode(texts))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    expected = minilm.encode(texts)
    assert all(np.abs(r - expected).max() < 1e-5 for r in results)


# --- Hashing ----------------------------------------------------------------------------------


def test_hashing_embedder_is_deterministic_and_lexical():
    h = HashingEmbedder()
    assert isinstance(h, Embedder) and h.dim == 384
    a, b, c, empty = h.encode(["Sarah visits on Sunday", "sarah VISITS sunday", "tomato soup", ""])
    assert np.allclose(h.encode(["Sarah visits on Sunday"])[0], a)
    assert np.isclose(np.linalg.norm(a), 1.0)
    assert cos(a, b) > 0.7 and abs(cos(a, c)) < 0.3
    assert not empty.any()  # nothing to hash: a zero row, never NaN
    # Word pieces: "gardening" and "garden" share trigrams.
    g1, g2, g3 = h.encode(["gardening", "garden", "xylophone"])
    assert cos(g1, g2) > cos(g1, g3) + 0.3
    assert HashingEmbedder(dim=16).encode(["x"]).shape == (1, 16)
    assert h.encode([]).shape == (0, 384)


# --- Choosing the embedder --------------------------------------------------------------------


def test_get_embedder_follows_the_setting_and_is_a_singleton(settings):
    settings.CLARA_EMBEDDER = "hashing"
    first = get_embedder()
    assert isinstance(first, HashingEmbedder) and get_embedder() is first
    settings.CLARA_EMBEDDER = "minilm"
    model = get_embedder()
    assert isinstance(model, MiniLMEmbedder) and model.name == "all-MiniLM-L6-v2"
    assert get_embedder() is model
    settings.CLARA_EMBEDDER = "word2vec"
    with pytest.raises(ImproperlyConfigured, match="CLARA_EMBEDDER"):
        get_embedder()


# --- Storage ----------------------------------------------------------------------------------


def test_vectors_round_trip_as_little_endian_float32():
    v = np.array([1.5, -2.25, 0.0, 3.0e-5], dtype=np.float64)
    raw = vector_to_bytes(v)
    assert raw == np.array(v, dtype="<f4").tobytes() and len(raw) == 16
    back = bytes_to_vector(memoryview(raw))
    assert back.dtype == np.float32 and np.array_equal(back, v.astype(np.float32))
    back[0] = 9  # a writable copy, not a view of the stored bytes
    matrix = bytes_to_matrix([raw, vector_to_bytes(np.ones(4))], 4)
    assert matrix.shape == (2, 4) and matrix[1].tolist() == [1, 1, 1, 1]
    assert bytes_to_matrix([], 4).shape == (0, 4)


def test_malformed_stored_vectors_are_refused():
    with pytest.raises(ValueError):
        bytes_to_vector(b"\x00\x01\x02")
    with pytest.raises(ValueError, match="vector 1"):
        bytes_to_matrix([bytes(16), bytes(12)], 4)
    with pytest.raises(ValueError):
        vector_to_bytes(np.zeros((2, 4)))
