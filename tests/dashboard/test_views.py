"""What the pages show and do: full pages vs htmx fragments, alerts, the team, logging in."""

import json
import re
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from memory.conversations import tenancy
from memory.models import Alert, Session
from tests.dashboard.conftest import PASSWORD, converse, login

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
PANELS = [
    ("person_emotions", "emotions"),
    ("person_patterns", "patterns"),
    ("person_repetition", "repetition"),
    ("person_calming", "calming"),
    ("person_sessions", "sessions"),
    ("person_alerts", "alerts"),
]


def charts_in(content: bytes) -> list[dict]:
    found = re.findall(rb'<script type="application/json" data-chart>(.*?)</script>', content, re.S)
    return [json.loads(raw) for raw in found]


# --- People list ----------------------------------------------------------------------------


def test_people_list_shows_only_the_people_in_my_teams(alice_client, person, other_person):
    response = alice_client.get(reverse("dashboard:people"))
    assert response.status_code == 200
    assert b"Peggy (Nana)" in response.content
    assert b"Arthur" not in response.content


def test_people_list_shows_todays_mood_in_words_and_alerts_to_look_at(alice_client, person):
    # Today (London): the second conversation, anxious and frightened, two hours ago. Read just
    # after it ended, so it is still "today" when the suite runs between midnight and 2 a.m.
    ended = Session.objects.filter(person=person).latest("created_at").last_activity_at
    with time_machine.travel(ended + timedelta(minutes=1)):
        content = alice_client.get(reverse("dashboard:people")).content.decode()
    assert "Mostly anxious" in content
    assert "1 conversation today" in content
    assert "1 alert to look at" in content


def test_people_list_counts_no_alert_once_resolved(alice_client, alert):
    alert.status = Alert.Status.RESOLVED
    alert.save()
    content = alice_client.get(reverse("dashboard:people")).content.decode()
    assert 'No alerts<span class="visually-hidden"> to look at</span>' in content


# --- Person page and its panels -------------------------------------------------------------


def test_person_page_loads_each_panel_from_its_own_url(alice_client, person):
    response = alice_client.get(reverse("dashboard:person", args=[person.id]))
    content = response.content.decode()
    for name, _ in PANELS:
        url = reverse(f"dashboard:{name}", args=[person.id])
        assert f'hx-get="{url}"' in content
        assert f'href="{url}"' in content  # usable without JavaScript too
    assert "plotly-cartesian-4.1.1.min.js" in content
    assert "<script>" not in content  # no inline script (CSP)


@pytest.mark.parametrize("name,panel", PANELS)
def test_htmx_gets_the_fragment_and_a_plain_request_the_full_page(
    alice_client, person, name, panel
):
    url = reverse(f"dashboard:{name}", args=[person.id])
    fragment = alice_client.get(url, headers=HX)
    page = alice_client.get(url)
    assert fragment.status_code == page.status_code == 200
    assert fragment.content.lstrip().startswith(b"<section")
    assert f'id="{panel}"'.encode() in fragment.content
    assert b"<html" not in fragment.content
    assert b"<html" in page.content and f'id="{panel}"'.encode() in page.content
    assert "HX-Request" in fragment["Vary"]


def test_emotion_timeline_chart_has_each_days_average_and_peak(alice_client, person):
    response = alice_client.get(reverse("dashboard:person_emotions", args=[person.id]), headers=HX)
    (figure,) = charts_in(response.content)
    by_name = {trace["name"]: trace for trace in figure["data"]}
    # Two days: (60, 70, 50, 20) and (50, 90, 40); each day's average and its peak.
    assert by_name["day's average"]["y"] == [50, 60]
    assert by_name["most upset moment"]["y"] == [70, 90]
    assert by_name["needed a person"]["y"] == [90]  # the reading that raised it
    assert "Peggy" in figure["layout"]["title"]["text"]


def test_timeline_ignores_a_days_value_it_does_not_offer(alice_client, person):
    url = reverse("dashboard:person_emotions", args=[person.id])
    assert b"last 30 days" in alice_client.get(url + "?days=abc", headers=HX).content
    assert b"last 30 days" in alice_client.get(url + "?days=100000", headers=HX).content
    assert b"last 7 days" in alice_client.get(url + "?days=7", headers=HX).content


