import uuid
from datetime import UTC, datetime, timedelta
from io import StringIO
from statistics import mean

import pytest
from celery.signals import before_task_publish
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from clara.celery import app as celery_app
from memory import demo
from memory.conversations import escalation, services
from memory.models import (
    Alert,
    ApiKey,
    ChatMessage,
    DetectedEmotion,
    Memory,
    NarrativeUsage,
    Person,
    PersonTrend,
    RepetitionRecord,
    RollingSummary,
    Session,
    SummarySpine,
)

SMALL = ["--people", "2", "--days", "3"]


def _load(*args) -> str:
    out = StringIO()
    call_command("load_demo", *args, stdout=out)
    return out.getvalue()


def _snapshot() -> dict:
    """Everything the demo wrote but absolute dates (they follow the clock, whole days apart) and
    Clara's reply times (measured)."""
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
    from memory.models import Alert, PersonTrend, RollingSummary, SummarySpine

    for model in (
        Alert, RollingSummary, SummarySpine, PersonTrend,
        NarrativeUsage, RepetitionRecord, DetectedEmotion, ChatMessage, Session, Person,
    ):  # fmt: skip
        model.objects.all().delete()


def _distress_changes() -> tuple[list[float], list[float]]:
    """How the person's distress moved from each message to their next one in the session:
    after Clara's replies that told a story, and after her other replies."""
    distress = {
        (session_id, seq): score
        for session_id, seq, score in DetectedEmotion.objects.values_list(
            "session_id", "message__sequence_number", "distress_score"
        )
    }
    told = set(NarrativeUsage.objects.values_list("session_id", "message__sequence_number"))
    after_story, after_other = [], []
    for (session_id, seq), score in distress.items():
        following = distress.get((session_id, seq + 2))
        if following is not None:
            changes = after_story if (session_id, seq + 1) in told else after_other
            changes.append(following - score)
    return after_story, after_other


def test_load_demo_writes_realistic_history_through_the_services_behind_the_api(db):
    started = datetime.now(UTC)
    out = _load("--people", "3", "--days", "6")

    people, sessions = Person.objects.count(), Session.objects.count()
    messages = ChatMessage.objects.count()
    assert people == 3
    assert f"3 people, {sessions} sessions, {messages} messages" in out
    assert 3 * 6 <= sessions <= 3 * 6 * 3
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

    # As the companion stores them: every exchange with its idempotency key and Clara's
    # measured reply time. In process, straight to the services: no API key was needed.
    assert not user_messages.filter(idempotency_key__isnull=True).exists()
    replies = ChatMessage.objects.filter(role=ChatMessage.Role.ASSISTANT)
    assert not replies.filter(processing_time_ms__isnull=True).exists()
    assert not ApiKey.objects.exists()

    # All in the past, spread over the requested days.
    first = ChatMessage.objects.order_by("timestamp").first().timestamp
    last = ChatMessage.objects.order_by("-timestamp").first().timestamp
    assert last < started
    assert started - timedelta(days=8) < first < last - timedelta(days=3)

    # Sundowning: evenings (17:00-21:00) are more distressed than mornings.
    by_hour = [(e.timestamp.hour, e.distress_score) for e in DetectedEmotion.objects.all()]
    morning = [d for hour, d in by_hour if hour < 12]
    evening = [d for hour, d in by_hour if 17 <= hour < 21]
    assert morning and evening
    assert mean(evening) > mean(morning) + 0.1

    # Exactly one escalation, on the frightened message.
    (escalated,) = Session.objects.filter(escalation_triggered=True)
    assert demo.FEARFUL_LINE in escalated.messages.values_list("content", flat=True)
    assert escalated.emotions.filter(emotion="fearful").exists()

    # The person repeats themselves, and Clara tells the stories the memory chose...
    assert RepetitionRecord.objects.filter(repeat_count__gt=0).exists()
    assert RepetitionRecord.objects.exclude(question_type="general").exists()
    stories = NarrativeUsage.objects.select_related("message")
    assert stories.exists()
    for story in stories:
        assert story.message.narrative_id == story.narrative_id
        assert story.message.role == ChatMessage.Role.ASSISTANT
        assert story.message.intent in ("story", "comfort")

    # ...after which the person tends to be calmer than after Clara's other replies.
    after_story, after_other = _distress_changes()
    assert len(after_story) > 50 and len(after_other) > 50
    assert mean(after_story) < 0
    assert mean(after_story) < mean(after_other) - 0.08


