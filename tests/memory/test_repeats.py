"""Repeats by meaning in the product (issue 17): the per-turn query and the exchange write count a
question put in other words; the meaning is analysed once, stored encrypted and read back, never
re-embedded; rows without one, and deployments that cannot analyse, keep the fingerprint rule."""

import uuid

import numpy as np
import pytest
from django.db import connection

from memory.conversations import meaning, repeats, repetition, selectors, services
from memory.core import crypto
from memory.models import RepetitionRecord, Session

pytestmark = pytest.mark.django_db

COAT = "Where's my coat? I need to go out"
JACKET = "Have you seen my jacket?"


@pytest.fixture(autouse=True)
def _cold_caches():
    repeats.clear_caches()
    yield
    repeats.clear_caches()


@pytest.fixture
def analysed(monkeypatch):
    """Every message the model analyses, in order."""
    seen: list[str] = []
    real = meaning.analyse

    def counting(message, **kwargs):
        seen.append(message)
        return real(message, **kwargs)

    monkeypatch.setattr(meaning, "analyse", counting)
    return seen


def talk(session_id, message, reply="I'm right here with you.", **extra):
    return services.exchange_record(
        session_id=session_id, user_message=message, assistant_message=reply, **extra
    )


def latest_record(session_id) -> RepetitionRecord:
    return RepetitionRecord.objects.filter(session_id=session_id).order_by("timestamp").last()


def raw_meanings() -> list:
    with connection.cursor() as cursor:
        cursor.execute("SELECT meaning FROM repetition_tracking ORDER BY timestamp")
        return [row[0] for row in cursor.fetchall()]


def test_a_question_in_other_words_is_a_repeat_for_the_turn_and_for_the_record(api):
    session_id = uuid.uuid4()
    talk(session_id, COAT)

    body = api.post(f"/api/v1/sessions/{session_id}/query", {"message": JACKET}).json()
    talk(session_id, JACKET)

    assert (body["is_repeat"], body["repeat_count"]) == (True, 1)
    assert latest_record(session_id).repeat_count == 1


def test_the_fingerprint_rule_alone_would_miss_it():
    assert not repetition.is_repeat_of(
        fingerprint_=repetition.fingerprint(JACKET),
        question_type_=repetition.question_type(JACKET),
        earlier_fingerprint=repetition.fingerprint(COAT),
        earlier_type=repetition.question_type(COAT),
    )


def test_question_types_still_make_repeats():
    session_id = uuid.uuid4()
    talk(session_id, "Where am I?")

    result = selectors.memory_query(session_id=session_id, message="Where are we?")

    assert (result.repeat_count, result.question_type) == (1, "location")


def test_an_opposite_is_not_a_repeat_though_its_words_match():
    session_id = uuid.uuid4()
    talk(session_id, "I want to go home")

    result = selectors.memory_query(session_id=session_id, message="I don't want to go home")

    assert result.repeat_count == 0


def test_paraphrases_count_towards_the_chronic_flag():
    session_id = uuid.uuid4()
    for line in ["I want to go home.", "Take me home, please.", "Can I go home now?"] * 2:
        talk(session_id, line)

    session = Session.objects.get(id=session_id)
    assert latest_record(session_id).repeat_count == 5
    assert session.chronic_repetition_pattern is True


def test_the_meaning_is_stored_encrypted_and_reads_back_as_it_was():
    session_id = uuid.uuid4()
    talk(session_id, COAT)

    (raw,) = raw_meanings()
    record = latest_record(session_id)
    # Bound to its column and to its repetition record (issue 15).
    assert bytes(raw).startswith(
        f"{crypto.ROW_PREFIX}{crypto.keyring().primary.kid}:{record.id}:".encode()
    )
    assert b"coat" not in bytes(raw).lower()
    stored = repeats.from_db(raw, record.id)
    fresh = meaning.analyse(COAT)
    # Stored as float16 from the int8 model (memory/core/onnx_minilm.py): close, not identical.
    assert float(stored.vector @ fresh.vector) > 0.99
    assert len(stored.words) == len(fresh.words)
    # The ORM reads the stored bytes (`meaning.to_stored`), decrypted.
    assert repeats.decode_meaning(record.meaning) is not None


