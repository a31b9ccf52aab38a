"""Continuity mode: one stream across sessions for continuous companions; Clara's rules otherwise."""

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory.companion import continuity
from memory.companion.context import context_build
from memory.conversations import services
from memory.core.errors import Conflict
from memory.facts import notes as person_notes
from memory.facts import search
from memory.models import ChatMessage, Person, StreamSummary

pytestmark = pytest.mark.django_db


@pytest.fixture
def person(db):
    now = timezone.now()
    return Person.objects.create(display_name="Sam", created_at=now, last_active_at=now)


def _talk(session, pairs, channel=None):
    for user, reply in pairs:
        services.exchange_record(session_id=session.id, user_message=user, assistant_message=reply)
    if channel:
        ChatMessage.objects.filter(session=session).update(channel=channel)


def _context(session, message):
    return context_build(session_id=session.id, message=message).rendered


def test_dementia_safe_is_the_default_and_sees_only_this_session(person):
    first, _ = services.session_resolve(user_id=person.id)
    _talk(first, [("My sister Ann lives in Leeds", "How lovely.")])
    services.session_close(session_id=first.id)
    second, _ = services.session_resolve(user_id=person.id)
    rendered = _context(second, "Hello again")
    assert continuity.policy_of(person.id) == "dementia_safe"
    assert "Ann" not in rendered.system_prompt
    assert all("Ann" not in m["content"] for m in rendered.messages)


def test_a_continuous_companion_carries_the_stream_across_sessions_and_restarts(person):
    continuity.persona_policy_set(slug="buddy", policy="continuous", display_name="Buddy")
    continuity.person_persona_set(person_id=person.id, persona="buddy")
    first, _ = services.session_resolve(user_id=person.id)
    _talk(first, [("My sister Ann lives in Leeds", "How lovely, tell me about her.")], "sms")
    person_notes.notes_update(person_id=person.id, persona="buddy", fields={"mood": "upbeat"})
    services.session_close(session_id=first.id)
    # A restart: nothing is kept in process memory between the two sessions.
    search.clear_cache()
    second, _ = services.session_resolve(user_id=person.id)
    rendered = _context(second, "Did I tell you where Ann lives?")
    assert rendered.messages[0] == {"role": "user", "content": "My sister Ann lives in Leeds"}
    assert rendered.messages[-1]["content"] == "Did I tell you where Ann lives?"
    assert "[your note: mood, noted " in rendered.system_prompt
    assert '] "upbeat"' in rendered.system_prompt
    assert "Buddy" in rendered.system_prompt


def test_older_turns_fold_into_a_summary_under_the_companions_instructions(person, monkeypatch):
    continuity.persona_policy_set(slug="buddy", policy="continuous")
    continuity.person_persona_set(person_id=person.id, persona="buddy")
    person_notes.notes_update(
        person_id=person.id, persona="buddy", fields={"compaction": "keep anything about gardening"}
    )
    monkeypatch.setattr(continuity, "RECENT_TOKEN_BUDGET", 25)
    session, _ = services.session_resolve(user_id=person.id)
    _talk(
        session,
        [
            ("I planted tulips in the gardening club today", "Wonderful."),
            ("My nephew Olly is visiting on Friday", "That will be nice."),
            ("The weather is grey", "It is."),
            ("Just sitting here now with a cup of tea", "Sounds cosy."),
        ],
    )
    rendered = _context(session, "What's new?")
    summary = StreamSummary.objects.get(person=person)
    assert "gardening club" in summary.text
    assert "Olly" in summary.text
    assert "summary of your earlier conversation is marked" in rendered.system_prompt
    assert '[earlier conversation] "They said: My nephew Olly' in rendered.system_prompt
    # The turns within the budget are verbatim, the rest only in the summary.
    assert len(rendered.messages) < 9
    # Refreshing as the stream grows folds only the new turns.
    covered = summary.messages_covered
    _talk(session, [("Another long message about nothing in particular at all", "I see.")])
    _context(session, "Anything else?")
    summary.refresh_from_db()
    assert summary.messages_covered > covered


def test_someone_in_a_care_team_cannot_be_switched_to_continuous(person):
    from dashboard.models import CareTeamMembership

    user = get_user_model().objects.create_user("daughter", password="x" * 12)
    CareTeamMembership.objects.create(user=user, person=person, role="family")
    continuity.persona_policy_set(slug="buddy", policy="continuous")
    with pytest.raises(Conflict) as exc:
        continuity.person_persona_set(person_id=person.id, persona="buddy")
    assert exc.value.field == "persona"
    # Nor can their persona become continuous under them.
    with pytest.raises(Conflict):
        continuity.persona_policy_set(slug="clara", policy="continuous")
    person.refresh_from_db()
    assert person.persona == "clara"
    assert continuity.policy_of(person.id) == "dementia_safe"