def test_repetition_panel_says_the_week_in_plain_words(alice_client, person):
    response = alice_client.get(
        reverse("dashboard:person_repetition", args=[person.id]), headers=HX
    )
    content = response.content.decode()
    assert "“Where am I?”" in content or "“When is Sarah coming?”" in content
    assert re.search(r"Asked (where she is|about family and friends) twice a conversation", content)


def test_repetition_panel_shows_the_persons_own_words_only_with_the_transcript_right(
    alice_client, bob_client, person
):
    url = reverse("dashboard:person_repetition", args=[person.id])
    alice = alice_client.get(url, headers=HX).content.decode()
    bob = bob_client.get(url, headers=HX).content.decode()
    assert "“Where am I?”" in alice
    # (The charts' own label for the kind of question, "Where am I?", is Clara's wording.)
    for said in ("\u201cWhere am I?\u201d", "Sarah", "Is this my home", "\u201c"):
        assert said not in bob
    assert "Asked where she is" in bob
    assert "Only members allowed to read conversations see Peggy" in bob


def test_repetition_panel_groups_other_words_as_one_question(alice_client, person):
    converse(
        person,
        timezone.now() - timedelta(hours=1),
        [("I want to go home.", 0.5, "anxious"), ("Take me home, please.", 0.5, "anxious")],
    )
    content = alice_client.get(
        reverse("dashboard:person_repetition", args=[person.id]), headers=HX
    ).content.decode()
    # The two wordings are one question (the count may include the fixture's other asks).
    # (Staff see "Set an agreed answer" after the sentence, in the same item.)
    assert re.search(r"<li>“I want to go home\.”, [^<]*in different words\s*(</li>|<br>)", content)
    assert "Take me home" not in content


def test_repetition_panel_shows_conversations_that_went_round_in_circles(
    alice_client, bob_client, person
):
    url = reverse("dashboard:person_repetition", args=[person.id])
    assert "times or more" not in alice_client.get(url, headers=HX).content.decode()
    converse(person, timezone.now() - timedelta(hours=1), [("Who are you?", 0.5, "confused")] * 6)
    for client in (alice_client, bob_client):
        content = client.get(url, headers=HX).content.decode()
        assert (
            "In 1 of 3 conversations in the last 30 days, Peggy asked one thing 5 times or more"
            in content
        )


def test_agreed_answer_shows_next_to_the_question(alice_client, person):
    person.caregiver_context["agreedAnswers"] = {"location": "You live at Rosewood House."}
    person.save()
    response = alice_client.get(
        reverse("dashboard:person_repetition", args=[person.id]), headers=HX
    )
    assert "Agreed answer: You live at Rosewood House." in response.content.decode()


def test_sessions_panel_pages_with_htmx_rows_only(alice_client, person, monkeypatch):
    from dashboard import selectors

    monkeypatch.setattr(selectors, "SESSIONS_PER_PAGE", 1)
    url = reverse("dashboard:person_sessions", args=[person.id])
    first = alice_client.get(url, headers=HX).content.decode()
    assert "Show older conversations" in first
    second = alice_client.get(url + "?page=2", headers=HX).content.decode()
    assert second.lstrip().startswith("<li")
    assert "Show older conversations" not in second
    assert second.count('class="session-row"') == 1


# --- A conversation ---------------------------------------------------------------------------


def test_session_page_shows_the_summary_and_loads_the_transcript_for_alice(
    alice_client, person, session
):
    content = alice_client.get(reverse("dashboard:session", args=[person.id, session.id])).content
    transcript_url = reverse("dashboard:session_transcript", args=[person.id, session.id])
    assert f'hx-get="{transcript_url}"'.encode() in content
    assert b"Peggy talked with Clara" in content or b"Talked with Clara" in content


def test_session_page_for_bob_says_the_transcript_needs_permission(bob_client, person, session):
    content = bob_client.get(reverse("dashboard:session", args=[person.id, session.id])).content
    assert b"transcript/" not in content
    assert b"Ask the team admin" in content
    assert b"I fell" not in content