def test_a_turn_analyses_its_own_message_once_and_never_the_history(api, analysed):
    session_id = uuid.uuid4()
    for line in [COAT, "I like tea", "Where am I?", "Is it raining?"]:
        talk(session_id, line)
    analysed.clear()

    api.post(f"/api/v1/sessions/{session_id}/context", {"message": JACKET})
    talk(session_id, JACKET)

    assert analysed == [JACKET]
    assert latest_record(session_id).repeat_count == 1


def test_the_write_after_context_compares_no_pair_again(api, monkeypatch):
    session_id = uuid.uuid4()
    for line in [COAT, "Where's my scarf?", "Is my coat by the door?"]:
        talk(session_id, line)
    compared = []
    real = meaning.compare
    monkeypatch.setattr(meaning, "compare", lambda *a: compared.append(a) or real(*a))

    body = api.post(f"/api/v1/sessions/{session_id}/context", {"message": JACKET}).json()
    at_context = len(compared)
    talk(session_id, JACKET)

    assert at_context > 0  # the turn compared the message with the session's rows
    assert len(compared) == at_context  # the write reused those verdicts
    assert latest_record(session_id).repeat_count == body["analysis"]["repeat_count"] >= 1


def test_the_first_message_of_a_session_is_analysed_by_the_write(api, analysed):
    session_id = uuid.uuid4()
    services.session_resolve(session_id=session_id)

    body = api.post(f"/api/v1/sessions/{session_id}/context", {"message": COAT}).json()
    assert analysed == []  # nothing to compare it with yet
    talk(session_id, COAT)

    assert body["analysis"]["repeat_count"] == 0
    assert analysed == [COAT]
    assert raw_meanings()[0] is not None


def test_a_retried_exchange_is_not_analysed_twice(analysed):
    session_id = uuid.uuid4()
    talk(session_id, COAT, idempotency_key="turn-1")
    talk(session_id, COAT, idempotency_key="turn-1")

    assert analysed == [COAT]


def test_secrets_are_redacted_before_the_meaning_is_made(analysed):
    talk(uuid.uuid4(), "My password is hunter2, where is my coat?")

    assert analysed and "hunter2" not in analysed[0]


def test_a_row_without_a_meaning_is_compared_by_its_fingerprint():
    session_id = uuid.uuid4()
    talk(session_id, COAT)
    talk(session_id, "Where am I?")
    RepetitionRecord.objects.filter(session_id=session_id).update(meaning=None)

    assert selectors.memory_query(session_id=session_id, message=JACKET).repeat_count == 0
    assert selectors.memory_query(session_id=session_id, message="Where are we?").repeat_count == 1


def test_a_meaning_of_another_stored_version_is_compared_by_its_fingerprint():
    session_id = uuid.uuid4()
    talk(session_id, COAT)
    foreign = crypto.encrypt_bytes(
        b"\x09 no stored meaning of this version", context=repeats.MEANING_CONTEXT
    )
    RepetitionRecord.objects.filter(session_id=session_id).update(meaning=None)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE repetition_tracking SET meaning = %s", [foreign])

    assert selectors.memory_query(session_id=session_id, message=JACKET).repeat_count == 0


