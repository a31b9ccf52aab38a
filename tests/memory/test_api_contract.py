"""The bot API contract: every endpoint, status code and body field the bot codes against."""

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memory.conversations import emotion as emotion_reader
from memory.conversations import repetition, services
from memory.conversations.emotion import EmotionReading
from memory.core.fields import for_row
from memory.models import (
    ApiKey,
    ChatMessage,
    DetectedEmotion,
    NarrativeUsage,
    Person,
    RepetitionRecord,
    Session,
)

SESSIONS = "/api/v1/sessions"
SESSION_FIELDS = {
    "session_id",
    "user_id",
    "status",
    "created_at",
    "last_activity_at",
    "message_count",
}
QUERY_FIELDS = {
    "is_repeat",
    "repeat_count",
    "question_type",
    "cross_session_repeat_count",
    "window_size",
    "conversation_window",
    "emotion_history",
    "used_narrative_ids",
    "caregiver_context",
    "display_name",
}
CALM = {"emotion": "calm", "confidence": 0.9, "distress_score": 0.1, "trajectory": "stable"}
DISTRESSED = {
    "emotion": "fearful",
    "confidence": 0.9,
    "distress_score": 0.9,
    "trajectory": "escalating",
}


def new_id() -> str:
    return str(uuid.uuid4())


def memory_state() -> dict:
    """Everything the memory tables hold that a failed request must leave alone."""
    return {
        "people": list(
            Person.objects.order_by("id").values_list("id", "display_name", "last_active_at")
        ),
        "sessions": list(
            Session.objects.order_by("id").values_list(
                "id",
                "person_id",
                "status",
                "message_count",
                "last_activity_at",
                "ended_at",
                "dominant_emotion",
                "escalation_triggered",
            )
        ),
        "messages": ChatMessage.objects.count(),
        "emotions": DetectedEmotion.objects.count(),
        "repetitions": RepetitionRecord.objects.count(),
        "narratives": NarrativeUsage.objects.count(),
        "api_keys": ApiKey.objects.count(),
    }


def seed(session_id: str, user_messages: list[str], *, emotions=None, start=None) -> None:
    """Store exchanges straight through the service, one minute apart, ending a minute ago."""
    start = start or timezone.now() - timedelta(minutes=len(user_messages) + 1)
    for index, text in enumerate(user_messages):
        services.exchange_record(
            session_id=uuid.UUID(session_id),
            user_message=text,
            assistant_message=f"Reply {index + 1}",
            emotion=emotions[index] if emotions else None,
            at=start + timedelta(minutes=index),
        )


def reading(distress: float, emotion: str = "neutral") -> EmotionReading:
    return EmotionReading(
        emotion=emotion, confidence=0.8, distress_score=distress, trajectory="stable"
    )


@pytest.fixture
def user_id() -> str:
    return new_id()


@pytest.fixture
def session_id(api, user_id) -> str:
    """A session of a person called Nana, created through the API."""
    sid = new_id()
    response = api.post(SESSIONS, {"session_id": sid, "user_id": user_id, "display_name": "Nana"})
    assert response.status_code == 201, response.content
    return sid


@pytest.fixture
def lived_in_session(session_id) -> str:
    """A session with one stored exchange and a narrative, so updates would be visible."""
    services.exchange_record(
        session_id=uuid.UUID(session_id),
        user_message="Where am I?",
        assistant_message="You're at home.",
        narrative=services.NarrativeRef(id="garden-1", mode="seed", category="calming"),
        at=timezone.now() - timedelta(minutes=5),
    )
    return session_id


def post_exchange(api, session_id: str, user_message="Where am I?", **fields):
    body = {"user_message": user_message, "assistant_message": "You're safe at home."}
    body.update(fields)
    return api.post(f"{SESSIONS}/{session_id}/exchanges", body)


# --- Authentication ------------------------------------------------------------------------

ENDPOINTS = [
    ("post", SESSIONS, {"display_name": "Nana"}),
    ("get", SESSIONS + "/{sid}", None),
    ("post", SESSIONS + "/{sid}/query", {"message": "Where am I?"}),
    ("post", SESSIONS + "/{sid}/exchanges", {"user_message": "Hi", "assistant_message": "Hello"}),
    ("get", SESSIONS + "/{sid}/messages", None),
    ("post", SESSIONS + "/{sid}/close", None),
]
ENDPOINT_IDS = ["resolve", "get", "query", "exchanges", "messages", "close"]


def _bad_headers(kind: str, raw_key: str) -> dict:
    prefix = raw_key.split("_")[1]
    return {
        "missing": {},
        "not bearer": {"Authorization": f"Basic {raw_key}"},
        "empty bearer": {"Authorization": "Bearer "},
        "garbage": {"Authorization": "Bearer not-a-key"},
        "unknown key": {"Authorization": "Bearer clara_deadbeef_" + "x" * 43},
        "wrong secret": {"Authorization": f"Bearer clara_{prefix}_" + "x" * 43},
    }[kind]


BAD_CREDENTIALS = [
    "missing",
    "not bearer",
    "empty bearer",
    "garbage",
    "unknown key",
    "wrong secret",
]


def _call(client, method, path, body, headers):
    if method == "get":
        return client.get(path, headers=headers)
    return client.post(
        path, json.dumps(body or {}), content_type="application/json", headers=headers
    )