def test_the_api_rate_limit_does_not_apply_to_loading_the_demo(db, settings):
    # Thousands of turns, each a context read and an exchange write; a bot calling the API this
    # fast would be refused (the limit stays on for real callers: tests/test_ratelimit*).
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 1
    assert "Loaded demo data" in _load(*SMALL)
    assert ChatMessage.objects.count() > 2 * 10


@pytest.mark.django_db(transaction=True)
def test_the_demo_is_complete_when_loading_returns_and_nothing_is_left_to_the_worker():
    published = []

    def count(sender=None, **kwargs):
        published.append(sender)

    before_task_publish.connect(count)
    try:
        _load(*SMALL)
    finally:
        before_task_publish.disconnect(count)

    # Nothing went to the broker: the worker has no backlog to race the dashboard with...
    assert published == []
    assert celery_app.conf.task_always_eager is False
    # ...because every job ran here: each session's full summary (not the basic one written
    # at close), the rolling summary and spine, facts from what people said, and today's trends.
    sessions = list(Session.objects.all())
    assert sessions
    for session in sessions:
        assert session.session_summary.get("one_liner"), session.session_summary
    people = set(Person.objects.values_list("id", flat=True))
    assert set(RollingSummary.objects.values_list("person_id", flat=True)) == people
    assert set(SummarySpine.objects.values_list("person_id", flat=True)) == people
    assert Memory.objects.filter(source=Memory.Source.CONVERSATION_EXTRACTION).exists()
    today = timezone.now().date()
    assert {
        person_id
        for person_id, day in PersonTrend.objects.values_list("person_id", "day")
        if abs((day - today).days) <= 1
    } == people
    # The escalation's alert is there too.
    assert Alert.objects.exists()


def test_only_the_frightened_evening_trips_the_escalation_detector():
    for seed in (1, 7, 11):
        exchanges = [e for s in demo.build_plan(seed=seed).sessions for e in s.exchanges]
        flagged = [
            e.person_message
            for e in exchanges
            if escalation.detect(
                e.person_message,
                emotion=e.feeling.emotion if e.feeling else None,
                distress=e.feeling.distress if e.feeling else 0.0,
            ).escalate
        ]
        # The frightened evening: the frightening moment, and (the same session, so the same
        # alert) the fear that is still there a turn later. Nothing else of a month.
        assert flagged[0] == demo.FEARFUL_LINE
        assert set(flagged) <= {demo.FEARFUL_LINE, demo.STILL_FEARFUL_LINE}


def test_the_plan_leaves_some_readings_to_the_built_in_reader():
    exchanges = [e for s in demo.build_plan(seed=7, people=2, days=3).sessions for e in s.exchanges]
    without = [e for e in exchanges if e.feeling is None]
    assert 0 < len(without) < len(exchanges) / 2


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
                            e.person_message,
                            e.feeling,
                            e.story_eases,
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
    """The same ids, messages and readings; and Clara's replies, stories and intents too."""
    _load("--seed", "5", *SMALL)
    first = _snapshot()
    assert len(first["messages"]) > 0 and len(first["narratives"]) > 0
    _delete_everything()
    _load("--seed", "5", *SMALL)
    assert _snapshot() == first

    _delete_everything()
    _load("--seed", "6", *SMALL)
    assert _snapshot()["people"] != first["people"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor == "sqlite", reason="SQLite loads in turn: one writer")
def test_loading_everyone_at_once_writes_what_loading_in_turn_writes(monkeypatch):
    plan = demo.build_plan(seed=3, people=3, days=2)
    demo.load(plan)
    at_once = _snapshot()
    summaries = sorted(Session.objects.values_list("id", "session_summary"))
    _delete_everything()
    Memory.objects.all().delete()

    monkeypatch.setattr(demo, "_converse_each", demo._converse_all)  # one transaction, in turn
    demo.load(plan)

    assert _snapshot() == at_once
    assert sorted(Session.objects.values_list("id", "session_summary")) == summaries


def test_demo_people_have_a_home_a_time_zone_and_a_name_on_record():
    """A new user's demo looks like a real organisation: no "time zone not set" warning, and
    a full name and identifier for the clinician report."""
    from memory.core.person import CaregiverContext

    plan = demo.build_plan(people=7, days=1)
    for person in plan.people:
        about = CaregiverContext.from_blob(person.caregiver_context)
        assert about.zone_set and about.home
        assert len(person.full_name.split()) >= 2 and person.identifier
    assert len({p.identifier for p in plan.people}) == 7