def test_api_persona_switch_and_refusal(api, person):
    created = api.client.put(
        "/api/v1/personas/buddy",
        '{"memory_policy": "continuous"}',
        content_type="application/json",
        headers=api.headers,
    )
    assert created.status_code == 200, created.json()
    bad = api.client.put(
        "/api/v1/personas/buddy",
        '{"memory_policy": "forever"}',
        content_type="application/json",
        headers=api.headers,
    )
    assert bad.status_code == 422
    assert bad.json()["field"] == "memory_policy"
    switched = api.client.put(
        f"/api/v1/people/{person.id}/persona",
        '{"persona": "buddy"}',
        content_type="application/json",
        headers=api.headers,
    )
    assert switched.json()["memory_policy"] == "continuous"


def test_reasoning_is_stripped_before_storage(api, person):
    session, _ = services.session_resolve(user_id=person.id)
    response = api.post(
        f"/api/v1/sessions/{session.id}/exchanges",
        {
            "user_message": "Hello",
            "assistant_message": [
                {"type": "thinking", "thinking": "They seem tired; keep it short."},
                {"type": "text", "text": "<think>plan</think>Hello Sam, lovely to hear from you."},
            ],
        },
    )
    assert response.status_code == 201, response.json()
    stored = ChatMessage.objects.get(session=session, role="assistant").content
    assert stored == "Hello Sam, lovely to hear from you."
    only_thinking = api.post(
        f"/api/v1/sessions/{session.id}/exchanges",
        {"user_message": "Hi", "assistant_message": "<thinking>nothing said</thinking>"},
    )
    assert only_thinking.status_code == 422
    assert only_thinking.json()["field"] == "assistant_message"


def test_each_persona_keeps_its_own_stream(person):
    continuity.persona_policy_set(slug="buddy", policy="continuous", display_name="Buddy")
    continuity.persona_policy_set(slug="pal", policy="continuous", display_name="Pal")
    continuity.person_persona_set(person_id=person.id, persona="buddy")
    first, _ = services.session_resolve(user_id=person.id)
    _talk(first, [("My sister Ann lives in Leeds", "How lovely.")])
    services.session_close(session_id=first.id)

    continuity.person_persona_set(person_id=person.id, persona="pal")
    second, _ = services.session_resolve(user_id=person.id)
    rendered = _context(second, "Hello, who are you?")
    assert "Pal" in rendered.system_prompt
    assert all("Ann" not in m["content"] for m in rendered.messages)
    assert "Ann" not in rendered.system_prompt
    _talk(second, [("I grew up in Hull", "Tell me about Hull.")])
    services.session_close(session_id=second.id)

    # Back with the first persona: its own stream, without the other's conversation.
    continuity.person_persona_set(person_id=person.id, persona="buddy")
    third, _ = services.session_resolve(user_id=person.id)
    rendered = _context(third, "Hello again")
    contents = [m["content"] for m in rendered.messages]
    assert "My sister Ann lives in Leeds" in contents
    assert all("Hull" not in content for content in contents)


def test_a_continuous_companion_knows_the_persons_date_and_time_and_what_it_remembers(person):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    person.caregiver_context = {"timezone": "Australia/Sydney", "pronouns": "he"}
    person.save()
    continuity.persona_policy_set(slug="buddy", policy="continuous", display_name="Buddy")
    continuity.person_persona_set(person_id=person.id, persona="buddy")
    session, _ = services.session_resolve(user_id=person.id)
    at = datetime(2026, 11, 29, 4, 30, tzinfo=ZoneInfo("UTC"))  # 15:30 in Sydney
    text = context_build(session_id=session.id, message="Hello", now=at).rendered.system_prompt
    assert "It is now Sunday 29 November 2026, 15:30 (Australia/Sydney), where Sam is." in text
    assert "search_memory tool with scope 'conversations'" in text
    assert "What you remember of Sam" in text


def test_a_continuous_companion_can_look_into_earlier_sessions_and_clara_cannot(person, api):
    continuity.persona_policy_set(slug="buddy", policy="continuous", display_name="Buddy")
    continuity.person_persona_set(person_id=person.id, persona="buddy")
    first, _ = services.session_resolve(user_id=person.id)
    _talk(first, [("My old dog Rex loved the beach at Whitby", "What a lovely memory.")])
    services.session_close(session_id=first.id)
    second, _ = services.session_resolve(user_id=person.id)
    body = {"person_id": str(person.id), "query": "Rex beach", "scope": "conversations"}
    found = api.post("/api/v1/tools/search_memory", body).json()["conversation"]
    assert found == [{"role": "user", "content": "My old dog Rex loved the beach at Whitby"}]

    # Clara's rule: only the session in progress is searched.
    continuity.person_persona_set(person_id=person.id, persona="clara")
    third, _ = services.session_resolve(user_id=person.id)
    body["session_id"] = str(third.id)
    assert api.post("/api/v1/tools/search_memory", body).json()["conversation"] == []
