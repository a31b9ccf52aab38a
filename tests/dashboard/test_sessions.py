"""How long a login lasts (dashboard/sessions.py): background polls are not activity, a login
has an absolute lifetime, and an expired login inside htmx sends the browser to the login page
(HX-Redirect) with ?next= back to the page it showed."""

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session as StoredSession
from django.test import Client
from django.urls import reverse

from tests.dashboard.conftest import PASSWORD
from tests.support.otp import pass_second_factor

pytestmark = pytest.mark.django_db

START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
POLL = {"X-Clara-Poll": "1"}


def _logged_in(username: str = "alice") -> Client:
    client = Client()
    response = client.post(reverse("dashboard:login"), {"username": username, "password": PASSWORD})
    assert response.status_code == 302
    # alice is a team admin: her code after the password (dashboard/two_factor.py).
    pass_second_factor(client, get_user_model().objects.get(username=username))
    return client


def _person_page(person) -> str:
    return reverse("dashboard:person", args=[person.id])


def _alerts(person) -> str:
    return reverse("dashboard:person_alerts", args=[person.id])


def _is_login_page(response) -> bool:
    return response.status_code == 302 and response.url.startswith(reverse("dashboard:login"))


def test_a_poll_does_not_keep_an_idle_login_alive(alice, person, settings):
    settings.SESSION_COOKIE_AGE = 30 * 60
    with time_machine.travel(START, tick=False) as clock:
        client = _logged_in()
        for _ in range(4):  # the alert panel polling every 10 minutes for 40 minutes
            clock.shift(timedelta(minutes=10))
            response = client.get(_alerts(person), headers=POLL)
            if response.status_code != 200:
                break
        assert _is_login_page(client.get(_person_page(person)))


def test_what_the_caregiver_does_keeps_the_login_alive(alice, person, settings):
    settings.SESSION_COOKIE_AGE = 30 * 60
    with time_machine.travel(START, tick=False) as clock:
        client = _logged_in()
        for _ in range(4):
            clock.shift(timedelta(minutes=20))
            assert client.get(_person_page(person)).status_code == 200


def test_a_poll_does_not_save_the_session(alice, person):
    with time_machine.travel(START, tick=False) as clock:
        client = _logged_in()
        key = client.cookies["sessionid"].value
        before = StoredSession.objects.get(session_key=key)
        clock.shift(timedelta(minutes=5))
        response = client.get(_alerts(person), headers=POLL)
        assert response.status_code == 200
        assert "sessionid" not in response.cookies  # no renewed cookie either
        after = StoredSession.objects.get(session_key=key)
        assert (after.expire_date, after.session_data) == (before.expire_date, before.session_data)
        # A click does save it, pushing the expiry forward.
        client.get(_person_page(person))
        assert StoredSession.objects.get(session_key=key).expire_date > before.expire_date


def test_a_button_inside_a_polling_panel_is_activity(alice, person, alert):
    """htmx passes the panel's poll header down to its buttons: a POST is never a poll."""
    with time_machine.travel(START, tick=False) as clock:
        client = _logged_in()
        key = client.cookies["sessionid"].value
        before = StoredSession.objects.get(session_key=key).expire_date
        clock.shift(timedelta(minutes=5))
        url = reverse("dashboard:alert_status", args=[person.id, alert.id])
        client.post(url, {"action": "claim"}, headers={**POLL, "HX-Request": "true"})
        assert StoredSession.objects.get(session_key=key).expire_date > before


def test_a_login_ends_after_its_absolute_lifetime_however_active(alice, person, settings):
    settings.CLARA_LOGIN_MAX_AGE_SECONDS = 12 * 3600
    with time_machine.travel(START, tick=False) as clock:
        client = _logged_in()
        for _ in range(35):  # busy every 20 minutes for 11 h 40 min
            clock.shift(timedelta(minutes=20))
            assert client.get(_person_page(person)).status_code == 200
        clock.shift(timedelta(minutes=20))  # 12 h after logging in
        assert _is_login_page(client.get(_person_page(person)))
        # Logged out for good, not just turned away once.
        assert "_auth_user_id" not in client.session


def test_an_expired_login_inside_htmx_redirects_the_browser_and_comes_back(alice, person):
    page = _person_page(person)
    with time_machine.travel(START, tick=False) as clock:
        client = _logged_in()
        clock.shift(timedelta(hours=1))
        response = client.get(
            _alerts(person),
            headers={**POLL, "HX-Request": "true", "HX-Current-URL": f"http://testserver{page}"},
        )
    # Not the login page swapped into the panel: the whole browser goes to log in.
    assert response.status_code == 200
    assert b"Log in" not in response.content
    target = urlsplit(response["HX-Redirect"])
    assert target.path == reverse("dashboard:login")
    assert parse_qs(target.query)["next"] == [page]
    # And logging in again goes back to the page.
    back = client.post(
        response["HX-Redirect"], {"username": "alice", "password": PASSWORD, "next": page}
    )
    assert back.status_code == 302 and back.url == page


def test_the_htmx_redirect_never_points_at_another_site(person):
    response = Client().get(
        _alerts(person),
        headers={"HX-Request": "true", "HX-Current-URL": "https://evil.example/phish"},
    )
    assert response["HX-Redirect"] == reverse("dashboard:login")


def test_a_plain_request_still_gets_the_ordinary_redirect(person):
    response = Client().get(_person_page(person))
    assert _is_login_page(response)
    assert "HX-Redirect" not in response


def test_the_alert_panel_marks_its_poll(alice_client, person):
    content = alice_client.get(_alerts(person), headers={"HX-Request": "true"}).content.decode()
    assert 'hx-trigger="every 60s"' in content
    assert """hx-headers='{"X-Clara-Poll": "1"}'""" in content


def test_every_polling_element_in_the_templates_sends_the_poll_header():
    """Pages added later keep the rule: an element that polls says it is a poll."""
    import re
    from pathlib import Path

    from django.conf import settings

    found = 0
    for path in Path(settings.BASE_DIR, "templates").rglob("*.html"):
        for tag in re.findall(r"<[^>]*hx-trigger=\"[^\"]*every [^>]*>", path.read_text()):
            found += 1
            assert "X-Clara-Poll" in tag, f"{path.name}: {tag[:120]}"
    assert found >= 1