@pytest.mark.parametrize("kind", BAD_CREDENTIALS)
@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=ENDPOINT_IDS)
def test_bad_credentials_get_401_with_json_body(
    api, lived_in_session, api_key, kind, method, path, body
):
    response = _call(
        api.client, method, path.format(sid=lived_in_session), body, _bad_headers(kind, api_key)
    )
    assert response.status_code == 401
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["detail"]


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=ENDPOINT_IDS)
def test_revoked_key_gets_401(api, lived_in_session, api_key, method, path, body):
    services.api_key_revoke(key=ApiKey.objects.get())
    response = _call(api.client, method, path.format(sid=lived_in_session), body, api.headers)
    assert response.status_code == 401
    assert response.json()["detail"]


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=ENDPOINT_IDS)
def test_unauthenticated_request_stores_nothing(
    anonymous_api, lived_in_session, method, path, body
):
    before = memory_state()
    # An unknown session id: an authenticated exchange would create it on the fly.
    response = _call(anonymous_api.client, method, path.format(sid=new_id()), body, {})
    assert response.status_code == 401
    assert memory_state() == before


# --- POST /sessions and GET /sessions/{id} --------------------------------------------------


def test_new_session_is_created_with_201_and_contract_fields(api, user_id):
    sid = new_id()
    response = api.post(SESSIONS, {"session_id": sid, "user_id": user_id})
    assert response.status_code == 201
    body = response.json()
    assert SESSION_FIELDS <= body.keys()
    assert body["session_id"] == sid
    assert body["user_id"] == user_id
    assert body["status"] == "active"
    assert body["message_count"] == 0
    assert body["created_at"] == body["last_activity_at"]


def test_session_without_session_id_gets_a_generated_one(api):
    response = api.post(SESSIONS, {})
    assert response.status_code == 201
    assert Session.objects.filter(id=response.json()["session_id"]).exists()


def test_new_session_with_user_id_creates_the_person(api, user_id):
    api.post(SESSIONS, {"session_id": new_id(), "user_id": user_id, "display_name": "Nana"})
    assert Person.objects.get(id=user_id).display_name == "Nana"


def test_existing_session_is_resumed_with_200(api, lived_in_session, user_id):
    created = api.get(f"{SESSIONS}/{lived_in_session}").json()
    response = api.post(SESSIONS, {"session_id": lived_in_session, "user_id": user_id})
    assert response.status_code == 200
    body = response.json()
    assert body["session_id"] == lived_in_session
    assert body["created_at"] == created["created_at"]
    assert body["message_count"] == 2
    assert Session.objects.count() == 1


def test_resuming_without_user_id_keeps_the_sessions_person(api, session_id, user_id):
    response = api.post(SESSIONS, {"session_id": session_id})
    assert response.status_code == 200
    assert response.json()["user_id"] == user_id


def test_resuming_with_display_name_only_keeps_the_sessions_person(api, session_id, user_id):
    response = api.post(SESSIONS, {"session_id": session_id, "display_name": "Nana"})
    assert response.status_code == 200, response.content
    assert response.json()["user_id"] == user_id


def test_resuming_with_a_different_user_id_is_409_naming_user_id(api, session_id):
    response = api.post(SESSIONS, {"session_id": session_id, "user_id": new_id()})
    assert response.status_code == 409
    assert response.json()["field"] == "user_id"
    assert "user_id" in response.content.decode()


def test_resuming_with_a_different_user_id_stores_nothing(api, lived_in_session):
    before = memory_state()
    api.post(SESSIONS, {"session_id": lived_in_session, "user_id": new_id(), "display_name": "X"})
    assert memory_state() == before


def test_resuming_an_anonymous_session_with_user_id_links_the_person(api, user_id):
    sid = new_id()
    assert post_exchange(api, sid).status_code == 201  # created on the fly, nobody's yet
    response = api.post(SESSIONS, {"session_id": sid, "user_id": user_id})
    assert response.status_code == 200
    assert response.json()["user_id"] == user_id
    assert str(Session.objects.get(id=sid).person_id) == user_id


def test_get_session_returns_the_session(api, lived_in_session, user_id):
    response = api.get(f"{SESSIONS}/{lived_in_session}")
    assert response.status_code == 200
    body = response.json()
    assert SESSION_FIELDS <= body.keys()
    assert (body["session_id"], body["user_id"], body["message_count"]) == (
        lived_in_session,
        user_id,
        2,
    )


def test_get_session_has_the_same_shape_as_resolve(api, session_id):
    resolved = api.post(SESSIONS, {"session_id": session_id}).json()
    assert api.get(f"{SESSIONS}/{session_id}").json() == resolved


def test_get_unknown_session_is_404_with_json_body(api):
    response = api.get(f"{SESSIONS}/{new_id()}")
    assert response.status_code == 404
    assert response.json()["field"] == "session_id"


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS[1:], ids=ENDPOINT_IDS[1:])
@pytest.mark.parametrize("bad_id", ["not-a-uuid", "123", "00000000-0000-0000-0000"])
def test_non_uuid_session_id_is_422_naming_session_id(api, method, path, body, bad_id):
    before = memory_state()
    response = _call(api.client, method, path.format(sid=bad_id), body, api.headers)
    assert response.status_code == 422
    assert "session_id" in response.content.decode()
    assert memory_state() == before


