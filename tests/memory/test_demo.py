import uuid
from datetime import UTC, datetime, timedelta
from io import StringIO
from statistics import mean

import pytest
from django.core.management import CommandError, call_command

from memory import demo, services
from memory.models import (
    ChatMessage,
    DetectedEmotion,
    NarrativeUsage,
    Person,
    RepetitionRecord,
    Session,
)

SMALL = ["--people", "2", "--days", "3"]


def _load(*args) -> str:
    out = StringIO()
    call_command("load_demo", *args, stdout=out)
    return out.getvalue()


def _snapshot() -> dict:
    """Everything the demo wrote except absolute dates (they follow the clock, whole days apart)."""
    return {
        "people": list(
            Person.objects.order_by("id").values_list("id", "display_name", "caregiver_context")
        ),
        "sessions": list(
            Session.objects.order_by("id").values_list(
                "id",
                "person_id",
                "message_count",
                "status",
                "dominant_emotion",
                "escalation_triggered",
            )
        ),
        "session_times": [s.created_at.time() for s in Session.objects.order_by("id")],
        "messages": list(
            ChatMessage.objects.order_by("session_id", "sequence_number").values_list(
                "session_id",
                "sequence_number",
                "role",
                "content",
                "intent",
                "narrative_id",
                "processing_time_ms",
            )
        ),
        "emotions": list(
            DetectedEmotion.objects.order_by("session_id", "message__sequence_number").values_list(
                "session_id", "emotion", "confidence", "distress_score", "trajectory"
            )
        ),
        "repetitions": list(
            RepetitionRecord.objects.order_by("session_id", "message__sequence_number").values_list(
                "session_id", "fingerprint", "question_type", "repeat_count"
            )
        ),
        "narratives": list(
            NarrativeUsage.objects.order_by("session_id", "message__sequence_number").values_list(
                "session_id", "narrative_id", "mode", "category", "emotion_at_usage"
            )
        ),
    }


def _delete_everything():
    for model in (NarrativeUsage, RepetitionRecord, DetectedEmotion, ChatMessage, Session, Person):
        model.objects.all().delete()