@pytest.mark.parametrize("version", [2, 3])
def test_a_row_stored_before_the_adapter_is_compared_by_its_words_only(version):
    # Stored meanings of version 2 and 3 (before issue 17's fourth round) hold the base model's
    # vectors, which do not compare with the adapted model's: no data migration; they are read
    # as they are and only the fingerprint rule can match them (opposites still excluded).
    # (This test said before that a version 2 row is still compared by meaning: true until the
    # adapter changed the vectors.)
    from memory.core.embeddings import MiniLMEmbedder

    base = MiniLMEmbedder()
    session_id = uuid.uuid4()
    talk(session_id, COAT)
    write = meaning.to_stored_v2 if version == 2 else meaning.to_stored_v3
    old = crypto.encrypt_bytes(
        write(meaning.analyse(COAT, embedder=base)), context=repeats.MEANING_CONTEXT
    )
    with connection.cursor() as cursor:
        cursor.execute("UPDATE repetition_tracking SET meaning = %s", [old])

    stored = repeats.from_db(raw_meanings()[0])
    assert stored.space == 0 and meaning.repeat_embedder().space != 0
    if version == 2:
        assert stored.particles == 0
    assert selectors.memory_query(session_id=session_id, message=JACKET).repeat_count == 0
    assert selectors.memory_query(session_id=session_id, message=COAT).repeat_count == 1


def test_a_row_stored_by_the_adapted_model_is_compared_by_meaning():
    session_id = uuid.uuid4()
    talk(session_id, COAT)
    assert repeats.from_db(raw_meanings()[0]).space == meaning.repeat_embedder().space
    assert selectors.memory_query(session_id=session_id, message=JACKET).repeat_count == 1


def test_letting_the_cat_out_does_not_repeat_letting_it_in():
    # Same content words (the fingerprint rule matches them); the particle says the opposite.
    session_id = uuid.uuid4()
    talk(session_id, "Let the cat in.")

    result = selectors.memory_query(session_id=session_id, message="Let the cat out.")
    talk(session_id, "Let the cat out.")

    assert result.repeat_count == 0
    assert latest_record(session_id).repeat_count == 0
    assert (
        selectors.memory_query(session_id=session_id, message="Let the cat in.").repeat_count == 1
    )


def test_with_semantic_repeats_off_only_the_words_count_and_nothing_is_stored(settings, analysed):
    settings.CLARA_SEMANTIC_REPEATS = False
    session_id = uuid.uuid4()
    talk(session_id, COAT)

    assert selectors.memory_query(session_id=session_id, message=JACKET).repeat_count == 0
    assert raw_meanings() == [None]
    assert analysed == []


def test_an_embedder_that_cannot_analyse_leaves_the_fingerprint_rule(settings):
    settings.CLARA_EMBEDDER = "hashing"
    session_id = uuid.uuid4()
    talk(session_id, COAT)

    assert selectors.memory_query(session_id=session_id, message=JACKET).repeat_count == 0
    assert raw_meanings() == [None]


def test_the_turn_analyses_with_the_repeat_check_s_own_runner(monkeypatch, settings):
    # The detector was fitted and its cost measured with `meaning.repeat_embedder()` (ONNX
    # Runtime int8 by default), not with long-term memory search's numpy embedder.
    settings.CLARA_REPEAT_EMBEDDER = "onnx-int8"
    used = []
    real = meaning.analyse

    def recording(message, **kwargs):
        used.append(kwargs.get("embedder"))
        return real(message, **kwargs)

    monkeypatch.setattr(meaning, "analyse", recording)
    session_id = uuid.uuid4()
    talk(session_id, COAT)
    selectors.memory_query(session_id=session_id, message=JACKET)

    assert used and all(e is meaning.repeat_embedder() for e in used)
    assert type(used[0]).__name__ == "OnnxMiniLM"


def test_a_failed_analysis_still_stores_the_exchange(monkeypatch):
    def broken(message, **kwargs):
        raise RuntimeError("model files missing")

    monkeypatch.setattr(meaning, "analyse", broken)
    session_id = uuid.uuid4()
    talk(session_id, "Where am I?")
    talk(session_id, "Where am I?")

    assert latest_record(session_id).repeat_count == 1
    assert raw_meanings() == [None, None]


def test_the_cache_is_keyed_without_the_text(settings):
    repeats.meaning_of("Where is my blue cardigan?")
    keys = list(repeats._analysed._items)
    assert len(keys) == 1
    assert "cardigan" not in keys[0]


# --- Grouping for caregivers --------------------------------------------------------------------


# One person's fingerprints (keyed per person).
SCOPE = repetition.scope_of(person_id=uuid.UUID(int=1), session_id=None)