# --- POST /sessions/{id}/query ---------------------------------------------------------------


def query(api, session_id: str, message: str = "Where am I?", **fields):
    response = api.post(f"{SESSIONS}/{session_id}/query", {"message": message, **fields})
    assert response.status_code == 200, response.content
    return response.json()


def test_query_returns_every_contract_field(api, lived_in_session):
    body = query(api, lived_in_session)
    assert QUERY_FIELDS <= body.keys()
    assert body["display_name"] == "Nana"
    assert body["used_narrative_ids"] == ["garden-1"]


@pytest.mark.parametrize("emotion", [None, DISTRESSED], ids=["built-in reader", "given emotion"])
def test_query_stores_nothing(api, lived_in_session, emotion):
    before = memory_state()
    query(
        api,
        lived_in_session,
        "Where am I? I'm scared!",
        **({"emotion": emotion} if emotion else {}),
    )
    assert memory_state() == before


def test_query_on_unknown_session_is_404_and_creates_nothing(api):
    before = memory_state()
    response = api.post(f"{SESSIONS}/{new_id()}/query", {"message": "Where am I?"})
    assert response.status_code == 404
    assert response.json()["field"] == "session_id"
    assert memory_state() == before


def test_query_accepts_a_message_of_exactly_8000_characters(api, session_id):
    assert query(api, session_id, "x" * 8000)["is_repeat"] is False


def test_first_question_of_a_session_is_not_a_repeat(api, session_id):
    body = query(api, session_id, "Where am I?")
    assert (body["is_repeat"], body["repeat_count"], body["question_type"]) == (
        False,
        0,
        "location",
    )


def test_same_specific_question_type_in_other_words_is_a_repeat(api, session_id):
    seed(session_id, ["Where am I?"])
    body = query(api, session_id, "What is this place?")
    assert (body["is_repeat"], body["repeat_count"]) == (True, 1)


def test_similar_wording_is_a_repeat_without_a_specific_type(api, session_id):
    seed(session_id, ["I want my blue cardigan"])
    body = query(api, session_id, "I want my blue cardigan please")
    assert body["question_type"] == "general"
    assert (body["is_repeat"], body["repeat_count"]) == (True, 1)


def test_two_unrelated_general_messages_are_not_repeats(api, session_id):
    seed(session_id, ["I like tea"])
    body = query(api, session_id, "The garden looks lovely")
    assert (body["is_repeat"], body["repeat_count"], body["question_type"]) == (
        False,
        0,
        "general",
    )


def test_different_specific_question_types_are_not_repeats(api, session_id):
    seed(session_id, ["Where am I?"])
    body = query(api, session_id, "What day is it?")
    assert (body["is_repeat"], body["question_type"]) == (False, "time")


def test_repeat_count_counts_every_earlier_repeat(api, session_id):
    seed(session_id, ["Where am I?", "I like tea", "What is this place?", "Where are we?"])
    assert query(api, session_id, "Where am I?")["repeat_count"] == 3


# Window rules (seed §5.1), first that applies: <= 6 messages: all; repeats >= 4: 6;
# distress > 0.7 or an escalation among the person's last 3 messages (or this one): 16;
# otherwise 12. Each seeded exchange is two messages.
FALL = "I've fallen and I can't get up"
WINDOW_CASES = {
    "empty session": ([], "Hello there", CALM, 0, []),
    "6 messages, distressed": (
        ["a b c", "d e f", "g h i"],
        "I like tea",
        DISTRESSED,
        6,
        range(1, 7),
    ),
    "normal": ([f"story number {i}" for i in range(7)], "I like tea", CALM, 12, range(3, 15)),
    "distressed": (
        [f"story number {i}" for i in range(10)],
        "I like tea",
        DISTRESSED,
        16,
        range(5, 21),
    ),
    "distress exactly 0.7": (
        [f"story number {i}" for i in range(10)],
        "I like tea",
        {**DISTRESSED, "distress_score": 0.7},
        12,
        range(9, 21),
    ),
    "4 repeats": (["Where am I?"] * 4, "Where am I?", CALM, 6, range(3, 9)),
    "3 repeats": (["Where am I?"] * 3 + ["I like tea"], "Where am I?", CALM, 12, range(1, 9)),
    "4 repeats beat distress": (["Where am I?"] * 4, "Where am I?", DISTRESSED, 6, range(3, 9)),
    # An escalation among the person's last few messages keeps the window wide, though this
    # message is calm: one calmer turn after a fall must not hide the fall.
    "a fall, then a calmer turn": (
        [f"story number {i}" for i in range(8)] + [FALL, "story number 9"],
        "I like tea",
        CALM,
        16,
        range(5, 21),
    ),
    "a fall three turns ago": (
        [f"story number {i}" for i in range(7)] + [FALL, "story number 8", "story number 9"],
        "I like tea",
        CALM,
        16,
        range(5, 21),
    ),
    "a fall long ago": (
        [FALL] + [f"story number {i}" for i in range(9)],
        "I like tea",
        CALM,
        12,
        range(9, 21),
    ),
    "a fall now": ([f"story number {i}" for i in range(10)], FALL, CALM, 16, range(5, 21)),
}