def test_load_demo_writes_realistic_history_through_the_services(db):
    started = datetime.now(UTC)
    out = _load(*SMALL)

    people, sessions = Person.objects.count(), Session.objects.count()
    messages = ChatMessage.objects.count()
    assert people == 2
    assert f"2 people, {sessions} sessions, {messages} messages" in out
    assert 2 * 3 <= sessions <= 2 * 3 * 3
    for person in Person.objects.all():
        assert person.display_name
        assert {"preferredName", "knownTopics", "avoidTopics"} <= set(person.caregiver_context)

    # Every session is over, with gapless sequence numbers, the person's and Clara's in turn.
    for session in Session.objects.all():
        assert session.status in (Session.Status.CLOSED, Session.Status.EXPIRED)
        assert session.session_summary is not None
        rows = list(
            session.messages.order_by("sequence_number").values_list(
                "sequence_number", "role", "person_id"
            )
        )
        assert [seq for seq, _, _ in rows] == list(range(1, session.message_count + 1))
        assert 8 <= session.message_count <= 40
        assert [role for _, role, _ in rows] == ["user", "assistant"] * (len(rows) // 2)
        assert {person for _, _, person in rows} == {session.person_id}

    # Every person's message has its emotion and repetition record; Clara's have neither.
    user_messages = ChatMessage.objects.filter(role=ChatMessage.Role.USER)
    assert user_messages.count() == messages // 2
    assert not user_messages.filter(emotion__isnull=True).exists()
    assert not user_messages.filter(repetition__isnull=True).exists()
    assert DetectedEmotion.objects.count() == RepetitionRecord.objects.count() == messages // 2

    # All in the past, spread over the requested days.
    first = ChatMessage.objects.order_by("timestamp").first().timestamp
    last = ChatMessage.objects.order_by("-timestamp").first().timestamp
    assert last < started
    assert started - timedelta(days=5) < first < last - timedelta(days=1)

    # Sundowning: evenings (17:00-21:00) are more distressed than mornings.
    by_hour = [(e.timestamp.hour, e.distress_score) for e in DetectedEmotion.objects.all()]
    morning = [d for hour, d in by_hour if hour < 12]
    evening = [d for hour, d in by_hour if 17 <= hour < 21]
    assert morning and evening
    assert mean(evening) > mean(morning) + 0.1

    # Exactly one escalation, on a frightened message.
    (escalated,) = Session.objects.filter(escalation_triggered=True)
    assert escalated.emotions.filter(emotion="fearful").exists()

    # The person repeats themselves, and Clara tells curated stories.
    assert RepetitionRecord.objects.filter(repeat_count__gt=0).exists()
    assert RepetitionRecord.objects.exclude(question_type="general").exists()
    stories = NarrativeUsage.objects.all()
    assert stories.exists()
    assert set(stories.values_list("category", flat=True)) <= {
        "calming_story",
        "grounding",
        "memory_loop",
    }
    assert set(stories.values_list("mode", flat=True)) <= {"seed", "fallback"}
    for story in stories:
        assert story.message.narrative_id == story.narrative_id
        assert story.message.role == ChatMessage.Role.ASSISTANT


def test_stories_tend_to_be_followed_by_lower_distress():
    plan = demo.build_plan(seed=7, people=4, days=28)
    drops = []
    for session in plan.sessions:
        for before, after in zip(session.exchanges, session.exchanges[1:], strict=False):
            if before.narrative and before.emotion and after.emotion:
                drops.append(after.emotion.distress_score - before.emotion.distress_score)
    assert len(drops) > 20
    assert mean(drops) < -0.05


def test_the_plan_leaves_some_readings_to_the_built_in_reader():
    exchanges = [e for s in demo.build_plan(seed=7, people=2, days=3).sessions for e in s.exchanges]
    without = [e for e in exchanges if e.emotion is None]
    assert 0 < len(without) < len(exchanges) / 2
    assert sum(e.escalation for e in exchanges) == 1


def test_refuses_a_database_that_has_data(db):
    services.session_resolve(session_id=uuid.uuid4(), display_name="Real person")
    with pytest.raises(CommandError, match="empty"):
        _load(*SMALL)
    out = _load(*SMALL, "--if-empty")
    assert "already has data" in out
    assert Person.objects.count() == 1
    assert Session.objects.count() == 1
    assert not ChatMessage.objects.exists()


def test_if_empty_loads_into_an_empty_database(db):
    assert "Loaded demo data" in _load(*SMALL, "--if-empty")
    assert Person.objects.count() == 2


def test_rejects_nonsense_sizes(db):
    with pytest.raises(CommandError):
        _load("--people", "0")


def test_same_seed_same_plan_whatever_the_clock():
    monday = datetime(2025, 3, 3, 10, 0, tzinfo=UTC)
    a = demo.build_plan(seed=11, people=3, days=4, now=monday)
    b = demo.build_plan(seed=11, people=3, days=4, now=monday + timedelta(days=9, hours=9))

    def content(plan):
        return (
            plan.people,
            [
                (
                    s.id,
                    s.person_id,
                    s.started_at.time(),
                    s.closed_at is None,
                    [
                        (
                            e.at.time(),
                            e.user_message,
                            e.assistant_message,
                            e.emotion,
                            e.intent,
                            e.narrative,
                            e.escalation,
                        )
                        for e in s.exchanges
                    ],
                )
                for s in plan.sessions
            ],
        )

    assert content(a) == content(b)
    for plan, now in ((a, monday), (b, monday + timedelta(days=9, hours=9))):
        last = max(s.exchanges[-1].at for s in plan.sessions)
        assert last < now - timedelta(minutes=30)
        assert min(s.started_at for s in plan.sessions) > now - timedelta(days=6)
    other = demo.build_plan(seed=12, people=3, days=4, now=monday)
    assert {p.id for p in other.people}.isdisjoint({p.id for p in a.people})


def test_same_seed_same_database_content(db):
    _load("--seed", "5", *SMALL)
    first = _snapshot()
    assert len(first["messages"]) > 0
    _delete_everything()
    _load("--seed", "5", *SMALL)
    assert _snapshot() == first

    _delete_everything()
    _load("--seed", "6", *SMALL)
    assert _snapshot()["people"] != first["people"]
