"""Session lifecycle: resolve, close, idle expiry."""

import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from memory.conversations import services
from memory.conversations.emotion import EmotionReading
from memory.core.errors import Conflict, NotFound
from memory.models import Person, Session

pytestmark = pytest.mark.django_db


def _reading(emotion: str, distress: float) -> EmotionReading:
    return EmotionReading(
        emotion=emotion, confidence=0.8, distress_score=distress, trajectory="stable"
    )


def test_resolve_creates_a_session_and_its_person():
    user_id = uuid.uuid4()

    session, created = services.session_resolve(user_id=user_id, display_name="Nana")

    assert created
    assert session.person_id == user_id
    assert Person.objects.get(id=user_id).display_name == "Nana"


def test_resolve_resumes_and_touches_last_activity():
    start = timezone.now() - timedelta(minutes=5)
    session, _ = services.session_resolve(at=start)

    resumed, created = services.session_resolve(session_id=session.id)

    assert not created
    assert resumed.id == session.id
    assert resumed.last_activity_at > start


def test_resolve_links_an_anonymous_session_to_a_person_later():
    session, _ = services.session_resolve()
    user_id = uuid.uuid4()

    resumed, _ = services.session_resolve(session_id=session.id, user_id=user_id)

    assert resumed.person_id == user_id


def test_linking_a_person_brings_the_earlier_anonymous_messages_along():
    session, _ = services.session_resolve()
    services.exchange_record(session_id=session.id, user_message="Hi", assistant_message="Hello!")
    user_id = uuid.uuid4()

    services.session_resolve(session_id=session.id, user_id=user_id)

    person = Person.objects.get(id=user_id)
    assert person.messages.count() == 2
    assert person.emotions.count() == 1
    assert person.repetitions.count() == 1


def test_resolve_refuses_to_move_a_session_to_another_person():
    session, _ = services.session_resolve(user_id=uuid.uuid4())

    with pytest.raises(Conflict) as caught:
        services.session_resolve(session_id=session.id, user_id=uuid.uuid4())

    assert caught.value.field == "user_id"
    assert Person.objects.count() == 1


def test_resolve_with_only_a_display_name_creates_a_new_person():
    session, _ = services.session_resolve(display_name="Dad")

    assert session.person.display_name == "Dad"


def test_resolving_a_closed_session_reopens_it():
    session, _ = services.session_resolve()
    services.session_close(session_id=session.id)

    resumed, created = services.session_resolve(session_id=session.id)

    assert (created, resumed.status, resumed.ended_at) == (False, "active", None)


def test_close_records_the_dominant_emotion_and_a_summary():
    session, _ = services.session_resolve(user_id=uuid.uuid4())
    for emotion, distress in [("anxious", 0.7), ("calm", 0.1), ("anxious", 0.6), ("calm", 0.1)]:
        services.exchange_record(
            session_id=session.id,
            user_message=f"I feel {emotion}",
            assistant_message="I'm here.",
            emotion=_reading(emotion, distress),
        )

    closed = services.session_close(session_id=session.id)

    # A tie goes to the emotion felt most recently: the session ended calm.
    assert closed.dominant_emotion == "calm"
    assert closed.status == "closed"
    assert closed.session_summary["message_count"] == 8


def test_close_twice_is_harmless():
    session, _ = services.session_resolve()
    first = services.session_close(session_id=session.id)

    second = services.session_close(session_id=session.id, at=timezone.now() + timedelta(hours=1))

    assert second.ended_at == first.ended_at


def test_close_unknown_session_is_not_found():
    with pytest.raises(NotFound):
        services.session_close(session_id=uuid.uuid4())


def test_escalation_marks_the_session():
    session, _ = services.session_resolve()

    services.exchange_record(
        session_id=session.id,
        user_message="Help me, someone is here!",
        assistant_message="You're safe. I'm getting someone to help.",
        escalation=True,
    )

    assert Session.objects.get(id=session.id).escalation_triggered