@pytest.mark.parametrize(
    ("seeded", "message", "emotion", "size", "sequence"),
    WINDOW_CASES.values(),
    ids=WINDOW_CASES.keys(),
)
def test_conversation_window_size_follows_the_window_rules(
    api, session_id, seeded, message, emotion, size, sequence
):
    seed(session_id, seeded)
    body = query(api, session_id, message, emotion=emotion)
    assert body["window_size"] == size
    assert [m["sequence_number"] for m in body["conversation_window"]] == list(sequence)


def test_short_session_window_holds_all_messages_in_order(api, session_id):
    seed(session_id, ["Where am I?"])
    window = query(api, session_id, "I like tea", emotion=DISTRESSED)["conversation_window"]
    assert window == [
        {"role": "user", "content": "Where am I?", "sequence_number": 1},
        {"role": "assistant", "content": "Reply 1", "sequence_number": 2},
    ]


def test_conversation_window_holds_the_latest_messages_oldest_first(api, session_id):
    seed(session_id, [f"story number {i}" for i in range(8)])
    window = query(api, session_id, "I like tea", emotion=CALM)["conversation_window"]
    assert [(m["role"], m["content"]) for m in window[:2]] == [
        ("user", "story number 2"),
        ("assistant", "Reply 3"),
    ]
    assert window[-1] == {"role": "assistant", "content": "Reply 8", "sequence_number": 16}


def test_emotion_history_is_the_last_ten_oldest_first(api, session_id):
    distress = [round(0.05 * i, 2) for i in range(1, 13)]
    seed(session_id, [f"line {i}" for i in range(12)], emotions=[reading(d) for d in distress])
    history = query(api, session_id, "I like tea")["emotion_history"]
    assert [record["distress_score"] for record in history] == distress[2:]
    timestamps = [record["timestamp"] for record in history]
    assert timestamps == sorted(timestamps)


def test_emotion_history_records_carry_every_contract_field(api, session_id):
    seed(session_id, ["Help me"], emotions=[EmotionReading("fearful", 0.75, 0.8, "escalating")])
    (record,) = query(api, session_id)["emotion_history"]
    assert {k: record[k] for k in ("emotion", "confidence", "distress_score", "trajectory")} == {
        "emotion": "fearful",
        "confidence": 0.75,
        "distress_score": 0.8,
        "trajectory": "escalating",
    }
    assert record["timestamp"]


def test_query_returns_the_persons_caregiver_context(api, session_id, user_id):
    Person.objects.filter(id=user_id).update(
        caregiver_context=for_row({"knownTopics": ["roses"]}, user_id)
    )
    assert query(api, session_id)["caregiver_context"] == {"knownTopics": ["roses"]}


def test_used_narrative_ids_lists_this_sessions_narratives_in_order(api, session_id):
    for narrative_id in ["garden-1", "dog-2"]:
        post_exchange(
            api, session_id, narrative={"id": narrative_id, "mode": "seed", "category": "c"}
        )
    assert query(api, session_id)["used_narrative_ids"] == ["garden-1", "dog-2"]


def _other_session(user_id: str, *, days_ago: float, message: str = "Where am I?") -> None:
    at = timezone.now() - timedelta(days=days_ago)
    sid = uuid.uuid4()
    services.session_resolve(session_id=sid, user_id=uuid.UUID(user_id), at=at)
    services.exchange_record(session_id=sid, user_message=message, assistant_message="Home", at=at)


def test_cross_session_count_includes_the_persons_recent_sessions(api, session_id, user_id):
    _other_session(user_id, days_ago=1)
    _other_session(user_id, days_ago=6)
    assert query(api, session_id, "What is this place?")["cross_session_repeat_count"] == 2


def test_cross_session_count_ignores_sessions_older_than_seven_days(api, session_id, user_id):
    _other_session(user_id, days_ago=8)
    assert query(api, session_id, "Where am I?")["cross_session_repeat_count"] == 0


def test_cross_session_count_ignores_the_current_session(api, session_id):
    seed(session_id, ["Where am I?", "Where am I?"])
    body = query(api, session_id, "Where am I?")
    assert (body["repeat_count"], body["cross_session_repeat_count"]) == (2, 0)


def test_cross_session_count_ignores_other_people(api, session_id):
    someone_else = new_id()
    Person.objects.create(id=someone_else, created_at=timezone.now(), last_active_at=timezone.now())
    _other_session(someone_else, days_ago=1)
    assert query(api, session_id, "Where am I?")["cross_session_repeat_count"] == 0


# --- POST /sessions/{id}/exchanges ----------------------------------------------------------


def test_exchange_is_stored_with_201_and_both_message_ids(api, session_id):
    response = post_exchange(api, session_id)
    assert response.status_code == 201
    body = response.json()
    user = ChatMessage.objects.get(id=body["user_message"]["message_id"])
    assistant = ChatMessage.objects.get(id=body["assistant_message"]["message_id"])
    assert (user.role, user.sequence_number) == ("user", body["user_message"]["sequence_number"])
    assert (assistant.role, assistant.sequence_number) == (
        "assistant",
        body["assistant_message"]["sequence_number"],
    )