def test_transcript_shows_feeling_per_message_and_marks_the_escalation(
    alice_client, person, session
):
    url = reverse("dashboard:session_transcript", args=[person.id, session.id])
    content = alice_client.get(url, headers=HX).content.decode()
    assert "I fell and I can&#x27;t get up, help me" in content
    assert "frightened, 90 of 100" in content
    assert "Needed a person: may have fallen" in content
    assert content.count("msg-escalation") == 1
    assert "asked again" in content  # "When is Sarah coming?" the second time
    assert AuditEvent.objects.filter(action="view_transcript", object_id=str(session.id)).exists()


# --- Alerts ----------------------------------------------------------------------------------


def test_claiming_an_alert_records_who_and_when(alice_client, alice, person, alert):
    url = reverse("dashboard:alert_status", args=[person.id, alert.id])
    response = alice_client.post(url, {"action": "claim"}, headers=HX)
    assert response.status_code == 200
    assert b"You are dealing with it" in response.content
    alert.refresh_from_db()
    assert (alert.status, alert.claimed_by) == ("claimed", alice)
    assert alert.claimed_at is not None


def test_family_may_not_claim_an_alert_and_are_told_why(bob_client, person, alert):
    url = reverse("dashboard:alert_status", args=[person.id, alert.id])
    response = bob_client.post(url, {"action": "claim"}, headers=HX)
    assert response.status_code == 403
    assert b"have been told" in response.content
    alert.refresh_from_db()
    assert (alert.status, alert.claimed_by) == ("open", None)


def test_resolving_an_alert_without_htmx_redirects_back(alice_client, alice, person, alert):
    url = reverse("dashboard:alert_status", args=[person.id, alert.id])
    response = alice_client.post(url, {"action": "resolve", "outcome": "well"})
    assert response.status_code == 302
    assert response["Location"].endswith(f"/people/{person.id}/#alerts")
    alert.refresh_from_db()
    assert (alert.status, alert.resolved_by, alert.outcome) == ("resolved", alice, "well")


def test_an_unknown_alert_status_is_refused_and_changes_nothing(alice_client, person, alert):
    url = reverse("dashboard:alert_status", args=[person.id, alert.id])
    response = alice_client.post(url, {"action": "deleted"}, headers=HX)
    assert response.status_code == 400
    alert.refresh_from_db()
    assert alert.status == "open" and alert.claimed_by is None


def test_alert_status_is_get_proof(alice_client, person, alert):
    url = reverse("dashboard:alert_status", args=[person.id, alert.id])
    assert alice_client.get(url).status_code == 405


# --- Care team --------------------------------------------------------------------------------


def test_admin_adds_a_member_without_transcript_right(alice_client, person):
    dave = login("dave")
    response = alice_client.post(
        reverse("dashboard:team_add", args=[person.id]), {"username": "dave", "role": "staff"}
    )
    assert response.status_code == 302
    member = CareTeamMembership.objects.get(person=person, user=dave)
    assert (member.role, member.can_see_transcripts) == ("staff", False)


def test_adding_offers_only_the_organisations_logins_not_yet_in_the_team(alice_client, person, bob):
    login("dave")
    login("olga", tenancy.organisation_get_or_create("riverside-care"))
    content = alice_client.get(reverse("dashboard:team", args=[person.id])).content.decode()
    offered = re.findall(r'<option value="([^"]+)"', content.split('id="id_username"')[1])
    offered = offered[: offered.index("admin")]  # the role list follows
    assert offered == ["dave"]  # not olga (elsewhere), not alice or bob (already in)
    assert "olga" not in content


def test_a_login_elsewhere_is_answered_as_an_unknown_one(alice_client, person):
    login("olga", tenancy.organisation_get_or_create("riverside-care"))
    url = reverse("dashboard:team_add", args=[person.id])
    elsewhere = alice_client.post(url, {"username": "olga", "role": "staff"})
    unknown = alice_client.post(url, {"username": "nobody", "role": "staff"})
    assert elsewhere.status_code == unknown.status_code == 400
    assert b"Choose someone from the list." in elsewhere.content

    def page(response) -> str:  # the same page, but for the per-request CSRF tokens
        # (the forms' hidden inputs and the body's htmx header carry a fresh mask each time)
        return re.sub(r'"[A-Za-z0-9]{64}"', '""', response.content.decode())

    assert page(elsewhere) == page(unknown)
    assert "olga" not in page(elsewhere)
    assert not CareTeamMembership.objects.filter(user__username="olga").exists()


