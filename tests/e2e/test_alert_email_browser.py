"""The alert e-mail as a phone shows it (issue 29): its HTML part, taken from a real SMTP
server, in Debian's chromium at 390×844, light and dark. Nothing is wider than the phone, the
headline and the button keep readable colours, the headline is at the top. Screenshots:
docs/screenshots/alert-email-phone-light.png and -dark.png (SAVE_SCREENSHOTS=1)."""

import pytest

from dashboard.alerting import ladder
from dashboard.models import CareRole, CareTeamMembership
from memory.models import Alert
from tests.dashboard.conftest import login, person  # noqa: F401
from tests.e2e.test_dashboard_browser import PHONE
from tests.support.smtp_server import SmtpServer

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CONTRAST = """([fg, bg]) => {
  const rgb = s => s.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
  const lum = c => { const [r, g, b] = rgb(c).map(v => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


@pytest.fixture
def email_html(person, smtp_server):  # noqa: F811
    """The HTML part of the e-mail care staff get about Peggy's fall (with her home and room)."""
    person.caregiver_context = {
        **person.caregiver_context,
        "home": "Beech House",
        "room": "Room 12",
    }
    person.save()
    names = {}
    for username, first, last, role in (
        ("alice", "Alice", "Smith", CareRole.ADMIN),
        ("carol", "Carol", "Diaz", CareRole.STAFF),
    ):
        user = login(username)
        user.first_name, user.last_name, user.email = first, last, f"{username}@care.example"
        user.save()
        CareTeamMembership.objects.create(user=user, person=person, role=role)
        names[username] = user
    alert = Alert.objects.get(person=person, kind=Alert.Kind.ESCALATION)
    ladder.alert_deliver(alert_id=alert.id)
    message = smtp_server.messages[smtp_server.recipients.index(["carol@care.example"])]
    return SmtpServer.html(message)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_email_on_a_phone_light_and_dark(browser, email_html, scheme, shoot):
    context = browser.new_context(viewport=PHONE, color_scheme=scheme)
    page = context.new_page()
    page.set_content(email_html)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    headline = page.locator("td.headline")
    assert headline.inner_text() == "Peggy may have fallen"
    box = headline.bounding_box()
    assert box["y"] < 40 and box["width"] > 300  # at the top, across the phone
    for selector in ("td.headline", "a.button"):
        fg, bg = page.eval_on_selector(
            selector,
            "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]",
        )
        assert page.evaluate(CONTRAST, [fg, bg]) >= 4.5, (scheme, selector, fg, bg)
    card_fg, card_bg = page.eval_on_selector(
        "td.card p.ink",
        "e => [getComputedStyle(e).color, getComputedStyle(e.closest('td')).backgroundColor]",
    )
    assert page.evaluate(CONTRAST, [card_fg, card_bg]) >= 7, scheme
    assert "Where: Beech House, Room 12" in page.inner_text("body")
    if scheme == "dark":
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(18, 18, 18)"
    shoot(page, f"alert-email-phone-{scheme}", full_page=True)
    context.close()