def test_exchanges_take_consecutive_sequence_numbers(api, session_id):
    numbers = []
    for text in ["Where am I?", "Who are you?", "I like tea"]:
        body = post_exchange(api, session_id, text).json()
        numbers += [
            body["user_message"]["sequence_number"],
            body["assistant_message"]["sequence_number"],
        ]
    assert numbers == [1, 2, 3, 4, 5, 6]


def test_exchange_stores_exactly_two_messages_with_their_text(api, session_id):
    post_exchange(api, session_id, "Who are you?")
    rows = ChatMessage.objects.filter(session_id=session_id).order_by("sequence_number")
    assert [(r.role, r.content, r.sequence_number) for r in rows] == [
        ("user", "Who are you?", 1),
        ("assistant", "You're safe at home.", 2),
    ]


def test_exchange_stores_the_given_emotion_on_the_user_message(api, session_id):
    body = post_exchange(api, session_id, emotion={**DISTRESSED, "confidence": 0.66}).json()
    stored = DetectedEmotion.objects.get()
    assert str(stored.message_id) == body["user_message"]["message_id"]
    assert (stored.emotion, stored.confidence, stored.distress_score, stored.trajectory) == (
        "fearful",
        0.66,
        0.9,
        "escalating",
    )


def test_exchange_without_emotion_gets_the_built_in_reading(api, session_id):
    message = "I'm so scared, help me!"
    body = post_exchange(api, session_id, message).json()
    stored = DetectedEmotion.objects.get()
    expected = emotion_reader.analyse(message)
    assert str(stored.message_id) == body["user_message"]["message_id"]
    assert (stored.emotion, stored.confidence, stored.distress_score, stored.trajectory) == (
        expected.emotion,
        expected.confidence,
        expected.distress_score,
        expected.trajectory,
    )
    assert stored.emotion == "fearful"


def test_exchange_stores_a_repetition_record_with_the_response_given(api, session_id):
    post_exchange(api, session_id, "Where am I?")
    body = post_exchange(api, session_id, "What is this place?").json()
    record = RepetitionRecord.objects.get(message_id=body["user_message"]["message_id"])
    assert record.response_given == "You're safe at home."
    assert record.original_message == "What is this place?"
    assert (record.fingerprint, record.question_type, record.repeat_count) == (
        # Stored as keyed tokens: matchable, not readable.
        repetition.stored_fingerprint(
            "What is this place?",
            scope=repetition.scope_of(person_id=record.person_id, session_id=record.session_id),
        ),
        "location",
        1,
    )


def test_exchange_with_narrative_stores_its_usage_on_the_assistant_message(api, session_id):
    narrative = {"id": "garden-1", "mode": "fallback", "category": "calming"}
    body = post_exchange(api, session_id, narrative=narrative, emotion=DISTRESSED).json()
    usage = NarrativeUsage.objects.get()
    assert str(usage.message_id) == body["assistant_message"]["message_id"]
    assert (usage.narrative_id, usage.mode, usage.category, usage.emotion_at_usage) == (
        "garden-1",
        "fallback",
        "calming",
        "fearful",
    )


def test_exchange_without_narrative_stores_no_narrative_usage(api, session_id):
    post_exchange(api, session_id)
    assert NarrativeUsage.objects.count() == 0


def test_exchange_stores_intent_and_processing_time_on_the_assistant_message(api, session_id):
    body = post_exchange(api, session_id, intent="reassure", processing_time_ms=840).json()
    assistant = ChatMessage.objects.get(id=body["assistant_message"]["message_id"])
    assert (assistant.intent, assistant.processing_time_ms) == ("reassure", 840)


def test_exchange_updates_the_sessions_count_and_last_activity(api, session_id):
    post_exchange(api, session_id)
    body = post_exchange(api, session_id, "Who are you?").json()
    session = Session.objects.get(id=session_id)
    last = ChatMessage.objects.get(id=body["assistant_message"]["message_id"])
    assert session.message_count == 4
    assert session.last_activity_at == last.timestamp
    assert api.get(f"{SESSIONS}/{session_id}").json()["message_count"] == 4


def test_exchange_updates_the_persons_last_active_at(api):
    sid, uid = uuid.uuid4(), uuid.uuid4()
    services.session_resolve(session_id=sid, user_id=uid, at=timezone.now() - timedelta(hours=1))
    body = post_exchange(api, str(sid)).json()
    message = ChatMessage.objects.get(id=body["user_message"]["message_id"])
    assert Person.objects.get(id=uid).last_active_at == message.timestamp


def test_exchange_with_escalation_flags_the_session(api, session_id):
    post_exchange(api, session_id, escalation=True)
    assert Session.objects.get(id=session_id).escalation_triggered is True


def test_exchange_without_escalation_leaves_the_flag_unset(api, session_id):
    post_exchange(api, session_id)
    assert Session.objects.get(id=session_id).escalation_triggered is False


def test_exchange_to_unknown_session_creates_it(api):
    sid = new_id()
    response = post_exchange(api, sid)
    assert response.status_code == 201
    session = Session.objects.get(id=sid)
    assert (session.status, session.message_count) == ("active", 2)


def test_exchange_accepts_messages_of_exactly_8000_characters(api, session_id):
    response = api.post(
        f"{SESSIONS}/{session_id}/exchanges",
        {"user_message": "x" * 8000, "assistant_message": "y" * 8000},
    )
    assert response.status_code == 201
    # Content is encrypted at rest: compared after reading, not in SQL.
    stored = ChatMessage.objects.filter(session_id=session_id).values_list("content", flat=True)
    assert "x" * 8000 in list(stored)


