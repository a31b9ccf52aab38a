"""Accounts: an organisation's admin invites by e-mail (a signed link that expires and works
once), and members reset their own password through Django's auth views. Mail goes through a
real SMTP server (tests/support/smtp_server.py)."""

import re
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from dashboard.accounts.models import Invitation
from dashboard.models import AuditAction, AuditEvent, CareRole, CareTeamMembership
from memory.conversations import tenancy
from memory.models import OrganisationMembership
from tests.dashboard.conftest import PASSWORD, client_for, login, make_person
from tests.support.otp import current_code, totp_device
from tests.support.smtp_server import SmtpServer

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-long-new-passphrase-for-clara"
LINK = re.compile(r"https?://\S+")


@pytest.fixture
def admin(person):
    """The organisation's admin (past the second factor in client_for)."""
    user = login("olga", person.organisation, admin=True)
    user.email = "olga@care.example"
    user.save()
    return user


def _invite(client, organisation, **data):
    return client.post(
        reverse("dashboard:invitations", args=[organisation.slug]),
        {"email": "new.carer@family.example", "people": [], "role": CareRole.FAMILY, **data},
    )


def _link(smtp, index=-1) -> str:
    text = SmtpServer.text(smtp.wait_for(1)[index])
    return LINK.search(text).group(0)


def _path(link: str) -> str:
    return "/" + link.split("/", 3)[3]


def _accept(path, username="newcarer", password=NEW_PASSWORD, client=None, **names):
    data = {"first_name": "Claire", "last_name": "Morgan", **names}
    return (client or Client()).post(
        path, {"username": username, "password1": password, "password2": password, **data}
    )


def test_an_invitation_arrives_by_email_and_its_link_makes_a_login_once(admin, person, smtp_server):
    response = _invite(client_for(admin), person.organisation, people=[str(person.id)])
    assert response.status_code == 302

    assert smtp_server.recipients == [["new.carer@family.example"]]
    message = smtp_server.messages[0]
    assert person.organisation.name in message["Subject"]
    body = SmtpServer.text(message)
    assert "Nana" not in body and "Peggy" not in body  # the person cared for is never named
    path = _path(_link(smtp_server))
    assert Client().get(path).status_code == 200

    assert _accept(path).status_code == 302
    user = get_user_model().objects.get(username="newcarer")
    assert user.email == "new.carer@family.example"
    assert user.get_full_name() == "Claire Morgan"  # pages name her, not her login
    assert user.check_password(NEW_PASSWORD)
    assert OrganisationMembership.objects.filter(user=user, organisation=person.organisation)
    membership = CareTeamMembership.objects.get(user=user, person=person)
    assert membership.role == CareRole.FAMILY and not membership.can_see_transcripts
    # The new login works, and sees the person.
    client = Client()
    assert (
        client.post(
            reverse("dashboard:login"), {"username": "newcarer", "password": NEW_PASSWORD}
        ).status_code
        == 302
    )
    assert client.get(reverse("dashboard:person", args=[person.id])).status_code == 200

    # Once only: the same link, again, makes nothing.
    assert Client().get(path).status_code == 404
    assert _accept(path, username="someoneelse").status_code == 404
    assert not get_user_model().objects.filter(username="someoneelse").exists()

    actions = list(
        AuditEvent.objects.filter(organisation=person.organisation)
        .order_by("at", "id")
        .values_list("action", "username")
    )
    assert (AuditAction.INVITATION_SENT, "olga") in actions
    assert (AuditAction.INVITATION_ACCEPTED, "newcarer") in actions
    assert "new.carer" not in str(list(AuditEvent.objects.values_list("object_id", flat=True)))


def test_an_invitation_link_expires(admin, person, smtp_server, settings):
    settings.CLARA_INVITATION_MAX_AGE_SECONDS = 3600
    _invite(client_for(admin), person.organisation)
    path = _path(_link(smtp_server))
    with time_machine.travel(timedelta(hours=1, minutes=1)):
        assert Client().get(path).status_code == 404
        assert _accept(path).status_code == 404
    assert not get_user_model().objects.filter(username="newcarer").exists()


def test_an_altered_link_is_refused(admin, person, smtp_server):
    _invite(client_for(admin), person.organisation)
    path = _path(_link(smtp_server))
    token = path.rstrip("/").rsplit("/", 1)[1]
    invitation_id, stamp, signature = token.split(":")
    other = Invitation.objects.create(organisation=person.organisation, email="x@example.org")
    forged = reverse("dashboard:invitation_accept", args=[f"{other.id}:{stamp}:{signature}"])
    assert Client().get(forged).status_code == 404


