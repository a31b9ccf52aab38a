"""The repeat check's fine-tuned adapter (issue 17, round four): it is applied to the repeat
check's runners and only there, its training pairs are kept apart from the evaluation set, rows
stored by the base model are compared by the fingerprint rule alone, and the issue's examples."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from memory.conversations import meaning, repeats
from memory.conversations.meaning import analyse, from_stored, is_repeat, same_meaning, to_stored
from memory.core import onnx_minilm
from memory.core.embeddings import MiniLMEmbedder, adapter_digest, get_embedder

ROOT = Path(__file__).resolve().parents[2]
PAIRS = ROOT / "bench" / "repetition" / "pairs.jsonl"
TRAIN = ROOT / "bench" / "repetition" / "train_pairs.jsonl"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _normalised(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@pytest.fixture(scope="module")
def adapted():
    model = MiniLMEmbedder(adapter=meaning.repeat_adapter())
    model.load()
    return model


@pytest.fixture(scope="module")
def base():
    model = MiniLMEmbedder()
    model.load()
    return model


# --- Kept apart from the evaluation set -------------------------------------------------------


def test_no_training_message_is_an_evaluation_message():
    evaluation = {_normalised(r[k]) for r in _rows(PAIRS) for k in ("earlier", "current")}
    training = {_normalised(r[k]) for r in _rows(TRAIN) for k in ("earlier", "current")}
    assert len(training) > 1000 and len(evaluation) > 1000
    assert not training & evaluation, sorted(training & evaluation)[:10]


def test_the_training_set_has_repeats_and_hard_negatives_in_every_category():
    rows = _rows(TRAIN)
    assert len(rows) > 1000
    assert {r["label"] for r in rows} == {0, 1}
    assert all(set(r) >= {"id", "category", "label", "kind", "earlier", "current"} for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)
    for category in {r["category"] for r in _rows(PAIRS)}:
        labels = {r["label"] for r in rows if r["category"] == category}
        assert labels == {0, 1}, category


# --- The adapter is applied where it should be, and only there ----------------------------------


def test_the_shipped_adapter_is_small_and_found():
    assert meaning.repeat_adapter() == meaning.REPEAT_ADAPTER
    assert meaning.REPEAT_ADAPTER.stat().st_size <= 2 * 1024 * 1024


def test_the_repeat_check_s_vectors_come_from_the_adapted_model(settings, monkeypatch, base):
    text = "Can I have a lie down?"
    plain = base.encode([text])[0]
    for name in meaning.REPEAT_EMBEDDERS:
        monkeypatch.setattr(meaning, "_repeat_embedders", {})
        settings.CLARA_REPEAT_EMBEDDER = name
        embedder = meaning.repeat_embedder()
        assert embedder.space != 0, name
        vector = embedder.encode([text])[0]
        assert float(vector @ plain) < 0.995, name  # the adapter moved it
        assert analyse(text, embedder=embedder).space == embedder.space


def test_the_adapter_can_be_switched_off(settings, monkeypatch, base):
    monkeypatch.setattr(meaning, "_repeat_embedders", {})
    settings.CLARA_REPEAT_ADAPTER = False
    settings.CLARA_REPEAT_EMBEDDER = "numpy"
    embedder = meaning.repeat_embedder()
    assert embedder.space == 0
    assert np.abs(embedder.encode(["Where am I?"]) - base.encode(["Where am I?"])).max() < 1e-6


def test_search_keeps_the_base_model(settings, base, adapted):
    settings.CLARA_EMBEDDER = "minilm"
    search = get_embedder()
    assert getattr(search, "adapter", None) is None and search.space == 0
    text = "I want to go to bed"
    assert np.abs(search.encode([text]) - base.encode([text])).max() < 1e-6
    assert float(search.encode([text])[0] @ adapted.encode([text])[0]) < 0.999


def test_the_merged_numpy_pass_and_the_onnx_graph_agree(adapted):
    fp32 = onnx_minilm.OnnxMiniLM("fp32", adapter=meaning.repeat_adapter())
    for text in ["I want to go to bed", "Is the shop open?", "wheres my dogg"]:
        vector = adapted.encode([text])[0]
        assert np.abs(fp32.encode([text])[0] - vector).max() < 1e-4


def test_the_cached_graph_is_named_by_the_adapter_s_hash(tmp_path):
    adapter = meaning.repeat_adapter()
    digest = adapter_digest(adapter)
    assert digest and digest in onnx_minilm.graph_path("int8", adapter=adapter).name
    assert digest not in onnx_minilm.graph_name("int8")
    assert onnx_minilm.graph_name("fp32", adapter=adapter) != onnx_minilm.graph_name("fp32")
    # Another adapter (here: the same matrices, one value changed) is another graph.
    with np.load(adapter) as lora:
        arrays = {k: lora[k] for k in lora.files}
    first = next(k for k in arrays if k.endswith("_b"))
    arrays[first] = arrays[first].copy()
    arrays[first].flat[0] += np.float16(0.5)
    other = tmp_path / "other.npz"
    np.savez(other, **arrays)
    assert adapter_digest(other) != digest
    assert adapter_digest(other) in onnx_minilm.graph_name("int8", adapter=other)


# --- Rows stored by the base model --------------------------------------------------------------


def test_a_row_stored_before_the_adapter_is_compared_by_the_fingerprint_rule_alone(base, adapted):
    earlier_text, current_text = "Where's my coat? I need to go out", "Have you seen my jacket?"
    current = analyse(current_text, embedder=adapted)
    new_row = from_stored(to_stored(analyse(earlier_text, embedder=adapted)))
    assert new_row.space == adapted.space
    assert is_repeat(new_row, current, fingerprint_match=False)
    # The same message stored before round four: version 3 bytes, the base model's vectors.
    old_row = from_stored(meaning.to_stored_v3(analyse(earlier_text, embedder=base)))
    assert old_row.space == 0
    comparison = meaning.compare(old_row, current)
    assert comparison.other_space and not comparison.same_meaning()
    assert not same_meaning(old_row, current)
    assert not is_repeat(old_row, current, fingerprint_match=False)
    assert meaning.count_repeats(current, [(old_row, False), (new_row, False)]) == 1
    # The fingerprint rule still decides, opposites still excluded.
    assert is_repeat(old_row, current, fingerprint_match=True)
    home = from_stored(meaning.to_stored_v3(analyse("I want to go home", embedder=base)))
    not_home = analyse("I don't want to go home", embedder=adapted)
    assert not is_repeat(home, not_home, fingerprint_match=True)
    assert meaning.count_repeats(not_home, [(home, True)]) == 0


def test_says_again_follows_the_version_rule(base, adapted):
    current = analyse("Have you seen my jacket?", embedder=adapted)
    old = from_stored(meaning.to_stored_v3(analyse("Where's my coat?", embedder=base)))
    assert not repeats.says_again("Where's my coat?", "Have you seen my jacket?", old, current)
    new = analyse("Where's my coat?", embedder=adapted)
    assert repeats.says_again("Where's my coat?", "Have you seen my jacket?", new, current)


# --- The examples -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("earlier", "current"),
    [
        ("Where's my coat? I need to go out", "Have you seen my jacket?"),
        ("I have to catch the bus to work", "I'll miss my train to the office"),
    ],
)
def test_paraphrases_the_base_model_missed_are_repeats(adapted, earlier, current):
    assert is_repeat(
        analyse(earlier, embedder=adapted),
        analyse(current, embedder=adapted),
        fingerprint_match=False,
    )


def test_bed_and_a_lie_down_are_one_ask(adapted):
    # A strict xfail until round six: the cosine went 0.30 (base) -> 0.39 (round four) -> 0.51
    # (round five) -> 0.54 (round six), and the refitted detector gives 0.70 against its cut 0.49.
    assert is_repeat(
        analyse("I want to go to bed", embedder=adapted),
        analyse("Can I have a lie down?", embedder=adapted),
        fingerprint_match=False,
    )


@pytest.mark.parametrize(
    ("earlier", "current"),
    [
        ("Is the window open?", "Is the shop open?"),
        ("I feel warm", "I feel lonely"),
        ("I lost my ring", "I lost my brother in the war"),
        ("Where's my husband?", "Where's my daughter?"),
        # No content word on either side, two wh-words: two questions (the adapted cosine is
        # 0.53, which the detector alone would pass; meaning.Comparison.same_meaning vetoes it).
        ("Where am I?", "Who are you?"),
    ],
)
def test_the_same_frame_asking_for_something_else_is_still_not_a_repeat(adapted, earlier, current):
    assert not is_repeat(
        analyse(earlier, embedder=adapted),
        analyse(current, embedder=adapted),
        fingerprint_match=False,
    )


def test_two_wh_questions_without_content_words_are_two_asks_also_all_at_once(adapted):
    current = analyse("Who are you?", embedder=adapted)
    earlier = [analyse(t, embedder=adapted) for t in ("Where am I?", "Who are you, dear?")]
    assert [c.other_question for c in meaning.compare_many(earlier, current)] == [True, False]
    assert meaning.count_repeats(current, [(e, False) for e in earlier]) == 1
    # One side with a content word: the cosine and the detector still decide.
    assert same_meaning(
        analyse("Where am I?", embedder=adapted), analyse("What is this place?", embedder=adapted)
    )