def test_retry_with_the_same_idempotency_key_returns_200_and_the_original(api, session_id):
    first = post_exchange(api, session_id, idempotency_key="turn-1")
    retry = post_exchange(api, session_id, idempotency_key="turn-1")
    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json() == first.json()


def test_retry_with_the_same_idempotency_key_stores_nothing_twice(api, session_id):
    post_exchange(
        api,
        session_id,
        idempotency_key="turn-1",
        narrative={"id": "n", "mode": "seed", "category": "c"},
    )
    before = memory_state()
    post_exchange(
        api,
        session_id,
        idempotency_key="turn-1",
        narrative={"id": "n", "mode": "seed", "category": "c"},
    )
    assert memory_state() == before


def test_reused_idempotency_key_with_another_message_is_409(api, session_id):
    post_exchange(api, session_id, "Where am I?", idempotency_key="turn-1")
    response = post_exchange(api, session_id, "Who are you?", idempotency_key="turn-1")
    assert response.status_code == 409
    assert response.json()["field"] == "idempotency_key"


def test_reused_idempotency_key_with_another_message_stores_nothing(api, session_id):
    post_exchange(api, session_id, "Where am I?", idempotency_key="turn-1")
    before = memory_state()
    post_exchange(api, session_id, "Who are you?", idempotency_key="turn-1")
    assert memory_state() == before


# --- GET /sessions/{id}/messages --------------------------------------------------------------


def test_messages_are_listed_oldest_first_with_contract_fields(api, session_id):
    seed(session_id, ["Where am I?", "Who are you?"])
    messages = api.get(f"{SESSIONS}/{session_id}/messages").json()["messages"]
    assert [(m["role"], m["content"], m["sequence_number"]) for m in messages] == [
        ("user", "Where am I?", 1),
        ("assistant", "Reply 1", 2),
        ("user", "Who are you?", 3),
        ("assistant", "Reply 2", 4),
    ]
    assert {"message_id", "timestamp"} <= messages[0].keys()
    assert messages[0]["message_id"] == str(
        ChatMessage.objects.get(session_id=session_id, sequence_number=1).id
    )


def test_messages_default_to_the_last_50(api, session_id):
    seed(session_id, [f"line {i}" for i in range(26)])
    messages = api.get(f"{SESSIONS}/{session_id}/messages").json()["messages"]
    assert [m["sequence_number"] for m in messages] == list(range(3, 53))


def test_messages_limit_returns_the_last_n(api, session_id):
    seed(session_id, [f"line {i}" for i in range(3)])
    messages = api.get(f"{SESSIONS}/{session_id}/messages", limit=3).json()["messages"]
    assert [m["sequence_number"] for m in messages] == [4, 5, 6]


@pytest.mark.parametrize("limit", [1, 500])
def test_messages_limit_bounds_are_accepted(api, lived_in_session, limit):
    response = api.get(f"{SESSIONS}/{lived_in_session}/messages", limit=limit)
    assert response.status_code == 200
    assert len(response.json()["messages"]) == min(limit, 2)


@pytest.mark.parametrize("limit", [0, -1, 501, "ten"])
def test_messages_limit_outside_1_to_500_is_422_naming_limit(api, lived_in_session, limit):
    response = api.get(f"{SESSIONS}/{lived_in_session}/messages", limit=limit)
    assert response.status_code == 422
    assert "limit" in response.content.decode()


def test_messages_of_unknown_session_is_404(api):
    assert api.get(f"{SESSIONS}/{new_id()}/messages").status_code == 404


# --- POST /sessions/{id}/close --------------------------------------------------------------


def test_close_returns_the_closed_session_with_its_dominant_emotion(api, session_id):
    emotions = [reading(0.9, "fearful"), reading(0.1, "calm"), reading(0.9, "fearful")]
    seed(session_id, ["Help", "Thanks", "Help again"], emotions=emotions)
    response = api.post(f"{SESSIONS}/{session_id}/close")
    assert response.status_code == 200
    body = response.json()
    assert (body["session_id"], body["status"], body["dominant_emotion"]) == (
        session_id,
        "closed",
        "fearful",
    )
    assert body["message_count"] == 6


def test_closing_a_closed_session_is_200_and_changes_nothing(api, lived_in_session):
    first = api.post(f"{SESSIONS}/{lived_in_session}/close").json()
    before = memory_state()
    again = api.post(f"{SESSIONS}/{lived_in_session}/close")
    assert again.status_code == 200
    assert again.json() == first
    assert memory_state() == before


def test_closing_an_unknown_session_is_404_and_creates_nothing(api):
    before = memory_state()
    response = api.post(f"{SESSIONS}/{new_id()}/close")
    assert response.status_code == 404
    assert response.json()["field"] == "session_id"
    assert memory_state() == before


# --- Bad input ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bad:
    """One bad request: an endpoint, a body (or raw text) and the field the answer must name."""

    endpoint: str
    name: str
    field: str
    body: object = None
    raw: str | None = None

    @property
    def id(self) -> str:
        return f"{self.endpoint}: {self.name}"


