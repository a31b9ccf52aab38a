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
    text = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    return " ".join(text.split())  # table cells wrap: read it as one line


@pytest.fixture
def staff(person):
    user = login("sam")
    user.first_name, user.last_name = "Sam", "Okafor"
    user.save()
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
        "Clinician report: Nana",
        "Mood over time",
        "Questions that came back",
        "Night-time activity",
        "What helped",
        "Alerts and what was done",
    ):
        assert heading in text
    assert "Where am I?" in text  # the kind of question (a label), repeated in the fixture
    assert "may have fallen" in text and "Called her daughter" in text
    assert "Note by Sam Okafor" in text and "Note by sam" not in text  # names, not logins
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


def test_it_opens_with_who_the_person_is_on_record_and_a_summary(staff, person, tmp_path):
    person.full_name, person.identifier = "Margaret Collins", "RH-0142"
    person.caregiver_context = {**person.caregiver_context, "home": "Rosewood House", "room": "12"}
    person.save()
    text = _text(client_for(staff).get(f"/people/{person.id}/report.pdf").content, tmp_path)
    assert "Clinician report: Margaret Collins" in text
    assert "Margaret Collins (known as Peggy)" in text
    assert "RH-0142" in text and "Rosewood House, 12" in text
    assert text.index("Summary") < text.index("Mood over time")
    assert "Peggy talked with Clara 2 times" in text


def test_a_period_without_conversations_says_so_and_no_zero_lines(staff, person, tmp_path):
    old = (timezone.now() - timedelta(days=90)).date()
    response = client_for(staff).get(
        f"/people/{person.id}/report.pdf",
        {"from": old.isoformat(), "to": (old + timedelta(days=6)).isoformat()},
    )
    text = _text(response.content, tmp_path)
    assert "No conversations in this period." in text
    assert "0 message" not in text and "0 night" not in text and "over 0" not in text


def test_its_question_counts_are_the_dashboard_s_for_the_same_period(staff, person):
    """The report for the last 7 whole days, read at midnight, and the dashboard's repetition
    panel ("the last 7 days") at that midnight cover the same time: same counts."""
    from datetime import datetime, time

    import time_machine
    from django.template.loader import render_to_string
    from django.urls import reverse

    from dashboard import words
    from dashboard.alerting import report
    from memory.core.person import person_zone

    zone = person_zone(person)
    tomorrow = timezone.now().astimezone(zone).date() + timedelta(days=1)
    midnight = datetime.combine(tomorrow, time.min, tzinfo=zone)
    with time_machine.travel(midnight, tick=False):
        panel = client_for(staff).get(reverse("dashboard:person_repetition", args=[person.id]))
        band = panel.context["band"]
        period = report.Period(start=tomorrow - timedelta(days=7), end=tomorrow - timedelta(days=1))
        context = report.report_context(person=person, period=period, now=timezone.now())
    html = render_to_string("alerting/clinician_report.html", context)
    dashboard_counts = [
        (words.question_label(q.question_type), q.asked, q.conversations)
        for q in band.questions
        if q.asked
    ]
    report_counts = [(q["kind"], q["times"], q["conversations"]) for q in context["questions"]]
    assert dashboard_counts and report_counts == dashboard_counts
    assert context["conversations"] == band.conversations == 2
    for kind, times, conversations in dashboard_counts:
        assert f"<td>{kind}</td><td>{times}</td><td>{conversations} of 2</td>" in html
    # The panel's own sentence says the same conversations.
    assert f"in {dashboard_counts[0][2]} of 2 conversations" in panel.content.decode()
