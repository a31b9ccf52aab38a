"""Finding conversations: words (only with the transcript right, audited), feeling, alert,
dates; previous and next. The person (see conftest) has two conversations: two days ago
("Where am I?", mostly confused) and two hours ago ("When is Sarah coming?", a fall: an alert)."""

import pytest
from django.urls import reverse

from dashboard.models import AuditEvent
from memory.models import Session

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def rows(response) -> int:
    return response.content.decode().count('class="session-row"')


def url(person) -> str:
    return reverse("dashboard:person_sessions", args=[person.id])


def test_words_find_the_conversation_that_said_them_in_any_case(alice_client, person):
    response = alice_client.get(url(person), {"q": "sarah COMING"}, headers=HX)
    assert response.status_code == 200 and rows(response) == 1
    assert "Said: “When is Sarah coming?”" in response.content.decode()
    # Every word must be there: no conversation says both.
    assert rows(alice_client.get(url(person), {"q": "sarah home"}, headers=HX)) == 0


def test_a_words_search_is_audited_as_reading_conversations(alice_client, alice, person):
    alice_client.get(url(person), {"q": "Sarah"}, headers=HX)
    assert AuditEvent.objects.filter(
        user=alice, person_id=person.id, action="view_transcript", object_id="search"
    ).exists()


def test_a_member_without_the_transcript_right_may_not_search_words(bob_client, person):
    page = bob_client.get(url(person), headers=HX).content.decode()
    assert 'name="q"' not in page
    response = bob_client.get(url(person), {"q": "Sarah"}, headers=HX)
    assert response.status_code == 403
    assert b"Sarah" not in response.content


def test_feeling_alert_and_dates_filter_for_every_member(bob_client, person):
    older = (
        Session.objects.filter(person=person, message_count__gt=0).order_by("created_at").first()
    )
    Session.objects.filter(id=older.id).update(dominant_emotion="confused")
    assert rows(bob_client.get(url(person), {"feeling": "confused"}, headers=HX)) == 1
    assert rows(bob_client.get(url(person), {"feeling": "calm"}, headers=HX)) == 0
    alerted = bob_client.get(url(person), {"alert": "1"}, headers=HX).content.decode()
    assert alerted.count('class="session-row"') == 1 and "needed a person" in alerted
    today = older.created_at.date().isoformat()
    everything = bob_client.get(url(person), {"start": today}, headers=HX)
    assert rows(everything) == 2
    assert rows(bob_client.get(url(person), {"end": today}, headers=HX)) == 1


def test_a_bad_date_is_a_400_that_names_the_field(alice_client, person):
    response = alice_client.get(url(person), {"start": "yesterday"}, headers=HX)
    assert response.status_code == 400
    assert "From: Enter a valid date." in response.content.decode()
    backwards = alice_client.get(url(person), {"start": "2026-03-02", "end": "2026-03-01"})
    assert backwards.status_code == 400
    assert "To: The end date is before the start date." in backwards.content.decode()


def test_more_pages_keep_the_filters(alice_client, person, monkeypatch):
    from dashboard import conversation_search

    real = conversation_search.conversations_find
    monkeypatch.setattr(
        conversation_search,
        "conversations_find",
        lambda **kwargs: real(**{**kwargs, "per_page": 1}),
    )
    page = alice_client.get(url(person), {"alert": "", "q": "a"}, headers=HX).content.decode()
    assert "q=a" in page and "page=2" in page


def test_an_outsider_cannot_search(charlie_client, person):
    assert charlie_client.get(url(person), {"q": "Sarah"}).status_code == 404


def test_a_conversation_links_to_the_one_before_and_after(alice_client, person):
    older, newer = Session.objects.filter(person=person, message_count__gt=0).order_by("created_at")
    page = alice_client.get(reverse("dashboard:session", args=[person.id, older.id]))
    content = page.content.decode()
    assert reverse("dashboard:session", args=[person.id, newer.id]) in content
    assert "Next conversation" in content and "Previous conversation" not in content
    content = alice_client.get(
        reverse("dashboard:session", args=[person.id, newer.id])
    ).content.decode()
    assert "Previous conversation" in content and "Next conversation" not in content