VALID = {
    "resolve": {"display_name": "Nana"},
    "query": {"message": "Where am I?"},
    "exchanges": {"user_message": "Where am I?", "assistant_message": "You're at home."},
}
TEXT_FIELDS = {"query": ["message"], "exchanges": ["user_message", "assistant_message"]}


def _with(endpoint: str, **changes) -> dict:
    return {**VALID[endpoint], **changes}


def _without(endpoint: str, field: str) -> dict:
    return {k: v for k, v in VALID[endpoint].items() if k != field}


def _bad_cases() -> list[Bad]:
    cases = []
    for endpoint in VALID:
        cases += [
            Bad(endpoint, "malformed JSON", "body", raw='{"user_message": '),
            Bad(endpoint, "not JSON at all", "body", raw="user_message=hi"),
            Bad(endpoint, "JSON array", "body", raw=json.dumps([VALID[endpoint]])),
            Bad(endpoint, "empty JSON array", "body", raw="[]"),
            Bad(endpoint, "JSON string", "body", raw='"Where am I?"'),
            Bad(endpoint, "JSON number", "body", raw="42"),
            Bad(endpoint, "JSON null", "body", raw="null"),
        ]
    for endpoint, fields in TEXT_FIELDS.items():
        for field in fields:
            cases += [
                Bad(endpoint, f"{field} empty", field, _with(endpoint, **{field: ""})),
                Bad(endpoint, f"{field} whitespace", field, _with(endpoint, **{field: " \n\t "})),
                Bad(endpoint, f"{field} 8001 chars", field, _with(endpoint, **{field: "x" * 8001})),
                Bad(
                    endpoint, f"{field} NUL char", field, _with(endpoint, **{field: "hi\x00there"})
                ),
                Bad(endpoint, f"{field} missing", field, _without(endpoint, field)),
                Bad(endpoint, f"{field} null", field, _with(endpoint, **{field: None})),
                Bad(endpoint, f"{field} number", field, _with(endpoint, **{field: 42})),
                Bad(endpoint, f"{field} list", field, _with(endpoint, **{field: ["Where?"]})),
            ]
        emotion_cases = {
            "unknown emotion": {**DISTRESSED, "emotion": "angry"},
            "unknown trajectory": {**DISTRESSED, "trajectory": "sideways"},
            "distress below 0": {**DISTRESSED, "distress_score": -0.1},
            "distress above 1": {**DISTRESSED, "distress_score": 1.1},
            "confidence below 0": {**DISTRESSED, "confidence": -0.01},
            "confidence above 1": {**DISTRESSED, "confidence": 1.5},
            "distress not a number": {**DISTRESSED, "distress_score": "high"},
            "trajectory missing": {k: v for k, v in DISTRESSED.items() if k != "trajectory"},
        }
        cases += [
            Bad(endpoint, name, "emotion", _with(endpoint, emotion=value))
            for name, value in emotion_cases.items()
        ]
        cases.append(
            Bad(endpoint, "emotion not an object", "emotion", _with(endpoint, emotion="sad"))
        )
    narrative = {"id": "garden-1", "mode": "seed", "category": "calming"}
    cases += [
        Bad(
            "exchanges",
            "unknown narrative mode",
            "narrative",
            _with("exchanges", narrative={**narrative, "mode": "story"}),
        ),
        Bad(
            "exchanges",
            "narrative without id",
            "narrative",
            _with("exchanges", narrative={"mode": "seed", "category": "c"}),
        ),
        Bad(
            "exchanges",
            "narrative with empty id",
            "narrative",
            _with("exchanges", narrative={**narrative, "id": ""}),
        ),
        Bad(
            "exchanges",
            "narrative not an object",
            "narrative",
            _with("exchanges", narrative="garden-1"),
        ),
        Bad(
            "exchanges",
            "empty idempotency_key",
            "idempotency_key",
            _with("exchanges", idempotency_key=""),
        ),
        Bad(
            "exchanges",
            "idempotency_key too long",
            "idempotency_key",
            _with("exchanges", idempotency_key="k" * 129),
        ),
        Bad(
            "exchanges",
            "idempotency_key number",
            "idempotency_key",
            _with("exchanges", idempotency_key=7),
        ),
        Bad(
            "exchanges",
            "negative processing time",
            "processing_time_ms",
            _with("exchanges", processing_time_ms=-1),
        ),
        Bad(
            "exchanges",
            "processing time text",
            "processing_time_ms",
            _with("exchanges", processing_time_ms="fast"),
        ),
        Bad(
            "exchanges",
            "escalation not boolean",
            "escalation",
            _with("exchanges", escalation="maybe"),
        ),
        Bad("exchanges", "intent too long", "intent", _with("exchanges", intent="i" * 65)),
        Bad("exchanges", "intent number", "intent", _with("exchanges", intent=3)),
        Bad("resolve", "session_id not a UUID", "session_id", _with("resolve", session_id="abc")),
        Bad("resolve", "user_id not a UUID", "user_id", _with("resolve", user_id="nope")),
        Bad("resolve", "user_id number", "user_id", _with("resolve", user_id=123)),
        Bad("resolve", "display_name number", "display_name", _with("resolve", display_name=5)),
        Bad(
            "resolve",
            "display_name too long",
            "display_name",
            _with("resolve", display_name="N" * 201),
        ),
    ]
    return cases


