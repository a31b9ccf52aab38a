"""The readable record (dashboard/export.py): a page and a PDF a family can read, beside the
JSON. The person's words only with the transcript right; older memories only on request;
audited like the other exports; for the team admin."""

import subprocess

import pytest
from django.urls import reverse

from dashboard.models import AuditAction, AuditEvent, CareRole, CareTeamMembership
from memory.models import ChatMessage, Memory
from tests.dashboard.conftest import client_for, login

pytestmark = pytest.mark.django_db


def _url(name, person, query=""):
    return reverse(f"dashboard:{name}", args=[person.id]) + query


def _pdf_text(content: bytes) -> str:
    done = subprocess.run(["pdftotext", "-", "-"], input=content, capture_output=True, check=True)
    return done.stdout.decode()


def _said(person) -> str:
    return (
        ChatMessage.objects.filter(person=person, role=ChatMessage.Role.USER)
        .order_by("timestamp")
        .first()
        .content
    )


def test_the_page_and_the_pdf_hold_the_record_and_are_audited(alice_client, person, memory):
    page = alice_client.get(_url("export_readable", person))
    assert page.status_code == 200
    text = page.content.decode()
    assert "Peggy" in text and "Sarah is Peggy" in text and "Not confirmed" in text
    assert _said(person) in text  # alice has the transcript right
    assert "Clara flagged a moment that needed a person" in text

    pdf = alice_client.get(_url("export_readable_pdf", person))
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert pdf["Content-Disposition"].startswith("attachment;")
    words = " ".join(_pdf_text(pdf.content).split())
    assert "Sarah is Peggy" in words and _said(person) in words

    rows = AuditEvent.objects.filter(action=AuditAction.EXPORT_READABLE, person=person)
    assert sorted(rows.values_list("object_id", flat=True)) == ["html", "pdf"]


def test_without_the_transcript_right_no_conversation_word_for_word(person, memory):
    user = login("tess")
    CareTeamMembership.objects.create(user=user, person=person, role=CareRole.ADMIN)
    client = client_for(user)
    text = client.get(_url("export_readable", person)).content.decode()
    assert _said(person) not in text
    assert "does not include reading them" in text
    assert _said(person) not in _pdf_text(client.get(_url("export_readable_pdf", person)).content)


def test_older_memories_only_on_request(alice_client, person, memory):
    Memory.objects.filter(pk=memory.pk).update(status=Memory.Status.ARCHIVED)
    plain = alice_client.get(_url("export_readable", person)).content.decode()
    assert "Sarah is Peggy" not in plain and "No longer current" not in plain
    asked = alice_client.get(_url("export_readable", person, "?archived=1")).content.decode()
    assert "No longer current" in asked and "Sarah is Peggy" in asked
    pdf = alice_client.get(_url("export_readable_pdf", person, "?archived=1"))
    assert "Sarah is Peggy" in " ".join(_pdf_text(pdf.content).split())
    assert AuditEvent.objects.filter(
        action=AuditAction.EXPORT_READABLE, object_id="html+archived"
    ).exists()


def test_family_get_a_403_which_is_audited_and_outsiders_a_404(bob_client, charlie_client, person):
    for name in ("export_readable", "export_readable_pdf"):
        assert bob_client.get(_url(name, person)).status_code == 403
        assert charlie_client.get(_url(name, person)).status_code == 404
    refused = AuditEvent.objects.filter(action=AuditAction.EXPORT_READABLE, allowed=False)
    assert refused.count() == 2


def test_the_memories_page_offers_the_record_to_the_team_admin(alice_client, bob_client, person):
    link = _url("export_readable", person)
    assert link in alice_client.get(_url("memories", person)).content.decode()
    assert link not in bob_client.get(_url("memories", person)).content.decode()