def test_a_revoked_invitation_stops_working_and_is_audited(admin, person, smtp_server):
    client = client_for(admin)
    _invite(client, person.organisation)
    path = _path(_link(smtp_server))
    invitation = Invitation.objects.get()
    response = client.post(
        reverse("dashboard:invitation_revoke", args=[person.organisation.slug, invitation.id])
    )
    assert response.status_code == 302
    assert Client().get(path).status_code == 404
    assert AuditEvent.objects.filter(
        action=AuditAction.INVITATION_REVOKED, object_id=str(invitation.id)
    ).exists()


def test_another_organisation_cannot_see_revoke_or_invite_into_this_one(admin, person, smtp_server):
    elsewhere = tenancy.organisation_get_or_create("elsewhere", name="Elsewhere")
    their_person = make_person("Zed", organisation=elsewhere)
    their_admin = client_for(login("ewan", elsewhere, admin=True))
    _invite(client_for(admin), person.organisation)
    invitation = Invitation.objects.get()

    # Our organisation's pages answer the other admin as an unknown organisation would.
    assert (
        their_admin.get(
            reverse("dashboard:invitations", args=[person.organisation.slug])
        ).status_code
        == 404
    )
    unknown = their_admin.get(reverse("dashboard:invitations", args=["no-such-organisation"]))
    assert unknown.status_code == 404
    revoke = reverse("dashboard:invitation_revoke", args=[elsewhere.slug, invitation.id])
    assert their_admin.post(revoke).status_code == 404
    assert Invitation.objects.get().revoked_at is None

    # Inviting into our person's care team from their organisation: refused like an unknown id.
    response = _invite(their_admin, elsewhere, people=[str(person.id)])
    assert response.status_code == 400
    assert "people" in response.context["form"].errors
    assert Invitation.objects.filter(organisation=elsewhere).count() == 0
    assert len(smtp_server.messages) == 1
    # Their own person is fine.
    assert _invite(their_admin, elsewhere, people=[str(their_person.id)]).status_code == 302


def test_family_and_staff_do_not_invite(person, bob, smtp_server):
    response = _invite(client_for(bob), person.organisation, people=[str(person.id)])
    assert response.status_code == 403
    assert not Invitation.objects.exists() and not smtp_server.messages


def test_a_bad_address_is_a_400_naming_the_field(admin, person, smtp_server):
    response = _invite(client_for(admin), person.organisation, email="not an address")
    assert response.status_code == 400
    assert "email" in response.context["form"].errors
    assert not smtp_server.messages


def test_a_refused_email_keeps_no_invitation(admin, person, smtp_server):
    smtp_server.refuse = True
    response = _invite(client_for(admin), person.organisation)
    assert response.status_code == 400
    assert "could not be sent" in response.content.decode()
    assert not Invitation.objects.exists()
    assert not AuditEvent.objects.filter(action=AuditAction.INVITATION_SENT).exists()


def test_the_new_password_must_pass_the_validators(admin, person, smtp_server):
    _invite(client_for(admin), person.organisation)
    path = _path(_link(smtp_server))
    response = _accept(path, password="short1")
    assert response.status_code == 400
    assert "password1" in response.context["form"].errors
    # The link still works after a refused form.
    assert _accept(path).status_code == 302


def test_a_login_name_taken_at_the_same_moment_is_a_400_and_the_link_still_works(
    admin, person, smtp_server, monkeypatch
):
    """Two people signing up as "sam" at once: both forms pass the name check, one insert wins.
    The other gets the form back naming the field (not a 500), and keeps a working link."""
    from dashboard.accounts import forms

    _invite(client_for(admin), person.organisation)
    path = _path(_link(smtp_server))
    get_user_model().objects.create_user("sam", password=NEW_PASSWORD)
    # The check ran before the other sign-up committed.
    monkeypatch.setattr(forms.NewLoginForm, "clean_username", lambda self: "sam")
    response = _accept(path, username="sam")
    assert response.status_code == 400
    assert response.context["form"].errors["username"] == [
        "That login name is taken. Please choose another."
    ]
    invitation = Invitation.objects.get()
    assert invitation.accepted_at is None and invitation.accepted_by is None
    assert not OrganisationMembership.objects.filter(user__username="sam").exists()
    monkeypatch.undo()
    assert _accept(path, username="sam2").status_code == 302
    assert OrganisationMembership.objects.filter(
        user__username="sam2", organisation=person.organisation
    ).exists()


