"""The repetition strategy through the /context turn (issue 17): Clara keeps a reassurance that
helps, memory-loop stories for a question asked day after day, the story first from five
repeats, and a trajectory read against the person's own usual distress. None of it may show the
LLM that anything was said before (tests/memory/test_context.py checks the words)."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from memory.conversations import selectors, services
from memory.conversations.emotion import EmotionReading
from memory.models import DetectedEmotion
from tests.memory.test_context import forbidden_in

pytestmark = pytest.mark.django_db

HOME = "You're at home, Nana, safe and warm."
CALM = {"emotion": "neutral", "confidence": 0.8, "distress_score": 0.2, "trajectory": "stable"}


def talk(session_id, message, reply="I'm right here with you.", **extra):
    return services.exchange_record(
        session_id=session_id, user_message=message, assistant_message=reply, **extra
    )


def context(api, session_id, message, **fields) -> dict:
    response = api.post(f"/api/v1/sessions/{session_id}/context", {"message": message, **fields})
    assert response.status_code == 200, response.content
    return response.json()


def llm_text(body: dict) -> str:
    return body["system_prompt"] + "\n" + "\n".join(m["content"] for m in body["messages"])


# --- What Clara answered: consistency ------------------------------------------------------------


def test_at_a_repeat_the_reassurance_that_helped_is_asked_for_in_warm_words(api):
    session_id = uuid.uuid4()
    talk(session_id, "Where am I?", HOME, emotion=EmotionReading("confused", 0.8, 0.4, "stable"))
    talk(session_id, "I like the garden.", "The roses are out.")

    body = context(api, session_id, "What is this place?", emotion=CALM)

    assert body["analysis"]["repeat_count"] == 1
    assert "A reassurance that comforts them here is marked [reassurance]" in body["system_prompt"]
    assert f'[reassurance] "{HOME}"' in body["system_prompt"]
    assert forbidden_in(llm_text(body)) == []


def test_the_reassurance_is_the_answer_to_the_question_repeated_not_the_latest_reply(api):
    session_id = uuid.uuid4()
    talk(session_id, "Where am I?", HOME)
    talk(session_id, "I like the garden.", "The roses are out.")

    prompt = context(api, session_id, "Where am I?", emotion=CALM)["system_prompt"]

    assert HOME in prompt
    assert "The roses are out." not in prompt


def test_an_answer_that_is_not_helping_is_not_insisted_on(api):
    session_id = uuid.uuid4()
    talk(session_id, "Where am I?", HOME)
    rising = {**CALM, "emotion": "anxious", "distress_score": 0.6, "trajectory": "escalating"}

    prompt = context(api, session_id, "Where am I?", emotion=rising)["system_prompt"]

    assert "reassurance" not in prompt


def test_a_paraphrase_gets_the_reassurance_too(api):
    session_id = uuid.uuid4()
    talk(session_id, "I want to go home.", "You are home already, and I'm here with you.")

    body = context(api, session_id, "Take me home, please.", emotion=CALM)

    assert body["analysis"]["repeat_count"] == 1
    assert "You are home already" in body["system_prompt"]


# --- Questions asked day after day: memory-loop stories -------------------------------------------


def test_a_question_asked_in_other_sessions_gets_a_memory_loop_story_the_first_time_today(api):
    person_id = uuid.uuid4()
    for days in (3, 2, 1):
        earlier, _ = services.session_resolve(user_id=person_id)
        talk(earlier.id, "Where am I?", HOME, at=timezone.now() - timedelta(days=days))
    today, _ = services.session_resolve(user_id=person_id)
    talk(today.id, "Hello", "Hello, Nana!")

    body = context(api, today.id, "Where am I?", emotion=CALM)

    assert body["analysis"]["repeat_count"] == 0
    assert body["analysis"]["cross_session_repeat_count"] == 3
    assert body["narrative"] is not None
    assert body["narrative"]["category"] == "memory_loop"
    assert forbidden_in(llm_text(body)) == []


def test_asked_once_elsewhere_a_first_calm_question_still_gets_clara_s_own_answer(api):
    person_id = uuid.uuid4()
    earlier, _ = services.session_resolve(user_id=person_id)
    talk(earlier.id, "Where am I?", HOME, at=timezone.now() - timedelta(days=1))
    today, _ = services.session_resolve(user_id=person_id)
    talk(today.id, "Hello", "Hello, Nana!")

    assert context(api, today.id, "Where am I?", emotion=CALM)["narrative"] is None


def test_from_five_repeats_the_story_is_the_primary_response(api):
    session_id = uuid.uuid4()
    for _ in range(5):
        talk(session_id, "Where am I?", HOME)

    body = context(api, session_id, "Where am I?", emotion=CALM)

    assert body["analysis"]["repeat_count"] == 5
    assert body["narrative"] is not None
    assert "heart of your reply" in body["system_prompt"]
    assert body["narrative"]["text"] in body["system_prompt"]
    assert forbidden_in(llm_text(body)) == []


# --- The person's own baseline ------------------------------------------------------------------


def usually(person_id, distress: float, readings: int = 6) -> None:
    """Earlier sessions in which the person's distress sat at `distress`."""
    earlier, _ = services.session_resolve(user_id=person_id)
    start = timezone.now() - timedelta(days=2)
    for index in range(readings):
        talk(
            earlier.id,
            f"line {index}",
            emotion=EmotionReading("anxious", 0.8, distress, "stable"),
            at=start + timedelta(minutes=index),
        )


def test_someone_usually_anxious_does_not_read_as_escalating_when_a_session_starts():
    person_id = uuid.uuid4()
    usually(person_id, 0.7)
    session, _ = services.session_resolve(user_id=person_id)
    talk(session.id, "Hello")

    reading = selectors.memory_query(
        session_id=session.id, message="I'm worried about the children"
    ).current_emotion
    talk(session.id, "I'm worried about the children")

    assert reading.trajectory == "stable"
    stored = DetectedEmotion.objects.filter(session_id=session.id).order_by("timestamp").last()
    assert stored.trajectory == "stable"


def test_someone_usually_calm_does_read_as_escalating():
    person_id = uuid.uuid4()
    usually(person_id, 0.05)
    session, _ = services.session_resolve(user_id=person_id)
    talk(session.id, "Hello")

    reading = selectors.memory_query(
        session_id=session.id, message="I'm worried about the children"
    ).current_emotion

    assert reading.trajectory == "escalating"


def test_a_few_readings_are_no_baseline():
    person_id = uuid.uuid4()
    usually(person_id, 0.7, readings=selectors.BASELINE_MIN_READINGS - 1)
    session, _ = services.session_resolve(user_id=person_id)
    talk(session.id, "Hello")

    reading = selectors.memory_query(
        session_id=session.id, message="I'm worried about the children"
    ).current_emotion

    assert reading.trajectory == "escalating"


def test_the_baseline_never_reaches_the_prompt(api):
    person_id = uuid.uuid4()
    usually(person_id, 0.7)
    session, _ = services.session_resolve(user_id=person_id)
    talk(session.id, "Hello")

    body = context(api, session.id, "I'm worried about the children")

    assert "usual" not in body["system_prompt"].lower()
    assert "line 0" not in llm_text(body)
    assert body["analysis"]["trajectory"] == "stable"