BAD_CASES = _bad_cases()


def _send_bad(api, case: Bad, session_id: str):
    path = {
        "resolve": SESSIONS,
        "query": f"{SESSIONS}/{session_id}/query",
        # An unknown session: a request that got through would create it.
        "exchanges": f"{SESSIONS}/{new_id()}/exchanges",
    }[case.endpoint]
    return api.post(path, case.body, raw=case.raw)


@pytest.mark.parametrize("case", BAD_CASES, ids=[case.id for case in BAD_CASES])
def test_bad_input_is_422_naming_the_field(api, lived_in_session, case):
    response = _send_bad(api, case, lived_in_session)
    assert response.status_code == 422, response.content
    assert response["Content-Type"].startswith("application/json")
    assert case.field in response.content.decode()


@pytest.mark.parametrize("case", BAD_CASES, ids=[case.id for case in BAD_CASES])
def test_bad_input_stores_nothing(api, lived_in_session, case):
    before = memory_state()
    _send_bad(api, case, lived_in_session)
    assert memory_state() == before


@pytest.mark.parametrize(
    "case",
    [
        Bad("exchanges", "whitespace", "user_message", _with("exchanges", user_message="  ")),
        Bad(
            "query",
            "unknown emotion",
            "emotion.emotion",
            _with("query", emotion={**CALM, "emotion": "x"}),
        ),
        Bad("resolve", "malformed JSON", "body", raw="{"),
        Bad("resolve", "JSON array", "body", raw="[]"),
    ],
    ids=lambda case: case.id,
)
def test_bad_input_body_has_the_documented_error_shape(api, lived_in_session, case):
    body = _send_bad(api, case, lived_in_session).json()
    assert isinstance(body["detail"], str) and body["detail"]
    assert body["field"] == case.field
    assert body["code"] in {"invalid", "malformed"}


@pytest.mark.parametrize(
    ("endpoint", "body", "field"),
    [
        ("sessions", {"display_name": "Na\x00na"}, "display_name"),
        (
            "exchanges",
            {"user_message": "hi", "assistant_message": "hello", "intent": "a\x00"},
            "intent",
        ),
        (
            "exchanges",
            {"user_message": "hi", "assistant_message": "hello", "idempotency_key": "k\x00"},
            "idempotency_key",
        ),
    ],
)
def test_nul_characters_in_short_text_fields_are_refused(api, endpoint, body, field):
    path = (
        "/api/v1/sessions"
        if endpoint == "sessions"
        else f"/api/v1/sessions/{uuid.uuid4()}/exchanges"
    )

    response = api.post(path, body)

    assert response.status_code == 422
    assert response.json()["field"] == field


def test_an_exchange_buffered_offline_keeps_the_time_it_happened(api):
    session_id = uuid.uuid4()
    when = "2026-11-01T18:30:00+00:00"

    response = api.post(
        f"/api/v1/sessions/{session_id}/exchanges",
        {
            "user_message": "Is it evening?",
            "assistant_message": "Yes, a calm one.",
            "occurred_at": when,
        },
    )

    assert response.status_code == 201
    messages = api.get(f"/api/v1/sessions/{session_id}/messages").json()["messages"]
    assert {m["timestamp"] for m in messages} == {"2026-11-01T18:30:00Z"}


@pytest.mark.parametrize(
    ("endpoint", "field"),
    [("sessions", "started_at"), ("exchanges", "occurred_at"), ("close", "ended_at")],
)
@pytest.mark.parametrize(
    "when", ["2999-01-01T00:00:00+00:00", "2001-01-01T00:00:00+00:00", "2026-11-01T18:30:00"]
)
def test_times_in_the_future_too_old_or_without_a_zone_are_refused(api, endpoint, field, when):
    session_id = uuid.uuid4()
    services.exchange_record(session_id=session_id, user_message="Hi", assistant_message="Hello")
    path, body = {
        "sessions": ("/api/v1/sessions", {}),
        "exchanges": (
            f"/api/v1/sessions/{session_id}/exchanges",
            {"user_message": "a", "assistant_message": "b"},
        ),
        "close": (f"/api/v1/sessions/{session_id}/close", {}),
    }[endpoint]

    response = api.post(path, {**body, field: when})

    assert response.status_code == 422
    assert response.json()["field"] == field


def test_close_accepts_no_body_at_all(api):
    session_id = uuid.uuid4()
    services.exchange_record(session_id=session_id, user_message="Hi", assistant_message="Hello")

    # As `curl -X POST` sends it: no body, no content type.
    response = api.client.generic(
        "POST", f"/api/v1/sessions/{session_id}/close", b"", content_type="", headers=api.headers
    )

    assert response.status_code == 200
    assert response.json()["status"] == "closed"


def test_close_with_an_end_time_records_it(api):
    session_id = uuid.uuid4()
    services.exchange_record(
        session_id=session_id,
        user_message="Hi",
        assistant_message="Hello",
        at=datetime(2026, 11, 1, 18, 0, tzinfo=UTC),
    )

    body = api.post(
        f"/api/v1/sessions/{session_id}/close", {"ended_at": "2026-11-01T18:20:00+00:00"}
    ).json()

    assert body["ended_at"] == "2026-11-01T18:20:00Z"