def test_an_existing_login_joins_only_when_logged_in_as_itself(admin, person, smtp_server):
    elsewhere = tenancy.organisation_get_or_create("elsewhere", name="Elsewhere")
    existing = login("erin", elsewhere)
    existing.email = "New.Carer@family.example"
    existing.save()
    _invite(client_for(admin), person.organisation)
    path = _path(_link(smtp_server))

    # Not logged in: asked to log in first, and the link cannot set erin's password.
    assert "Log in with it first" in Client().get(path).content.decode()
    assert _accept(path, username="erin2").status_code == 200
    existing.refresh_from_db()
    assert existing.check_password(PASSWORD)
    # Someone else logged in: refused.
    assert client_for(login("mallory", elsewhere)).post(path).status_code == 403
    # erin herself joins.
    erin = client_for(existing)
    assert erin.post(path).status_code == 302
    assert OrganisationMembership.objects.filter(user=existing, organisation=person.organisation)
    assert erin.post(path).status_code == 404


# --- Password reset --------------------------------------------------------------------------


@pytest.fixture
def member(person):
    user = login("mona")
    user.email = "mona@care.example"
    user.save()
    CareTeamMembership.objects.create(user=user, person=person, role=CareRole.STAFF)
    return user


def _ask_reset(email: str):
    return Client().post(reverse("dashboard:password_reset"), {"email": email})


def _set_password(path: str, password: str = NEW_PASSWORD):
    client = Client()
    # Django's confirm view moves the token into the session, then shows the form.
    page = client.get(path, follow=True)
    form_url = page.redirect_chain[-1][0] if page.redirect_chain else path
    return client.post(form_url, {"new_password1": password, "new_password2": password})


def test_a_reset_link_arrives_and_sets_a_new_password_once(member, smtp_server):
    response = _ask_reset("MONA@care.example")
    assert response.status_code == 302
    assert smtp_server.recipients == [["mona@care.example"]]
    path = _path(_link(smtp_server))

    done = _set_password(path)
    assert done.status_code == 302 and done["Location"] == reverse(
        "dashboard:password_reset_complete"
    )
    member.refresh_from_db()
    assert member.check_password(NEW_PASSWORD)
    # The link is spent: the page says so, and the form is gone.
    again = Client().get(path, follow=True)
    assert "does not work any more" in again.content.decode()
    assert _set_password(path, "yet-another-long-passphrase").status_code == 200
    member.refresh_from_db()
    assert member.check_password(NEW_PASSWORD)


def test_a_reset_does_not_say_whether_an_address_has_a_login(member, smtp_server):
    known = _ask_reset("mona@care.example")
    unknown = _ask_reset("nobody@care.example")
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])
    pages = [Client().get(r["Location"]).content.decode() for r in (known, unknown)]
    # The same page, but for the CSRF token each page carries.
    token = re.compile(r'"x-csrftoken": "[^"]+"')
    assert token.sub("", pages[0]) == token.sub("", pages[1])
    assert len(smtp_server.wait_for(1)) == 1  # only the real address got mail


def test_a_reset_password_must_pass_the_validators(member, smtp_server):
    _ask_reset("mona@care.example")
    response = _set_password(_path(_link(smtp_server)), "short1")
    assert response.status_code == 200
    assert "new_password1" in response.context["form"].errors or (
        "new_password2" in response.context["form"].errors
    )
    member.refresh_from_db()
    assert member.check_password(PASSWORD)


def test_a_reset_does_not_lift_a_lockout(member, smtp_server):
    for _ in range(5):
        Client().post(
            reverse("dashboard:login"),
            {"username": "mona", "password": "wrong-password"},
            REMOTE_ADDR="198.51.100.9",
        )
    _ask_reset("mona@care.example")
    _set_password(_path(_link(smtp_server)))
    # The address the failures came from stays locked out of the account (a login from
    # elsewhere is not locked: tests/dashboard/test_logins.py).
    response = Client().post(
        reverse("dashboard:login"),
        {"username": "mona", "password": NEW_PASSWORD},
        REMOTE_ADDR="198.51.100.9",
    )
    assert response.status_code == 429


def test_a_reset_does_not_skip_the_second_factor(member, smtp_server):
    device = totp_device(member)
    _ask_reset("mona@care.example")
    _set_password(_path(_link(smtp_server)))
    client = Client()
    response = client.post(
        reverse("dashboard:login"), {"username": "mona", "password": NEW_PASSWORD}
    )
    assert response.status_code == 302
    person_page = client.get(reverse("dashboard:people"))
    assert person_page.status_code == 302
    assert person_page["Location"].startswith(reverse("dashboard:two_factor"))
    verified = client.post(reverse("dashboard:two_factor"), {"token": current_code(device)})
    assert verified.status_code == 302
    assert client.get(reverse("dashboard:people")).status_code == 200


