"""The second factor (dashboard/two_factor.py): operators and organisation admins reach nothing
without it, enrol with a QR code and keep recovery codes; other caregivers are not asked."""

import re
import time

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from tests.dashboard.conftest import PASSWORD, login
from tests.support.otp import current_code, totp_device

pytestmark = pytest.mark.django_db

ADMIN_PAGES = ["/admin/", "/admin/memory/person/", "/admin/dashboard/auditevent/"]


def _password_login(username: str, path: str = "/login/") -> Client:
    client = Client()
    response = client.post(path, {"username": username, "password": PASSWORD})
    assert response.status_code == 302, response.content[:300]
    return client


@pytest.fixture
def operator(db):
    return get_user_model().objects.create_superuser("ops", "ops@example.org", PASSWORD)


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user("ann", password=PASSWORD, is_staff=True)


@pytest.mark.parametrize("who", ["operator", "staff"])
@pytest.mark.parametrize("page", ADMIN_PAGES)
def test_a_password_alone_does_not_reach_the_admin(who, page, request):
    request.getfixturevalue(who)
    username = "ops" if who == "operator" else "ann"
    client = _password_login(username, "/admin/login/")
    response = client.get(page)
    assert response.status_code == 302
    assert response.url.startswith(reverse("dashboard:two_factor"))


def test_an_organisation_admin_reaches_no_dashboard_page_without_it(person):
    boss = login("boss", person.organisation, admin=True)
    client = _password_login(boss.username)
    for url in ("/", f"/organisations/{person.organisation.slug}/audit/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response.url.startswith(reverse("dashboard:two_factor"))
    # Inside htmx the browser is sent there, with the page it shows to come back to.
    response = client.get(
        "/", headers={"HX-Request": "true", "HX-Current-URL": "http://testserver/"}
    )
    assert response["HX-Redirect"].startswith(reverse("dashboard:two_factor"))


def test_a_caregiver_who_is_not_an_admin_is_not_asked(alice, person):
    client = _password_login("alice")
    assert client.get("/").status_code == 200


def test_enrolment_shows_a_qr_code_then_recovery_codes_and_opens_the_admin(operator):
    client = _password_login("ops", "/admin/login/")
    # Sent to enter a code; with no device yet, on to set one up.
    verify = client.get(reverse("dashboard:two_factor") + "?next=/admin/")
    assert verify.status_code == 302 and verify.url.startswith(
        reverse("dashboard:two_factor_setup")
    )
    page = client.get(verify.url)
    content = page.content.decode()
    assert page.status_code == 200
    assert "<svg" in content and "<img" not in content  # inline, nothing fetched
    device = TOTPDevice.objects.get(user=operator, confirmed=False)
    wrong = client.post(verify.url, {"token": "000000", "next": "/admin/"})
    assert wrong.status_code == 400
    assert client.get("/admin/").status_code == 302
    time.sleep(1.1)  # django-otp throttles: 1 s after one wrong code, then doubling
    done = client.post(verify.url, {"token": current_code(device), "next": "/admin/"})
    assert done.status_code == 200
    codes = re.findall(r"<code>(\w+)</code>", done.content.decode())
    assert len(codes) == 10
    assert set(codes) == set(StaticToken.objects.values_list("token", flat=True))
    assert client.get("/admin/").status_code == 200


def test_a_recovery_code_works_once(operator):
    from dashboard.two_factor import recovery_codes_issue

    totp_device(operator)
    code = recovery_codes_issue(operator)[0]
    first = _password_login("ops", "/admin/login/")
    assert first.post(reverse("dashboard:two_factor"), {"token": code}).status_code == 302
    assert first.get("/admin/").status_code == 200
    second = _password_login("ops", "/admin/login/")
    assert second.post(reverse("dashboard:two_factor"), {"token": code}).status_code == 400
    assert second.get("/admin/").status_code == 302


def test_an_enrolled_login_must_give_a_code_before_enrolling_another_device(operator):
    """The password alone must not let someone add their own phone."""
    device = totp_device(operator)
    client = _password_login("ops", "/admin/login/")
    response = client.get(reverse("dashboard:two_factor_setup"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("dashboard:two_factor"))
    assert TOTPDevice.objects.filter(user=operator).count() == 1
    ok = client.post(
        reverse("dashboard:two_factor"), {"token": current_code(device), "next": "/admin/"}
    )
    assert ok.status_code == 302 and ok.url == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_next_never_leads_to_another_site(operator):
    device = totp_device(operator)
    client = _password_login("ops", "/admin/login/")
    response = client.post(
        reverse("dashboard:two_factor"),
        {"token": current_code(device), "next": "https://evil.example/"},
    )
    assert response.status_code == 302 and response.url == reverse("dashboard:people")
