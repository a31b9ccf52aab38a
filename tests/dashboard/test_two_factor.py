"""The second factor (dashboard/two_factor.py): operators, organisation admins and team admins
reach nothing without it, enrol with a QR code and keep recovery codes; other caregivers are not asked."""

import re
import time

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from dashboard.second_factor.models import AuthenticatorDevice, RecoveryCode, recovery_digests
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


def test_a_caregiver_who_is_not_an_admin_is_not_asked(bob, person):
    client = _password_login("bob")
    assert client.get("/").status_code == 200
    assert client.get(f"/people/{person.id}/").status_code == 200


def test_a_team_admin_reaches_no_dashboard_page_without_it(alice, person, session):
    # alice is Peggy's team admin: she exports everything about Peggy and may erase her.
    client = _password_login("alice")
    for url in (
        "/",
        f"/people/{person.id}/",
        reverse("dashboard:export_json", args=[person.id]),
        reverse("dashboard:erase", args=[person.id]),
        reverse("dashboard:team", args=[person.id]),
    ):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response.url.startswith(reverse("dashboard:two_factor")), url
    # With no device yet she is sent on to set one up; with one, to give its code.
    response = client.get(reverse("dashboard:two_factor"))
    assert response.url.startswith(reverse("dashboard:two_factor_setup"))
    device = totp_device(alice)
    response = client.get(reverse("dashboard:two_factor"))
    assert response.status_code == 200
    response = client.post(
        reverse("dashboard:two_factor"), {"token": current_code(device), "next": "/"}
    )
    assert response.status_code == 302
    assert client.get(f"/people/{person.id}/").status_code == 200


def test_a_team_admin_in_an_organisation_it_has_left_is_not_asked(alice, person):
    # Its care teams there count for nothing (dashboard.access.care_memberships).
    from memory.models import OrganisationMembership

    OrganisationMembership.objects.filter(user=alice).delete()
    from dashboard.two_factor import required_for

    assert required_for(alice) is False


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
    device = AuthenticatorDevice.objects.get(user=operator, confirmed=False)
    wrong = client.post(verify.url, {"token": "000000", "next": "/admin/"})
    assert wrong.status_code == 400
    assert client.get("/admin/").status_code == 302
    time.sleep(1.1)  # django-otp throttles: 1 s after one wrong code, then doubling
    done = client.post(verify.url, {"token": current_code(device), "next": "/admin/"})
    assert done.status_code == 200
    codes = re.findall(r"<code>(\w+)</code>", done.content.decode())
    assert len(codes) == 10
    # Kept only as keyed hashes: each code matches one, none is stored as typed.
    stored = set(RecoveryCode.objects.values_list("digest", flat=True))
    assert {recovery_digests(code)[0] for code in codes} == stored
    assert not stored & set(codes)
    assert client.get("/admin/").status_code == 200


def test_a_recovery_code_works_once(operator):
    from dashboard.second_factor.services import recovery_codes_issue

    totp_device(operator)
    code = recovery_codes_issue(user=operator)[0]
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
    assert AuthenticatorDevice.objects.filter(user=operator).count() == 1
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


# --- The secrets at rest -------------------------------------------------------------------------


def _stored(table: str, column: str, pk) -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE id = %s", [pk])  # noqa: S608
        return cursor.fetchone()[0]


def test_the_authenticator_secret_is_encrypted_and_bound_to_its_login(operator, staff):
    from memory.core import crypto

    device, other = totp_device(operator), totp_device(staff)
    stored = _stored("dashboard_totp_devices", "key", device.pk)
    assert device.key not in stored and stored.startswith(crypto.ROW_PREFIX)
    assert f":{operator.pk}:" in stored
    # Copied onto another login's device, it is refused rather than used.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE dashboard_totp_devices SET key = %s WHERE id = %s", [stored, other.pk]
        )
    with pytest.raises(crypto.DecryptionError):
        AuthenticatorDevice.objects.get(pk=other.pk)
    # And the login with it still works.
    client = _password_login("ops", "/admin/login/")
    response = client.post(reverse("dashboard:two_factor"), {"token": current_code(device)})
    assert response.status_code == 302 and client.get("/admin/").status_code == 200


# --- Self-service: new recovery codes, a new phone ------------------------------------------------


def _verified(user, device) -> Client:
    client = _password_login(user.username, "/login/")
    response = client.post(reverse("dashboard:two_factor"), {"token": current_code(device)})
    assert response.status_code == 302
    return client