def test_resets_for_one_address_stop_mailing_past_the_limit_without_saying_so(
    member, smtp_server, settings
):
    settings.CLARA_PASSWORD_RESETS_PER_ADDRESS_PER_HOUR = 3
    answers = [
        Client().post(
            reverse("dashboard:password_reset"),
            {"email": address},
            REMOTE_ADDR=f"198.51.100.{n}",  # from different places: the address limit alone
        )
        for n, address in enumerate(["mona@care.example", "MONA@care.example "] * 3)
    ]
    # Every answer is the usual one, but only three mails left.
    assert {(a.status_code, a["Location"]) for a in answers} == {
        (302, reverse("dashboard:password_reset_done"))
    }
    assert smtp_server.recipients == [["mona@care.example"]] * 3
    # Another address is counted on its own.
    _ask_reset("nobody@care.example")
    member.email = "nobody@care.example"
    member.save()
    _ask_reset("nobody@care.example")
    assert smtp_server.recipients[-1] == ["nobody@care.example"]


def test_resets_from_one_client_are_refused_past_the_limit(member, smtp_server, settings):
    settings.CLARA_PASSWORD_RESETS_PER_CLIENT_PER_HOUR = 2
    url = reverse("dashboard:password_reset")
    asks = [
        Client().post(url, {"email": f"someone{n}@care.example"}, REMOTE_ADDR="203.0.113.7")
        for n in range(2)
    ]
    assert [a.status_code for a in asks] == [302, 302]
    refused = Client().post(url, {"email": "mona@care.example"}, REMOTE_ADDR="203.0.113.7")
    assert refused.status_code == 429
    assert "Too many reset requests from here" in refused.content.decode()
    assert smtp_server.recipients == []
    # Another client is not held back.
    other = Client().post(url, {"email": "mona@care.example"}, REMOTE_ADDR="203.0.113.8")
    assert other.status_code == 302 and smtp_server.recipients == [["mona@care.example"]]


# --- Changing one's own password -------------------------------------------------------------


def test_a_member_changes_their_password_and_stays_logged_in(member):
    client = client_for(member)
    url = reverse("dashboard:password_change")
    assert client.get(url).status_code == 200
    response = client.post(
        url,
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == reverse("dashboard:people")
    assert "Your new password is saved." in response.content.decode()
    member.refresh_from_db()
    assert member.check_password(NEW_PASSWORD)
    # Still logged in on this browser.
    assert client.get(reverse("dashboard:people")).status_code == 200


def test_the_password_now_is_needed_and_the_new_one_must_pass_the_validators(member):
    client = client_for(member)
    url = reverse("dashboard:password_change")
    wrong = client.post(
        url,
        {"old_password": "not-it", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert wrong.status_code == 400 and "old_password" in wrong.context["form"].errors
    weak = client.post(
        url, {"old_password": PASSWORD, "new_password1": "short1", "new_password2": "short1"}
    )
    assert weak.status_code == 400 and "new_password2" in weak.context["form"].errors
    member.refresh_from_db()
    assert member.check_password(PASSWORD)


def test_an_admin_keeps_the_second_factor_after_changing_the_password(admin):
    client = client_for(admin)
    client.post(
        reverse("dashboard:password_change"),
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    admin.refresh_from_db()
    assert admin.check_password(NEW_PASSWORD)
    # Not sent back to the second factor: the session kept its verification.
    response = client.get(reverse("dashboard:people"))
    assert response.status_code == 200


def test_changing_a_password_needs_a_login():
    response = Client().get(reverse("dashboard:password_change"))
    assert response.status_code == 302 and reverse("dashboard:login") in response["Location"]


def test_the_sign_up_asks_for_a_name_and_refuses_without_a_first_name(admin, person, smtp_server):
    _invite(client_for(admin), person.organisation, people=[str(person.id)])
    path = _path(_link(smtp_server))
    page = Client().get(path).content.decode()
    assert 'name="first_name"' in page and 'autocomplete="given-name"' in page
    assert 'name="last_name"' in page and 'autocomplete="family-name"' in page
    response = _accept(path, first_name="  ", last_name="Morgan")
    assert response.status_code == 400
    assert "first_name" in response.context["form"].errors
    assert not get_user_model().objects.filter(username="newcarer").exists()
    # One name is enough for someone who goes by one.
    assert _accept(path, first_name="Madonna", last_name="").status_code == 302
    assert get_user_model().objects.get(username="newcarer").get_full_name() == "Madonna"
