"""Minimum necessary: every dashboard page, panel, partial and export, rendered as each role,
shows none of the person's own sentences to a member without the transcript right.

The table below must name every URL of the dashboard (a page added later fails
test_every_dashboard_url_is_in_the_table until it is listed here, and then it is checked too).
"""

import html
import json
import re
import subprocess
import urllib.parse

import pytest
from django.urls import URLPattern, reverse
from django.utils import timezone

from dashboard import urls as dashboard_urls
from dashboard import words
from dashboard.alerting import delivery
from dashboard.alerting.models import AlertNotice
from dashboard.models import CareRole, CareTeamMembership
from dashboard.services import agreed_question_set
from memory.core.fields import for_row
from memory.insights.summaries import session_summary_compute
from memory.models import ChatMessage, OrganisationMembership, RepetitionRecord, Session
from tests.dashboard.conftest import client_for, login

pytestmark = pytest.mark.django_db

# name -> the GET urls to render (a page with htmx partials is rendered both ways below).
PAGES = {
    "people": lambda o: [reverse("dashboard:people")],
    "home": lambda o: [
        reverse("dashboard:home") + f"?sort={sort}"
        for sort in ("upset", "name", "last_talk", "alerts")
    ],
    "person_notes": lambda o: [_p("person_notes", o)],
    "false_alarms": lambda o: [reverse("dashboard:false_alarms")],
    "organisation_audit": lambda o: [
        reverse("dashboard:organisation_audit", args=[o["person"].organisation.slug])
    ],
    "person": lambda o: [_p("person", o)],
    "person_emotions": lambda o: [_p("person_emotions", o)],
    "person_patterns": lambda o: [_p("person_patterns", o)],
    "person_repetition": lambda o: [_p("person_repetition", o)],
    "person_calming": lambda o: [_p("person_calming", o)],
    "person_sessions": lambda o: [_p("person_sessions", o), _p("person_sessions", o) + "?page=2"],
    "session": lambda o: [_p("session", o, s.id) for s in o["sessions"]],
    "session_transcript": lambda o: [_p("session_transcript", o, s.id) for s in o["sessions"]],
    "person_alerts": lambda o: [_p("person_alerts", o)],
    "team": lambda o: [_p("team", o)],
    "profile": lambda o: [_p("profile", o)],
    "profile_section": lambda o: [
        _p("profile_section", o, section) + suffix
        for section in ("name", "home", "topics", "answers", "people", "routines")
        for suffix in ("", "?edit=1")
    ],
    "agreed_answer": lambda o: [_p("agreed_answer", o, o["record"].id)],
    "remembering": lambda o: [_p("remembering", o)],
    "forget_about": lambda o: [_p("forget_about", o), _p("forget_about", o) + "?thing=type:people"],
    "memories": lambda o: [_p("memories", o)],
    "memory_action": lambda o: [_p("memory_action", o, o["memory"].id, "edit")],
    "export_json": lambda o: [_p("export_json", o)],
    "export_csv": lambda o: [_p("export_csv", o)],
    "export_readable": lambda o: [
        _p("export_readable", o),
        _p("export_readable", o) + "?archived=1",
    ],
    "export_readable_pdf": lambda o: [
        _p("export_readable_pdf", o),
        _p("export_readable_pdf", o) + "?archived=1",
    ],
    "invitations": lambda o: [
        reverse("dashboard:invitations", args=[o["person"].organisation.slug])
    ],
    "organisation_homes": lambda o: [
        reverse("dashboard:organisation_homes", args=[o["person"].organisation.slug])
    ],
    "erase": lambda o: [_p("erase", o)],
    "organisation_alerts": lambda o: [
        reverse("dashboard:organisation_alerts", args=[o["person"].organisation.slug])
    ],
    "organisation_alert_settings": lambda o: [
        reverse("dashboard:organisation_alert_settings", args=[o["person"].organisation.slug])
    ],
    "alert_routing": lambda o: [_p("alert_routing", o)],
    "clinician_report": lambda o: [_p("clinician_report", o)],
    "alert_ack": lambda o: [reverse("dashboard:alert_ack", args=[o["ack_token"]])],
}
# Routes that show nothing about a person (or only change something: POSTs answer with the
# pages above, or with a redirect to them).
NOTHING_ABOUT_A_PERSON = {
    "login",
    "logout",
    "two_factor",
    "two_factor_setup",
    "invitation_accept",
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
    # A login's own password and second factor.
    "password_change",
    "two_factor_manage",
    "two_factor_replace",
    # The FHIR export's code systems: the meaning of Clara's codes, the same for everyone.
    "fhir_code_system",
}
POST_ONLY = {
    "alert_status",
    "organisation_alert_act",
    "organisation_on_call",
    "alert_note",
    "team_add",
    "team_member",
    "invitation_revoke",
    "profile_memory",
    "family_contact_remove",
    "two_factor_recovery",
    "family_digest",
    "held_back_approve",  # answers with the memories page's held-back panel (in PAGES)
}


def _p(name, o, *more):
    return reverse(f"dashboard:{name}", args=[o["person"].id, *more])


def test_every_dashboard_url_is_in_the_table():
    names = {p.name for p in dashboard_urls.urlpatterns if isinstance(p, URLPattern)}
    missing = names - set(PAGES) - NOTHING_ABOUT_A_PERSON - POST_ONLY
    assert not missing, f"add these to PAGES in {__name__}: {sorted(missing)}"


