"""PDFs (dashboard/pdf.py): limited per login, rendered in niced processes of their own, and a
web process never has more than its share of requests waiting for one."""

import os
import subprocess

import pytest
from django.urls import reverse

from dashboard import pdf
from dashboard.models import AuditAction, AuditEvent, CareRole, CareTeamMembership
from tests.dashboard.conftest import client_for, login

pytestmark = pytest.mark.django_db


def _record(person) -> str:
    return reverse("dashboard:export_readable_pdf", args=[person.id])


def _report(person) -> str:
    return f"/people/{person.id}/report.pdf"


def _text(content: bytes) -> str:
    done = subprocess.run(["pdftotext", "-", "-"], input=content, capture_output=True, check=True)
    return " ".join(done.stdout.decode().split())


@pytest.fixture
def second_admin(person):
    """Another login of the same team, with the same rights as alice."""
    user = login("tess")
    CareTeamMembership.objects.create(
        user=user, person=person, role=CareRole.ADMIN, can_see_transcripts=True
    )
    return user


def test_past_the_limit_a_login_gets_429_with_retry_after_and_the_refusal_is_audited(
    settings, alice, alice_client, person
):
    settings.CLARA_PDF_RENDERS_PER_HOUR = 2
    for _ in range(2):
        response = alice_client.get(_record(person))
        assert response.status_code == 200 and response.content.startswith(b"%PDF")
    refused = alice_client.get(_record(person))
    assert refused.status_code == 429
    assert not refused.content.startswith(b"%PDF")
    assert 1 <= int(refused["Retry-After"]) <= 2 * 3600  # a sliding window of an hour
    assert "PDFs in the last hour" in refused.content.decode()
    rows = AuditEvent.objects.filter(user=alice, action=AuditAction.EXPORT_READABLE)
    assert list(rows.order_by("id").values_list("object_id", "allowed")) == [
        ("pdf", True),
        ("pdf", True),
        ("pdf+rate-limited", False),
    ]


def test_the_limit_counts_both_kinds_of_pdf_together(settings, alice, alice_client, person):
    settings.CLARA_PDF_RENDERS_PER_HOUR = 1
    assert alice_client.get(_record(person)).status_code == 200
    refused = alice_client.get(_report(person))
    assert refused.status_code == 429 and "Retry-After" in refused
    assert AuditEvent.objects.filter(
        user=alice, action=AuditAction.REPORT_PDF, allowed=False, object_id="rate-limited"
    ).exists()


def test_another_login_is_not_held_back_by_one_that_reached_its_limit(
    settings, alice_client, second_admin, person
):
    settings.CLARA_PDF_RENDERS_PER_HOUR = 1
    assert alice_client.get(_record(person)).status_code == 200
    assert alice_client.get(_record(person)).status_code == 429
    other = client_for(second_admin).get(_record(person))
    assert other.status_code == 200 and other.content.startswith(b"%PDF")
    assert "Peggy" in _text(other.content)


def test_a_refused_member_spends_no_pdf(settings, bob_client, charlie_client, alice_client, person):
    """Family (403) and outsiders (404) are refused before the limit is counted; the limit is
    per login, so their tries never spend the team admin's PDFs either."""
    settings.CLARA_PDF_RENDERS_PER_HOUR = 1
    for _ in range(3):
        assert bob_client.get(_record(person)).status_code == 403
        assert charlie_client.get(_record(person)).status_code == 404
    assert alice_client.get(_record(person)).status_code == 200


def test_the_record_is_rendered_outside_the_web_process_and_holds_the_person(alice_client, person):
    response = alice_client.get(_record(person))
    assert response.status_code == 200 and response.content.startswith(b"%PDF")
    assert "Peggy" in _text(response.content)
    # The renderer runs below the web process's priority, so the bot's requests get the CPU first.
    assert pdf.renderer_niceness() >= min(19, os.nice(0) + pdf.RENDERER_NICENESS)


def test_when_this_process_has_its_share_of_renders_waiting_the_next_gets_503(
    settings, alice, alice_client, person
):
    settings.CLARA_PDF_MAX_WAITING = 0
    response = alice_client.get(_record(person))
    assert response.status_code == 503 and int(response["Retry-After"]) > 0
    assert not response.content.startswith(b"%PDF")
    report = alice_client.get(_report(person))
    assert report.status_code == 503 and int(report["Retry-After"]) > 0
    # A busy answer spent nothing and recorded no download.
    assert not AuditEvent.objects.filter(user=alice, allowed=True).exists()
    settings.CLARA_PDF_MAX_WAITING = 2
    settings.CLARA_PDF_RENDERS_PER_HOUR = 1
    assert alice_client.get(_record(person)).status_code == 200
