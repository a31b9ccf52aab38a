"""Retention per organisation (memory/retention.py): old conversations lose their text and keep
their summaries and analytics; people's status follows their use; archiving on request; all
audited, and running the job twice changes nothing more."""

import uuid
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from clara.celery import app as celery_app
from memory import retention, tasks
from memory.conversations import services, tenancy
from memory.conversations.emotion import EmotionReading
from memory.models import (
    AccessEvent,
    ChatMessage,
    DetectedEmotion,
    Organisation,
    Person,
    RepetitionRecord,
    Session,
)

NOW = timezone.now()


def talk(*, days_ago: int, organisation: Organisation | None = None, person_id=None) -> Session:
    """A closed conversation `days_ago` days back: a repeated question, an emotion, a summary."""
    start = NOW - timedelta(days=days_ago)
    session, _ = services.session_resolve(
        session_id=uuid.uuid4(),
        user_id=person_id or uuid.uuid4(),
        display_name="Nana",
        at=start,
        organisation_id=organisation.pk if organisation else None,
    )
    for i in range(3):
        services.exchange_record(
            session_id=session.id,
            user_message="Where is my husband Arthur?",
            assistant_message="Arthur loved the garden, didn't he?",
            emotion=EmotionReading("anxious", 0.8, 0.6, "stable"),
            at=start + timedelta(minutes=i),
        )
    services.session_close(session_id=session.id, at=start + timedelta(minutes=5))
    return Session.objects.get(id=session.id)


@pytest.fixture
def org(db):
    return Organisation.objects.get(pk=tenancy.organisation_get_or_create().pk)


def texts(session: Session) -> list[str]:
    return [m.content for m in ChatMessage.objects.filter(session=session)]


def test_old_conversations_lose_their_text_and_keep_summaries_and_analytics(org):
    old, recent = talk(days_ago=400), talk(days_ago=10)
    summary = old.session_summary
    assert summary and "Where is my husband Arthur?" in texts(old)

    report = retention.retention_apply(organisation_id=org.pk, now=NOW)

    assert (report.sessions, report.messages) == (1, 6)
    old.refresh_from_db()
    assert old.transcript_removed_at == NOW
    assert texts(old) == [""] * 6
    # What stays: the summary, counts, dominant emotion, every reading and repetition count.
    assert old.session_summary == summary
    assert old.message_count == 6
    assert old.dominant_emotion == "anxious"
    assert DetectedEmotion.objects.filter(session=old).count() == 3
    records = RepetitionRecord.objects.filter(session=old).order_by("timestamp")
    assert [r.repeat_count for r in records] == [0, 1, 2]
    assert {(r.original_message, r.response_given, r.meaning) for r in records} == {
        ("", None, None)
    }
    # The recent conversation is untouched.
    assert "Where is my husband Arthur?" in texts(recent)
    assert Session.objects.get(id=recent.id).transcript_removed_at is None


def test_running_twice_changes_nothing_more(org):
    talk(days_ago=400)
    retention.retention_apply(organisation_id=org.pk, now=NOW)
    audit_rows = AccessEvent.objects.count()
    again = retention.retention_apply(organisation_id=org.pk, now=NOW)
    assert again == retention.RetentionReport(sessions=0, messages=0, inactive=0, active=0)
    assert AccessEvent.objects.count() == audit_rows


def test_each_organisation_keeps_transcripts_for_its_own_period(org):
    strict = tenancy.organisation_get_or_create("riverside-care")
    Organisation.objects.filter(pk=strict.pk).update(transcript_retention_days=30)
    mine, theirs = talk(days_ago=60), talk(days_ago=60, organisation=strict)

    retention.retention_apply(organisation_id=org.pk, now=NOW)
    retention.retention_apply(organisation_id=strict.pk, now=NOW)

    assert "Where is my husband Arthur?" in texts(mine)  # 365 days by default
    assert texts(theirs) == [""] * 6


def test_removal_is_audited_per_person_with_a_count_and_no_text(org):
    old = talk(days_ago=400)
    retention.retention_apply(organisation_id=org.pk, now=NOW)
    row = AccessEvent.objects.get(action="retention")
    assert (row.organisation_id, row.person_id, row.channel, row.actor) == (
        org.pk,
        old.person_id,
        "job",
        "job:retention",
    )
    assert row.object_id == "sessions:1"


def test_an_active_session_is_never_cut_however_old(org):
    session = talk(days_ago=400)
    Session.objects.filter(id=session.id).update(status=Session.Status.ACTIVE)
    retention.retention_apply(organisation_id=org.pk, now=NOW)
    assert "Where is my husband Arthur?" in texts(session)


def test_people_quiet_past_the_set_time_are_marked_inactive_and_active_again_when_they_talk(org):
    quiet = talk(days_ago=100).person
    talking = talk(days_ago=5).person
    report = retention.retention_apply(organisation_id=org.pk, now=NOW)
    assert report.inactive == 1
    assert Person.objects.get(id=quiet.id).status == Person.Status.INACTIVE
    assert Person.objects.get(id=talking.id).status == Person.Status.ACTIVE
    assert AccessEvent.objects.filter(action="mark_inactive", person_id=quiet.id).count() == 1

    talk(days_ago=1, person_id=quiet.id)
    report = retention.retention_apply(organisation_id=org.pk, now=NOW)
    assert report.active == 1
    assert Person.objects.get(id=quiet.id).status == Person.Status.ACTIVE


def test_archived_people_stay_archived(org):
    person = talk(days_ago=100).person
    assert retention.person_archive(person=person, actor="user:test", channel="admin")
    assert not retention.person_archive(person=person, actor="user:test", channel="admin")
    retention.retention_apply(organisation_id=org.pk, now=NOW)
    assert Person.objects.get(id=person.id).status == Person.Status.ARCHIVED
    assert AccessEvent.objects.filter(action="archive", person_id=person.id).count() == 1


def test_the_admin_archives_on_request_and_it_is_audited(admin_client, org):
    person = talk(days_ago=3).person
    response = admin_client.post(
        reverse("admin:memory_person_changelist"),
        {"action": "archive_people", "_selected_action": [str(person.id)]},
    )
    assert response.status_code == 302
    assert Person.objects.get(id=person.id).status == Person.Status.ARCHIVED
    row = AccessEvent.objects.get(action="archive")
    assert (row.channel, row.person_id, row.organisation_id) == ("admin", person.id, org.pk)


def test_the_nightly_task_runs_one_organisation_and_is_scheduled(org):
    talk(days_ago=400)
    assert tasks.apply_retention(str(org.pk)) == {
        "sessions": 1,
        "messages": 6,
        "inactive": 1,
        "active": 0,
    }
    entry = celery_app.conf.beat_schedule["apply-retention"]
    assert entry["task"] == "memory.tasks.apply_retention_all"
    assert "memory.tasks.apply_retention" in celery_app.tasks


def test_the_fan_out_queues_one_task_per_organisation(org, monkeypatch):
    tenancy.organisation_get_or_create("riverside-care")
    queued = []
    monkeypatch.setattr(tasks.apply_retention, "delay", queued.append)
    assert tasks.apply_retention_all() == 2
    assert sorted(queued) == sorted(
        str(pk) for pk in Organisation.objects.values_list("pk", flat=True)
    )
