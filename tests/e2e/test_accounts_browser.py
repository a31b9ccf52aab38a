"""Accounts in a real browser, at 1440×900 and 390×844: an organisation's admin sends an
invitation, the invitee accepts it from the e-mail (a real SMTP server) and logs in; a member
resets a forgotten password from the e-mail. Every page on the way passes axe-core."""

import re

import pytest
from django.contrib.auth import get_user_model

from memory.models import OrganisationMembership
from tests.dashboard.conftest import PASSWORD
from tests.e2e.test_accessibility import log_in, open_page, violations
from tests.e2e.test_dashboard_browser import alice, peggy  # noqa: F401
from tests.support.otp import second_step_code, totp_device
from tests.support.smtp_server import SmtpServer

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
NEW_PASSWORD = "a-long-new-passphrase-for-clara"
LINK = re.compile(r"https?://\S+")


def _link(smtp: SmtpServer, count: int) -> str:
    messages = smtp.wait_for(count)
    assert len(messages) == count
    return LINK.search(SmtpServer.text(messages[-1])).group(0)


def _clean(page, name: str) -> None:
    assert violations(page) == [], name


@pytest.mark.parametrize("size", list(SIZES))
def test_an_invitation_sent_accepted_and_used_to_log_in(
    browser,
    live_server,
    alice,  # noqa: F811
    peggy,  # noqa: F811
    smtp_server,
    shoot,
    size,
):
    OrganisationMembership.objects.filter(user=alice).update(is_admin=True)
    device = totp_device(alice)
    page = open_page(browser, live_server, viewport=SIZES[size])
    log_in(page, live_server, device=device)
    page.click("text=Invite someone to")
    page.wait_for_selector("h1:has-text('Invite someone')")
    _clean(page, "invitations")
    page.fill("#id_email", "new.carer@family.example")
    page.check(f"input[name=people][value='{peggy.id}']")
    page.select_option("#id_role", "staff")
    shoot(page, f"invite-send-{size}", full_page=True)
    page.click("button:has-text('Send the invitation')")
    page.wait_for_selector(".messages >> text=Invitation sent to new.carer@family.example")
    assert page.locator("table.list td:has-text('pending')").count() == 1
    _clean(page, "invitations, sent")
    page.context.close()

    link = _link(smtp_server, 1)
    assert link.startswith(live_server.url)
    invitee = open_page(browser, live_server, viewport=SIZES[size])
    invitee.goto(link)
    invitee.wait_for_selector("h1:has-text('Join')")
    _clean(invitee, "accept")
    invitee.fill("#id_first_name", "Claire")
    invitee.fill("#id_last_name", "Morgan")
    invitee.fill("#id_username", "newcarer")
    invitee.fill("#id_password1", "short")
    invitee.fill("#id_password2", "short")
    invitee.click("button:has-text('Create my login')")
    invitee.wait_for_selector("#id_password1-error")
    _clean(invitee, "accept, refused password")
    invitee.fill("#id_password1", NEW_PASSWORD)
    invitee.fill("#id_password2", NEW_PASSWORD)
    shoot(invitee, f"invite-accept-{size}", full_page=True)
    invitee.click("button:has-text('Create my login')")
    invitee.wait_for_url(f"{live_server.url}/login/")
    assert "Your login is ready" in invitee.locator(".messages").inner_text()
    invitee.fill("#id_username", "newcarer")
    invitee.fill("#id_password", NEW_PASSWORD)
    invitee.click("button.primary")
    invitee.wait_for_url(f"{live_server.url}/")
    # Pages name her by the name she gave, not her login.
    assert invitee.locator("header .who").inner_text() == "Claire Morgan"
    assert invitee.locator(".card").count() == 1
    shoot(invitee, f"invite-joined-{size}")
    # The link is spent.
    invitee.goto(link)
    assert invitee.locator("h1").inner_text() == "This invitation does not work"
    assert invitee.errors == []
    invitee.context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_resetting_a_forgotten_password(
    browser,
    live_server,
    alice,  # noqa: F811
    smtp_server,
    shoot,
    size,
):
    alice.email = "alice@care.example"
    alice.save()
    page = open_page(browser, live_server, viewport=SIZES[size])
    page.click("text=Forgotten your password?")
    page.wait_for_selector("h1:has-text('Forgotten your password?')")
    _clean(page, "reset form")
    page.fill("#id_email", "alice@care.example")
    shoot(page, f"reset-ask-{size}")
    page.click("button:has-text('Send the link')")
    page.wait_for_selector("h1:has-text('Check your e-mail')")
    _clean(page, "reset sent")
    shoot(page, f"reset-sent-{size}")

    page.goto(_link(smtp_server, 1))
    page.wait_for_selector("h1:has-text('Choose a new password')")
    _clean(page, "reset choose")
    page.fill("#id_new_password1", NEW_PASSWORD)
    page.fill("#id_new_password2", NEW_PASSWORD)
    shoot(page, f"reset-choose-{size}")
    page.click("button:has-text('Save the new password')")
    page.wait_for_selector("h1:has-text('Your new password is saved')")
    _clean(page, "reset complete")
    page.click("a.button:has-text('Log in')")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)  # the old one no longer works
    page.click("button.primary")
    page.wait_for_selector("p.error")
    page.fill("#id_password", NEW_PASSWORD)
    # alice is a team admin: the new password alone is not enough (her app set up before).
    code = second_step_code("alice")
    page.click("button.primary")
    page.wait_for_url(f"{live_server.url}/account/two-factor/?**")
    page.fill("#id_token", code)
    page.click("button.primary")
    page.wait_for_url(f"{live_server.url}/")
    assert get_user_model().objects.get(username="alice").check_password(NEW_PASSWORD)
    assert page.errors == []
    page.context.close()
