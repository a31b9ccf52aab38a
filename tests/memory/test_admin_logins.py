"""No takeover of another organisation's login through the admin (issue 30, step 1).

olga is organisation A's admin and a plain member of organisation B. bert is B's operator (staff,
not a superuser) with every model permission over logins, memberships and second factors. The
attack of the issue: bert sets olga's password, changes her e-mail, removes her authenticator
app or deletes her login. All of it is refused, olga is unchanged, and A's audit says who tried.
A login wholly inside B (cara, a caregiver) is still bert's to manage, and each change to it is
in B's audit. A superuser changes olga; B still changes its own membership row of her.
"""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db.models import Q
from django.urls import reverse

from dashboard.second_factor.models import AuthenticatorDevice, RecoveryDevice
from dashboard.second_factor.services import recovery_codes_issue
from memory.conversations import tenancy
from memory.models import AccessEvent, OrganisationMembership
from tests.support.otp import totp_device, verified_client

pytestmark = pytest.mark.django_db

User = get_user_model()
PASSWORD = "an-old-long-password"
NEW_PASSWORD = "a-new-long-password-9"


@pytest.fixture
def a(db):
    return tenancy.organisation_get_or_create("sunrise-care")


@pytest.fixture
def b(db):
    return tenancy.organisation_get_or_create("river-homes")


def _login(username, *memberships, **fields):
    user = User.objects.create_user(
        username, password=PASSWORD, email=f"{username}@example.org", **fields
    )
    for organisation, is_admin in memberships:
        OrganisationMembership.objects.create(
            user=user, organisation=organisation, is_admin=is_admin
        )
    return user


@pytest.fixture
def olga(a, b):
    """A's admin, and a plain member of B, with her second factor."""
    user = _login("olga", (a, True), (b, False))
    totp_device(user)
    recovery_codes_issue(user=user)
    return user


@pytest.fixture
def cara(b):
    """A caregiver wholly inside B, with her second factor."""
    user = _login("cara", (b, False))
    totp_device(user)
    return user


@pytest.fixture
def bert(b):
    """B's operator: staff, not a superuser, every model permission over logins, memberships,
    care teams and second factors."""
    user = _login("bert", (b, False), is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            Q(content_type__app_label__in=["memory", "dashboard"])
            | Q(content_type__app_label="auth", content_type__model="user")
        )
    )
    return user


@pytest.fixture
def bert_client(bert):
    return verified_client(bert)


def _url(name, *args):
    return reverse(f"admin:{name}", args=args)


def _rows(organisation, action, outcome):
    return AccessEvent.objects.filter(
        organisation=organisation, action=action, outcome=outcome, channel="admin"
    )


def _password_form(password=NEW_PASSWORD):
    return {"password1": password, "password2": password, "usable_password": "true"}


def _change_form(user, **changes):
    data = {
        "username": user.username,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email": user.email,
        "is_active": "on",
        "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
        "initial-date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "initial-date_joined_1": user.date_joined.strftime("%H:%M:%S"),
    }
    return {**data, **changes}


# --- The takeover of the issue: every step refused ---------------------------------------------


def test_an_operator_cannot_set_the_password_of_another_organisations_admin(
    olga, bert_client, a, b
):
    url = _url("auth_user_password_change", olga.pk)
    assert bert_client.get(url).status_code == 403
    response = bert_client.post(url, _password_form())
    assert response.status_code == 403
    olga.refresh_from_db()
    assert olga.check_password(PASSWORD)
    # A hears of it (and so does B): who tried, on which login.
    for organisation in (a, b):
        row = _rows(organisation, "admin_password_set", "refused").latest("at")
        assert row.actor == "user:bert"
        assert row.object_id == str(olga.pk)


def test_an_operator_cannot_change_the_email_of_another_organisations_admin(olga, bert_client, a):
    url = _url("auth_user_change", olga.pk)
    response = bert_client.post(url, _change_form(olga, email="attacker@example.net"))
    assert response.status_code == 403
    olga.refresh_from_db()
    assert olga.email == "olga@example.org"
    assert _rows(a, "admin_login_changed", "refused").filter(object_id=str(olga.pk)).exists()