@pytest.fixture
def objects(person, memory, alert):
    sessions = list(Session.objects.filter(person=person))
    for session in sessions:
        session_summary_compute(session_id=session.id)
    # The e-mail's acknowledgement link names its alert by a token (any team member may open it).
    # A question the person repeats, with an agreed answer picked from the repeated-questions
    # panel: the profile names it in the person's words only for those with the right.
    record = next(  # encrypted at rest: matched after decryption
        r
        for r in RepetitionRecord.objects.filter(person=person)
        if r.original_message == "When is Sarah coming?"
    )
    agreed_question_set(person=person, record=record, answer="Sarah comes on Sunday.")
    notice = AlertNotice.objects.create(
        alert=alert, level=0, dedupe_key=f"minimum-{alert.id}", due_at=timezone.now()
    )
    return {
        "person": person,
        "memory": memory,
        "record": record,
        "sessions": sessions,
        "ack_token": delivery.ack_token(notice),
    }


@pytest.fixture
def sentences(objects):
    """What the person said, each sentence of it (the whole message and its clauses)."""
    texts = ChatMessage.objects.filter(
        session__person=objects["person"], role=ChatMessage.Role.USER
    ).values_list("content", flat=True)
    found = set()
    for text in texts:
        found.add(text)
        found.update(part.strip() for part in re.split(r"[.!?,]", text) if len(part.strip()) > 8)
    # Clara's own names for kinds of question ("Where am I?") are labels every member sees,
    # not a quotation, even when the person happened to say exactly that.
    labels = {label.strip("?").casefold() for label in words.QUESTION_LABELS.values()}
    return {sentence for sentence in found if sentence.strip("?").casefold() not in labels}


def _member(person, username, role, transcripts):
    user = login(username)
    CareTeamMembership.objects.create(
        user=user, person=person, role=role, can_see_transcripts=transcripts
    )
    return user


def _render_all(client, o) -> dict[str, str]:
    """Every page, and its htmx partial, as text (exports decoded); only what was shown (200)."""
    shown = {}
    for name, urls in PAGES.items():
        for url in urls(o):
            for headers in ({}, {"HX-Request": "true"}):
                response = client.get(url, headers=headers)
                if response.status_code != 200:
                    continue
                if response["Content-Type"].startswith("application/pdf"):
                    text = _pdf_text(response.content)
                else:
                    text = response.content.decode()
                if response["Content-Type"].startswith("application/json"):
                    text = json.dumps(json.loads(text), ensure_ascii=False)
                shown[f"{name} {url} {headers}"] = html.unescape(urllib.parse.unquote(text))
    return shown


def _pdf_text(pdf: bytes) -> str:
    """The report's text, as poppler's pdftotext reads it (installed by .ci/run)."""
    done = subprocess.run(["pdftotext", "-", "-"], input=pdf, capture_output=True, check=True)
    return done.stdout.decode()


def _leaks(shown: dict[str, str], sentences: set[str]) -> list[tuple[str, str]]:
    return [
        (where, sentence)
        for where, text in shown.items()
        for sentence in sentences
        if sentence.casefold() in text.casefold()
    ]


@pytest.mark.parametrize(
    ("role", "admin_of_org"),
    [
        (CareRole.FAMILY, False),
        (CareRole.STAFF, False),
        (CareRole.ADMIN, False),
        (CareRole.ADMIN, True),
    ],
    ids=["family", "staff", "team admin", "organisation admin"],
)
def test_without_the_transcript_right_no_page_quotes_the_person(
    role, admin_of_org, objects, sentences
):
    user = _member(objects["person"], "dana", role, transcripts=False)
    if admin_of_org:
        OrganisationMembership.objects.filter(user=user).update(is_admin=True)
    shown = _render_all(client_for(user), objects)
    assert len(shown) > 20  # the pages did render
    leaks = _leaks(shown, sentences)
    assert not leaks, "\n".join(sorted({f"{w.split()[0]} {w.split()[-1]}: {s}" for w, s in leaks}))


def test_with_the_transcript_right_the_words_are_there(objects, sentences, alice):
    """The check can fail: the same pages for a member with the right do show the words."""
    shown = _render_all(client_for(alice), objects)
    leaked = {sentence for _, sentence in _leaks(shown, sentences)}
    assert leaked == sentences


def test_the_full_export_needs_the_transcript_right_too(objects):
    """A team admin without the right downloads what Clara remembers, not every conversation."""
    user = _member(objects["person"], "dana", CareRole.ADMIN, transcripts=False)
    client = client_for(user)
    assert client.get(_p("export_json", objects)).status_code == 403
    assert client.get(_p("export_csv", objects)).status_code == 200
    assert b"export.json" not in client.get(_p("memories", objects)).content


def test_a_one_line_summary_that_quotes_the_person_is_withheld(objects, alice):
    """The one-liner heads the conversation page and each row of the list: an LLM's line may
    quote the person, so it is Clara's own line for a member without the right."""
    session = Session.objects.filter(
        person=objects["person"], message_count__gt=0, ended_at__isnull=False
    ).latest("created_at")
    quoted = "Arthur kept saying “I want to go home to Margate”."
    Session.objects.filter(id=session.id).update(
        session_summary=for_row(
            {**(session.session_summary or {}), "one_liner": quoted}, session.id
        )
    )
    pages = [
        reverse("dashboard:session", args=[objects["person"].id, session.id]),
        reverse("dashboard:person_sessions", args=[objects["person"].id]),
    ]
    dana = client_for(_member(objects["person"], "dana", CareRole.FAMILY, transcripts=False))
    for url in pages:
        shown = html.unescape(dana.get(url).content.decode())
        assert "go home to Margate" not in shown
        assert "Talked with Clara for" in shown
    # The check can fail: a member with the right reads the line as it was written.
    for url in pages:
        assert "go home to Margate" in html.unescape(client_for(alice).get(url).content.decode())