def test_idle_sessions_expire_and_busy_ones_do_not():
    now = timezone.now()
    idle, _ = services.session_resolve(at=now - timedelta(minutes=31))
    services.exchange_record(
        session_id=idle.id,
        user_message="Hello",
        assistant_message="Hello, dear.",
        at=now - timedelta(minutes=31),
    )
    busy, _ = services.session_resolve(at=now - timedelta(minutes=29))

    assert services.sessions_expire_idle(now=now) == 1

    idle.refresh_from_db()
    busy.refresh_from_db()
    assert (idle.status, busy.status) == ("expired", "active")
    assert idle.ended_at == idle.last_activity_at
    assert idle.dominant_emotion is not None


def test_expire_command_reports_what_it_did(capsys):
    services.session_resolve(at=timezone.now() - timedelta(hours=2))

    call_command("expire_idle_sessions")

    assert "Expired 1 idle session" in capsys.readouterr().out


def test_exchange_on_an_expired_session_makes_it_active_again():
    session, _ = services.session_resolve(at=timezone.now() - timedelta(hours=1))
    services.sessions_expire_idle()

    services.exchange_record(session_id=session.id, user_message="Hi", assistant_message="Hello!")

    assert Session.objects.get(id=session.id).status == "active"


def test_api_key_use_is_recorded_at_most_hourly():
    key, raw_key = services.api_key_create(name="bot")

    assert services.api_key_authenticate(raw_key=raw_key) == key
    first_use = type(key).objects.get(pk=key.pk).last_used_at
    services.api_key_authenticate(raw_key=raw_key)

    assert first_use is not None
    assert type(key).objects.get(pk=key.pk).last_used_at == first_use


def test_revoked_or_tampered_keys_do_not_authenticate():
    key, raw_key = services.api_key_create(name="bot")

    assert services.api_key_authenticate(raw_key=raw_key[:-1] + "x") is None
    services.api_key_revoke(key=key)
    assert services.api_key_authenticate(raw_key=raw_key) is None


def test_a_batch_stores_each_sessions_exchanges_in_order():
    first, second = uuid.uuid4(), uuid.uuid4()
    items = [
        {"session_id": sid, "user_message": f"line {n}", "assistant_message": f"reply {n}"}
        for n, sid in enumerate([first, second, first, second, first])
    ]

    results = services.exchanges_record_many(items)

    assert [r.user_sequence_number for r in results] == [1, 1, 3, 3, 5]
    contents = Session.objects.get(id=first).messages.order_by("sequence_number")
    assert [m.content for m in contents if m.role == "user"] == ["line 0", "line 2", "line 4"]


def test_a_refused_exchange_in_a_batch_does_not_sink_the_others():
    sid = uuid.uuid4()
    services.exchange_record(
        session_id=sid, user_message="Hello", assistant_message="Hi", idempotency_key="k1"
    )
    items = [
        {
            "session_id": sid,
            "user_message": "Different",
            "assistant_message": "x",
            "idempotency_key": "k1",
        },
        {
            "session_id": sid,
            "user_message": "Where am I?",
            "assistant_message": "Home.",
            "idempotency_key": "k2",
        },
    ]

    refused, stored = services.exchanges_record_many(items)

    assert isinstance(refused, Conflict)
    assert stored.created and stored.user_sequence_number == 3
    assert Session.objects.get(id=sid).message_count == 4


def test_replaying_a_batch_twice_stores_it_once():
    sid = uuid.uuid4()
    items = [
        {
            "session_id": sid,
            "user_message": f"m{n}",
            "assistant_message": "r",
            "idempotency_key": f"k{n}",
        }
        for n in range(3)
    ]

    services.exchanges_record_many(items)
    again = services.exchanges_record_many(items)

    assert [r.created for r in again] == [False, False, False]
    assert Session.objects.get(id=sid).message_count == 6