@pytest.mark.parametrize("model", [AuthenticatorDevice, RecoveryDevice])
def test_an_operator_cannot_remove_the_second_factor_of_another_organisations_admin(
    model, olga, bert_client, a
):
    device = model.objects.get(user=olga)
    url = _url(f"dashboard_{model._meta.model_name}_delete", device.pk)
    assert bert_client.get(url).status_code == 403
    assert bert_client.post(url, {"post": "yes"}).status_code == 403
    assert model.objects.filter(pk=device.pk).exists()
    assert _rows(a, "admin_device_deleted", "refused").filter(object_id=str(device.pk)).exists()


def test_an_operator_cannot_delete_another_organisations_admin(olga, bert_client, a):
    url = _url("auth_user_delete", olga.pk)
    assert bert_client.post(url, {"post": "yes"}).status_code == 403
    assert User.objects.filter(pk=olga.pk).exists()
    assert _rows(a, "admin_login_deleted", "refused").filter(object_id=str(olga.pk)).exists()


@pytest.mark.parametrize(
    ("model", "owner"),
    [(User, lambda u: u), (AuthenticatorDevice, None), (RecoveryDevice, None)],
)
def test_an_operator_cannot_bulk_delete_around_the_check(model, owner, olga, bert_client):
    rows = [olga] if model is User else list(model.objects.filter(user=olga))
    url = _url(f"{model._meta.app_label}_{model._meta.model_name}_changelist")
    bert_client.post(
        url,
        {"action": "delete_selected", "_selected_action": [r.pk for r in rows], "post": "yes"},
    )
    assert model.objects.filter(pk__in=[r.pk for r in rows]).count() == len(rows)


def test_the_page_of_such_a_login_is_read_only_for_the_operator(olga, bert_client):
    response = bert_client.get(_url("auth_user_change", olga.pk))
    assert response.status_code == 200
    assert b'name="email"' not in response.content


def test_an_admin_of_the_operators_own_organisation_is_a_superusers_to_change(b, bert_client):
    boss = _login("boss", (b, True))
    response = bert_client.post(_url("auth_user_password_change", boss.pk), _password_form())
    assert response.status_code == 403
    boss.refresh_from_db()
    assert boss.check_password(PASSWORD)


def test_another_operator_is_a_superusers_to_change(b, bert_client):
    other = _login("other-operator", (b, False), is_staff=True)
    response = bert_client.post(_url("auth_user_password_change", other.pk), _password_form())
    assert response.status_code == 403


def test_a_login_of_another_organisation_only_is_not_found(a, bert_client):
    stranger = _login("stranger", (a, False))
    response = bert_client.post(_url("auth_user_password_change", stranger.pk), _password_form())
    assert response.status_code in (302, 404)
    stranger.refresh_from_db()
    assert stranger.check_password(PASSWORD)


# --- A login wholly inside the operator's organisation: still the operator's ------------------


