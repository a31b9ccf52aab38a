"""The clinician report PDF, per role, read back with pdftotext (poppler-utils)."""

import shutil
import subprocess
from datetime import timedelta

import pytest
from django.utils import timezone

from dashboard.alerting import delivery
from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from tests.dashboard.conftest import client_for, login

pytestmark = pytest.mark.skipif(
    shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed"
)


def _text(pdf: bytes, tmp_path) -> str:
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf)
    return subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def staff(person):
    user = login("sam")
    CareTeamMembership.objects.create(user=user, person=person, role=CareRole.STAFF)
    return user


def test_staff_download_it_with_mood_questions_nights_help_and_alerts(
    staff, person, alert, tmp_path
):
    delivery.note_add(alert=alert, user=staff, text="Called her daughter, she is fine")
    response = client_for(staff).get(f"/people/{person.id}/report.pdf")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert response.content.startswith(b"%PDF")
    text = _text(response.content, tmp_path)
    for heading in (
        "Clinician report: Peggy",
        "Mood over time",
        "Questions that came back",
        "Night-time activity",
        "What helped",
        "Alerts and what was done",
    ):
        assert heading in text
    assert "Where am I?" in text  # the kind of question (a label), repeated in the fixture
    assert "may have fallen" in text and "Called her daughter" in text
    assert "can't get up" not in text  # never the person's words
    assert AuditEvent.objects.filter(user=staff, action="report_pdf", allowed=True).count() == 1


def test_a_chosen_period_without_the_alert_leaves_it_out(staff, person, alert, tmp_path):
    old = (timezone.now() - timedelta(days=60)).date()
    response = client_for(staff).get(
        f"/people/{person.id}/report.pdf",
        {"from": old.isoformat(), "to": (old + timedelta(days=6)).isoformat()},
    )
    text = _text(response.content, tmp_path)
    assert "No alerts in this period." in text and "may have fallen" not in text
    assert "(7 days)" in text


def test_the_team_admin_downloads_it_too(alice, person, tmp_path):
    response = client_for(alice).get(f"/people/{person.id}/report.pdf")
    assert response.status_code == 200
    assert "Clinician report" in _text(response.content, tmp_path)


def test_family_get_403_and_the_refusal_is_audited(bob, person):
    response = client_for(bob).get(f"/people/{person.id}/report.pdf")
    assert response.status_code == 403 and not response.content.startswith(b"%PDF")
    assert AuditEvent.objects.filter(user=bob, action="report_pdf", allowed=False).count() == 1


def test_outsiders_get_404(charlie, person):
    assert client_for(charlie).get(f"/people/{person.id}/report.pdf").status_code == 404


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-01"}, "to"),
        ({"from": "2026-03-02", "to": "2026-03-01"}, "from"),
        ({"from": "2020-01-01", "to": "2026-01-01"}, "from"),
    ],
)
def test_a_bad_period_is_a_400_naming_the_field(staff, person, params, field):
    response = client_for(staff).get(f"/people/{person.id}/report.pdf", params)
    assert response.status_code == 400 and response.json()["field"] == field


def test_its_pages_render_as_a4_images_with_the_mood_bars_drawn(staff, person, alert, tmp_path):
    """The pages as images (pdftoppm): A4 portrait, and the mood section's bars are drawn in
    their colour, not only written as numbers."""
    from PIL import Image

    response = client_for(staff).get(f"/people/{person.id}/report.pdf")
    path = tmp_path / "report.pdf"
    path.write_bytes(response.content)
    subprocess.run(["pdftoppm", "-r", "50", "-png", str(path), str(tmp_path / "page")], check=True)
    pages = sorted(tmp_path.glob("page*.png"))
    assert pages
    bar = (0x5B, 0x7F, 0xC7)
    bar_pixels = 0
    for page in pages:
        with Image.open(page) as image:
            width, height = image.size
            assert abs(height / width - 297 / 210) < 0.02  # A4 portrait
            rgb = image.convert("RGB")
            colours = rgb.getcolors(maxcolors=width * height)
            assert len(colours) > 2  # not a blank page
            bar_pixels += sum(
                count
                for count, colour in colours
                if all(abs(a - b) <= 12 for a, b in zip(colour, bar, strict=True))
            )
    assert bar_pixels > 20