def test_an_admin_makes_new_recovery_codes_and_the_old_stop_working(person):
    from dashboard.models import AuditAction, AuditEvent
    from dashboard.second_factor.services import recovery_codes_issue

    boss = login("boss", person.organisation, admin=True)
    device = totp_device(boss)
    old = recovery_codes_issue(user=boss)
    client = _verified(boss, device)
    page = client.get(reverse("dashboard:two_factor_manage"))
    assert page.status_code == 200 and "10 unused recovery codes left" in page.content.decode()

    done = client.post(reverse("dashboard:two_factor_recovery"))
    assert done.status_code == 200
    new = re.findall(r"<code>(\w+)</code>", done.content.decode())
    assert len(new) == 10 and not set(new) & set(old)
    event = AuditEvent.objects.get(action=AuditAction.RECOVERY_CODES_RENEWED)
    assert event.user == boss and event.organisation_id == person.organisation_id
    # Shown once: the page lists how many are left, never the codes.
    again = client.get(reverse("dashboard:two_factor_manage")).content.decode()
    assert not any(code in again for code in new)

    assert (
        _password_login("boss").post(reverse("dashboard:two_factor"), {"token": old[0]}).status_code
        == 400
    )
    time.sleep(1.1)  # throttled after a wrong code
    fresh = _password_login("boss")
    assert fresh.post(reverse("dashboard:two_factor"), {"token": new[0]}).status_code == 302
    assert fresh.get("/").status_code == 200


def test_a_new_authenticator_replaces_the_old_only_once_it_gives_a_code(person):
    from dashboard.models import AuditAction, AuditEvent

    boss = login("boss", person.organisation, admin=True)
    old = totp_device(boss)
    client = _verified(boss, old)
    page = client.get(reverse("dashboard:two_factor_replace"))
    assert page.status_code == 200 and "<svg" in page.content.decode()
    new = AuthenticatorDevice.objects.get(user=boss, confirmed=False)
    assert new.key != old.key

    wrong = client.post(reverse("dashboard:two_factor_replace"), {"token": "000000"})
    assert wrong.status_code == 400
    assert AuthenticatorDevice.objects.filter(pk=old.pk, confirmed=True).exists()
    assert not AuditEvent.objects.filter(action=AuditAction.AUTHENTICATOR_REPLACED).exists()

    time.sleep(1.1)  # throttled after a wrong code
    done = client.post(reverse("dashboard:two_factor_replace"), {"token": current_code(new)})
    assert done.status_code == 302 and done.url == reverse("dashboard:two_factor_manage")
    assert list(AuthenticatorDevice.objects.filter(user=boss)) == [new]
    assert AuthenticatorDevice.objects.get(pk=new.pk).confirmed
    event = AuditEvent.objects.get(action=AuditAction.AUTHENTICATOR_REPLACED)
    assert event.object_id == str(new.pk) and event.organisation_id == person.organisation_id
    assert client.get("/").status_code == 200  # still past the second factor, on the new app

    # The old phone's code no longer opens anything.
    other = _password_login("boss")
    assert (
        other.post(reverse("dashboard:two_factor"), {"token": current_code(old)}).status_code == 400
    )


def test_recovery_codes_match_during_a_rotation_and_rotate_keys_counts_the_old_ones(
    operator, settings
):
    import io

    from django.core.management import call_command

    from dashboard.second_factor.services import recovery_codes_issue
    from memory.core import crypto

    key_a, key_b = crypto.generate_key(), crypto.generate_key()
    settings.CLARA_ENCRYPTION_KEYS = [key_a]
    totp_device(operator)
    old = recovery_codes_issue(user=operator)
    settings.CLARA_ENCRYPTION_KEYS = [key_b, key_a]
    out = io.StringIO()
    call_command("rotate_keys", stdout=out)
    assert "dashboard_recovery_codes.digest: 10 rows, 0 rewritten; 10 made under an old key" in (
        out.getvalue()
    )
    # Still matched meanwhile (the old key is configured), and the secret was re-encrypted.
    client = _password_login("ops", "/admin/login/")
    assert client.post(reverse("dashboard:two_factor"), {"token": old[0]}).status_code == 302
    assert AuthenticatorDevice.objects.get(user=operator).bin_key
    # New codes are made under the new key: nothing left to count.
    recovery_codes_issue(user=operator)
    again = io.StringIO()
    call_command("rotate_keys", stdout=again)
    assert "made under an old key" not in again.getvalue()
    settings.CLARA_ENCRYPTION_KEYS = [key_b]
    assert AuthenticatorDevice.objects.get(user=operator).bin_key