def test_an_operator_still_manages_a_login_wholly_inside_its_organisation(cara, bert_client, b):
    response = bert_client.post(_url("auth_user_password_change", cara.pk), _password_form())
    assert response.status_code == 302
    cara.refresh_from_db()
    assert cara.check_password(NEW_PASSWORD)
    assert _rows(b, "admin_password_set", "allowed").filter(object_id=str(cara.pk)).exists()

    response = bert_client.post(
        _url("auth_user_change", cara.pk), _change_form(cara, email="cara@river.example")
    )
    assert response.status_code == 302, response.content
    cara.refresh_from_db()
    assert cara.email == "cara@river.example"
    assert _rows(b, "admin_login_changed", "allowed").filter(object_id=str(cara.pk)).exists()

    device = AuthenticatorDevice.objects.get(user=cara)
    response = bert_client.post(
        _url("dashboard_authenticatordevice_delete", device.pk), {"post": "yes"}
    )
    assert response.status_code == 302
    assert not AuthenticatorDevice.objects.filter(pk=device.pk).exists()
    assert _rows(b, "admin_device_deleted", "allowed").filter(object_id=str(device.pk)).exists()

    response = bert_client.post(_url("auth_user_delete", cara.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not User.objects.filter(pk=cara.pk).exists()
    row = _rows(b, "admin_login_deleted", "allowed").get(object_id=str(cara.pk))
    assert row.actor == "user:bert"


def test_a_superuser_changes_a_login_of_several_organisations_audited_in_each(
    olga, admin_client, a, b
):
    response = admin_client.post(_url("auth_user_password_change", olga.pk), _password_form())
    assert response.status_code == 302
    olga.refresh_from_db()
    assert olga.check_password(NEW_PASSWORD)
    for organisation in (a, b):
        assert (
            _rows(organisation, "admin_password_set", "allowed")
            .filter(object_id=str(olga.pk))
            .exists()
        )


# --- Memberships: each organisation its own row ------------------------------------------------


def test_an_organisation_still_changes_its_own_membership_of_such_a_login(olga, bert_client, a, b):
    mine = OrganisationMembership.objects.get(user=olga, organisation=b)
    response = bert_client.post(
        _url("memory_organisationmembership_change", mine.pk), {"is_admin": "on"}
    )
    assert response.status_code == 302, response.content
    mine.refresh_from_db()
    assert mine.is_admin
    assert _rows(b, "admin_member_changed", "allowed").filter(object_id=str(mine.pk)).exists()
    assert not _rows(a, "admin_member_changed", "allowed").exists()

    # A's row of her is not B's to see, change or remove.
    theirs = OrganisationMembership.objects.get(user=olga, organisation=a)
    bert_client.post(_url("memory_organisationmembership_change", theirs.pk), {})
    bert_client.post(_url("memory_organisationmembership_delete", theirs.pk), {"post": "yes"})
    theirs.refresh_from_db()
    assert theirs.is_admin

    response = bert_client.post(
        _url("memory_organisationmembership_delete", mine.pk), {"post": "yes"}
    )
    assert response.status_code == 302
    assert not OrganisationMembership.objects.filter(pk=mine.pk).exists()
    assert _rows(b, "admin_member_removed", "allowed").filter(object_id=str(mine.pk)).exists()


def test_a_membership_is_not_moved_to_another_organisation(cara, a, b, admin_client):
    # Moving a row would change two organisations' members with one audit row: take it out of
    # one and add it to the other instead.
    row = OrganisationMembership.objects.get(user=cara, organisation=b)
    admin_client.post(
        _url("memory_organisationmembership_change", row.pk),
        {"user": cara.pk, "organisation": a.pk, "is_admin": ""},
    )
    row.refresh_from_db()
    assert row.organisation_id == b.pk


def test_an_operator_does_not_make_itself_its_organisations_admin(bert, bert_client, b):
    own = OrganisationMembership.objects.get(user=bert, organisation=b)
    response = bert_client.post(
        _url("memory_organisationmembership_change", own.pk), {"is_admin": "on"}
    )
    assert response.status_code == 403
    own.refresh_from_db()
    assert not own.is_admin


def test_adding_a_login_to_an_organisation_is_audited(cara, a, admin_client):
    response = admin_client.post(
        _url("memory_organisationmembership_add"),
        {"user": cara.pk, "organisation": a.pk, "is_admin": ""},
    )
    assert response.status_code == 302, response.content
    row = OrganisationMembership.objects.get(user=cara, organisation=a)
    assert _rows(a, "admin_member_added", "allowed").filter(object_id=str(row.pk)).exists()


def test_the_targeted_organisations_admin_reads_the_attempt_in_its_audit(olga, bert_client, a):
    # The issue: "Nothing reached A's audit". Now olga (A's admin) reads who tried what.
    bert_client.post(_url("auth_user_password_change", olga.pk), _password_form())
    response = verified_client(olga).get(reverse("dashboard:organisation_audit", args=[a.slug]))
    content = response.content.decode()
    assert response.status_code == 200
    assert "operator bert" in content
    assert "set a login&#x27;s password in the admin" in content