def test_the_service_refuses_a_login_of_another_organisation_too(person):
    from dashboard import services

    olga = login("olga", tenancy.organisation_get_or_create("riverside-care"))
    error = services.member_add(person=person, user=olga, role="staff", can_see_transcripts=True)
    assert error == "Choose someone from the list."
    assert not CareTeamMembership.objects.filter(user=olga).exists()


def test_admin_grants_transcripts(alice_client, person, bob):
    member = CareTeamMembership.objects.get(person=person, user=bob)
    url = reverse("dashboard:team_member", args=[person.id, member.id])
    alice_client.post(url, {"role": "family", "can_see_transcripts": "on"})
    member.refresh_from_db()
    assert member.can_see_transcripts is True


def test_the_last_admin_can_neither_leave_nor_step_down(alice_client, alice, person):
    member = CareTeamMembership.objects.get(person=person, user=alice)
    url = reverse("dashboard:team_member", args=[person.id, member.id])
    assert alice_client.post(url, {"remove": "1"}).status_code == 400
    # Nor change her own role at all: another admin does (tests/dashboard/test_team_rights.py).
    assert alice_client.post(url, {"role": "family"}).status_code == 403
    member.refresh_from_db()
    assert member.role == CareRole.ADMIN


def test_the_last_admin_is_not_demoted_by_another_admin_either(alice_client, alice, person):
    from dashboard import services

    member = CareTeamMembership.objects.get(person=person, user=alice)
    error = services.member_update(membership=member, role="family", can_see_transcripts=False)
    assert error == "The care team needs at least one admin: make someone else admin first."


def test_removing_a_member_takes_their_access(alice_client, bob, bob_client, person):
    member = CareTeamMembership.objects.get(person=person, user=bob)
    alice_client.post(
        reverse("dashboard:team_member", args=[person.id, member.id]), {"remove": "1"}
    )
    assert bob_client.get(reverse("dashboard:person", args=[person.id])).status_code == 404


# --- Logging in -------------------------------------------------------------------------------


def test_login_with_the_password_opens_the_people_list(bob, person):
    # bob is family: no second factor (a team admin's: tests/dashboard/test_two_factor.py).
    client = Client()
    response = client.post(
        reverse("dashboard:login"), {"username": "bob", "password": PASSWORD}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("dashboard:people")
    assert b"Peggy (Nana)" in response.content


def test_five_wrong_passwords_lock_the_login(alice):
    client = Client()
    for _ in range(5):
        response = client.post(reverse("dashboard:login"), {"username": "alice", "password": "x"})
    response = client.post(reverse("dashboard:login"), {"username": "alice", "password": PASSWORD})
    assert response.status_code in (403, 429)
    assert "_auth_user_id" not in client.session
    # A kind page that says what happened and what to do.
    assert b"Login paused" in response.content


def test_audit_rows_hold_no_names_or_message_text(alice_client, person, session):
    alice_client.get(reverse("dashboard:session_transcript", args=[person.id, session.id]))
    for row in AuditEvent.objects.values("username", "action", "object_id"):
        text = " ".join(row.values())
        assert "Peggy" not in text and "Nana" not in text and "fell" not in text


def test_audit_rows_are_read_only_in_the_admin(admin_client, alice_client, person):
    alice_client.get(reverse("dashboard:person", args=[person.id]))
    row = AuditEvent.objects.first()
    assert admin_client.get(reverse("admin:dashboard_auditevent_changelist")).status_code == 200
    change = admin_client.post(
        reverse("admin:dashboard_auditevent_change", args=[row.id]), {"username": "mallory"}
    )
    assert change.status_code == 403 or b"mallory" not in change.content
    row.refresh_from_db()
    assert row.username == "alice"
    assert admin_client.get(reverse("admin:dashboard_auditevent_add")).status_code == 403
    assert (
        admin_client.post(
            reverse("admin:dashboard_auditevent_delete", args=[row.id]), {"post": "yes"}
        ).status_code
        == 403
    )
    assert AuditEvent.objects.filter(id=row.id).exists()


def test_anonymous_sessions_of_no_person_never_show(alice_client, person):
    Session.objects.create(
        created_at=person.created_at, last_activity_at=person.created_at, message_count=2
    )
    content = alice_client.get(reverse("dashboard:person_sessions", args=[person.id])).content
    assert content.count(b'class="session-row"') == 2