def said(text: str, times: int = 1) -> repeats.Said:
    return repeats.Said(
        key=text,
        fingerprint=repetition.stored_fingerprint(text, scope=SCOPE),
        times=times,
        meaning=meaning.analyse(text),
    )


def test_group_by_meaning_merges_paraphrases_and_keeps_other_questions_apart():
    groups = repeats.group_by_meaning(
        [
            said("I want to go home.", 3),
            said("Where am I?", 2),
            said("Take me home, please."),
            said("What is this place?"),
            said("What day is it?"),
            said("What time is it?"),
            said("I don't want to go home."),
        ]
    )

    assert [[item.key for item in group] for group in groups] == [
        ["I want to go home.", "Take me home, please."],
        ["Where am I?", "What is this place?"],
        ["What day is it?"],
        ["What time is it?"],
        ["I don't want to go home."],
    ]


def test_group_by_meaning_without_meanings_groups_by_words():
    items = [
        repeats.Said(
            "a", repetition.stored_fingerprint("I want my blue cardigan", scope=SCOPE), 2, None
        ),
        repeats.Said(
            "b", repetition.stored_fingerprint("My blue cardigan, I want it", scope=SCOPE), 1, None
        ),
        repeats.Said(
            "c", repetition.stored_fingerprint("Have you seen my jacket?", scope=SCOPE), 1, None
        ),
    ]

    groups = repeats.group_by_meaning(items)

    assert [[item.key for item in group] for group in groups] == [["a", "b"], ["c"]]


def test_a_stored_meaning_is_unit_length_after_the_round_trip():
    row = uuid.uuid4()
    stored = repeats.from_db(repeats.to_db(meaning.analyse(COAT), row=row), row)
    assert np.isclose(np.linalg.norm(stored.vector), 1.0, atol=1e-2)


# The cosine pre-filter must never hide a repeat the full rule would find.
LINES = [
    "Where am I?", "What is this place?", "I want to go home.", "Take me home, please.",
    "Can I go home now?", "I don't want to go home.", "When is my daughter coming?",
    "Is my daughter on her way?", "Can we have tea?", "Could I have a cup of tea?",
    "What day is it?", "Which day is it today?", "What time is it?", "Where is Tom?",
    "Have you seen Tom?", "Who are you?", "What's your name?", "I like the garden.",
    "The garden is lovely.", "Where is the cat?", "Is the cat here?", "I feel a bit lost.",
    "Hello", "Hi there", COAT, JACKET, "Is it time for my tablets?",
    "Should I be taking my medicine now?", "I can't find my glasses", "Where are my specs?",
    "I'm scared, someone is in the house!", "I miss my wife.", "Has the dog been fed?",
    "Has the cat been fed?", "Is the window open?", "Is the shop open?", "I feel warm",
    "I feel lonely", "My mother used to sing that song.", "Tell me about the garden.",
]  # fmt: skip


def test_no_pair_below_the_cosine_floor_means_the_same():
    meanings = [meaning.analyse(line) for line in LINES]
    floor = repeats.cosine_floor()
    below = 0
    for a in meanings:
        for b in meanings:
            comparison = meaning.compare(a, b)
            if comparison.cosine < floor:
                below += 1
                assert not comparison.same_meaning()
    assert below > len(LINES)  # the filter does skip work


def test_clearing_the_caches_makes_the_next_analysis_run_the_model(monkeypatch):
    """Benchmarks time "a message this process has not seen" after `clear_caches()`: the
    detector's own cache must be cleared too, or the forward pass is silently skipped."""
    passes: list[str] = []
    real = meaning._analyse

    def counting(message, embedder, hasher):
        passes.append(message)
        return real(message, embedder, hasher)

    monkeypatch.setattr(meaning, "_analyse", counting)
    first = repeats.meaning_of(JACKET)
    assert repeats.meaning_of(JACKET) is first and len(passes) == 1
    repeats.clear_caches()
    repeats.meaning_of(JACKET)
    assert len(passes) == 2
