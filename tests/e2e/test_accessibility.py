"""Every dashboard page through axe-core (vendored from npm: tests/e2e/vendor/), light and dark,
at desktop and phone sizes: zero violations. And the in-page actions: focus returns to the item
acted on, the aria-live region says what happened, removing a team member asks first.

axe runs in a context that bypasses the Content-Security-Policy (it is injected as an inline
script); the pages themselves run under it as everywhere else.
"""

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from dashboard.models import CareRole, CareTeamMembership
from memory.models import Alert, OrganisationMembership, Session
from tests.dashboard.conftest import PASSWORD
from tests.e2e.test_dashboard_browser import DESKTOP, PHONE, alice, peggy  # noqa: F401
from tests.support.otp import current_code, second_step_code, totp_device

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1.min.js"
# WCAG 2.x A and AA, and axe's best practices.
AXE_RUN = """async () => {
  const result = await axe.run(document, {
    runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa",
                                    "best-practice"]}
  });
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ") + " :: " + n.failureSummary)
  }));
}"""


def open_page(browser, live_server, *, viewport=DESKTOP, scheme="light"):
    context = browser.new_context(viewport=viewport, color_scheme=scheme, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(45_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(f"{live_server.url}/login/")
    return page


def log_in(page, live_server, username="alice", *, device=None, checked=None):
    """Log in; with a second-factor `device`, pass it too (the page checked by axe when
    `checked` is a dict to record violations in)."""
    # A team or organisation admin passes the second step (a recovery code without `device`;
    # made before logging in, so the login has its app and is asked for a code, not to enrol).
    code = None if device is not None else second_step_code(username)
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button.primary")
    if device is not None:
        code = current_code(device)
    if code is not None:
        page.wait_for_url(f"{live_server.url}/account/two-factor/**")
        if checked is not None and (result := violations(page)):
            checked["two-factor"] = result
        page.fill("#id_token", code)
        page.click("button.primary")
    page.wait_for_url(f"{live_server.url}/")


def settled(page, name=""):
    """Every htmx panel has arrived and every chart is drawn."""
    try:
        _settle(page)
    except Exception as error:
        state = page.evaluate(
            """() => ({loading: document.querySelectorAll('.loading, .htmx-request').length,
                      charts: document.querySelectorAll('script[data-chart]').length,
                      drawn: [...document.querySelectorAll('.chart')].filter(c => c.querySelector('svg.main-svg')).length,
                      plotly: typeof Plotly})"""
        )
        raise AssertionError(f"{name or page.url} never settled: {state}; {page.errors}") from error


def _settle(page):
    page.wait_for_function(
        """() => !document.querySelector('.loading, .htmx-request') &&
                 document.querySelectorAll('script[data-chart]').length ===
                 document.querySelectorAll('.chart').length""",
        timeout=60_000,
    )
    draw_every_chart(page)
    page.wait_for_function(
        """() => document.querySelectorAll('script[data-chart]').length ===
                 [...document.querySelectorAll('.chart')].filter(c => c.querySelector('svg.main-svg')).length""",
        timeout=60_000,
    )
    page.evaluate("window.scrollTo(0, 0)")


def draw_every_chart(page):
    """charts.js draws a chart only when it comes near the screen: bring each one there."""
    page.evaluate(
        """async () => {
          for (const chart of document.querySelectorAll('.chart')) {
            chart.scrollIntoView({block: 'center'});
            // Two frames, or 250 ms when the page gets no frames (a page the browser does not
            // paint never runs requestAnimationFrame, and this evaluate has no timeout).
            await new Promise(done => {
              requestAnimationFrame(() => requestAnimationFrame(done));
              setTimeout(done, 250);
            });
          }
        }"""
    )


def violations(page) -> list:
    page.add_script_tag(path=str(AXE))
    return page.evaluate(AXE_RUN)


def pages_of(peggy, slug):  # noqa: F811
    session = Session.objects.filter(person=peggy).order_by("-created_at").first()
    base = f"/people/{peggy.id}/"
    return {
        "people": "/",
        "home": "/home/?sort=name",
        "notes": f"{base}notes/",
        "person": base,
        "emotions": f"{base}emotions/?days=90",
        "patterns": f"{base}patterns/",
        "questions": f"{base}questions/",
        "what-helps": f"{base}what-helps/",
        "conversations": f"{base}conversations/",
        "conversation": f"{base}conversations/{session.id}/",
        "transcript": f"{base}conversations/{session.id}/transcript/",
        "alerts": f"{base}alerts/",
        "team": f"{base}team/",
        "profile": f"{base}profile/",
        "memories": f"{base}memories/",
        "erase": f"{base}erase/",
        "audit": f"/organisations/{slug}/audit/",
        "invitations": f"/organisations/{slug}/invitations/",
        "org-alerts": f"/organisations/{slug}/alerts/",
        "false-alarms": "/alerts/false-alarms/",
        "who-answers-alerts": f"/organisations/{slug}/alerts/settings/",
        "alert-routing": f"{base}alerts/mine/",
        "record": f"{base}record.html?archived=1",
        # The login's own second factor (alice passes one: she is an organisation admin here).
        "second-step": "/account/two-factor/manage/",
        "password": "/account/password/",
        "new-authenticator": "/account/two-factor/replace/",
        "not-found": "/no/such/page/",
    }


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_passes_axe(browser, live_server, alice, peggy, scheme, shoot):  # noqa: F811
    # An organisation admin (its audit page is one of the pages), so past a second factor.
    OrganisationMembership.objects.filter(user=alice).update(is_admin=True)
    device = totp_device(alice)
    page = open_page(browser, live_server, scheme=scheme)
    assert violations(page) == [], "login"
    found = {}
    log_in(page, live_server, device=device, checked=found)
    for name, path in pages_of(peggy, peggy.organisation.slug).items():
        page.goto(live_server.url + path)
        settled(page, name)
        result = violations(page)
        if result:
            found[name] = result
    assert found == {}, json.dumps(found, indent=1)
    assert page.errors == []
    page.context.close()


def test_the_person_page_on_a_phone_passes_axe_and_its_charts_fit(
    browser,
    live_server,
    alice,  # noqa: F811
    peggy,  # noqa: F811
    shoot,
):
    page = open_page(browser, live_server, viewport=PHONE, scheme="dark")
    log_in(page, live_server)
    page.goto(f"{live_server.url}/people/{peggy.id}/")
    settled(page)
    assert violations(page) == []
    # No chart is wider than the phone: nothing is cut off or needs sideways scrolling.
    widths = page.evaluate(
        "[...document.querySelectorAll('.chart svg.main-svg')].map(s => s.getBoundingClientRect().right)"
    )
    assert widths and max(widths) <= PHONE["width"]
    too_wide = page.evaluate(
        """w => [...document.querySelectorAll('main *')]
            .filter(e => e.getBoundingClientRect().right > w + 1 && !e.closest('.chart'))
            .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + e.textContent.slice(0, 40))""",
        PHONE["width"],
    )
    assert too_wide == []
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # Legend entries never overlap each other (the "frighten★ned" of the issue).
    overlaps = page.evaluate(
        """() => {
          const bad = [];
          document.querySelectorAll('.chart .legend').forEach(legend => {
            const boxes = [...legend.querySelectorAll('.traces')].map(t => t.getBoundingClientRect());
            boxes.forEach((a, i) => boxes.slice(i + 1).forEach(b => {
              if (a.left < b.right - 3 && b.left < a.right - 3 && a.top < b.bottom - 3 && b.top < a.bottom - 3)
                bad.push(legend.closest('.panel').id + ': ' + [a.left, a.right, a.top, a.bottom, b.left, b.right, b.top, b.bottom].map(Math.round).join(','));
            }));
          });
          return bad;
        }"""
    )
    assert overlaps == []
    for panel in ("emotions", "patterns", "repetition", "calming"):
        page.evaluate(f"document.getElementById('{panel}').scrollIntoView()")
        shoot(page, f"{panel}-phone-dark")
    page.context.close()


def test_acting_on_an_alert_keeps_focus_on_it_and_says_so(browser, live_server, alice, peggy):  # noqa: F811
    page = open_page(browser, live_server)
    log_in(page, live_server)
    page.goto(f"{live_server.url}/people/{peggy.id}/")
    settled(page)
    alert = Alert.objects.filter(person=peggy, status="open").order_by("-created_at").first()
    item = f"#alert-{alert.id}"
    page.locator(f"{item} button:has-text('dealing with it')").click()
    page.wait_for_selector(f"{item} >> text=You are dealing with it")
    page.wait_for_function(
        "document.getElementById('announce').textContent === 'You are dealing with it.'",
        timeout=10_000,
    )
    assert page.evaluate("document.activeElement.id") == f"alert-{alert.id}"
    assert page.evaluate("window.scrollY") > 0 or page.locator(item).is_visible()
    page.context.close()


def test_taking_someone_off_the_team_asks_first(browser, live_server, alice, peggy):  # noqa: F811
    bob = get_user_model().objects.create_user("bob", password=PASSWORD, first_name="Bob")
    OrganisationMembership.objects.create(user=bob, organisation=peggy.organisation)
    CareTeamMembership.objects.create(user=bob, person=peggy, role=CareRole.FAMILY)
    page = open_page(browser, live_server)
    log_in(page, live_server)
    page.goto(f"{live_server.url}/people/{peggy.id}/team/")
    questions = []

    def decline(dialog):
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", decline)
    bob_row = page.locator("li.member", has_text="Bob")
    bob_row.locator("button:has-text('Take off the team')").click()
    page.wait_for_timeout(300)
    assert questions and questions[0].startswith("Take Bob off")
    assert CareTeamMembership.objects.filter(user=bob, person=peggy).exists()
    page.once("dialog", lambda dialog: dialog.accept())
    bob_row.locator("button:has-text('Take off the team')").click()
    page.wait_for_selector("li.member:has-text('(bob)')", state="detached")
    assert not CareTeamMembership.objects.filter(user=bob, person=peggy).exists()
    page.context.close()


WIDE = {"width": 1440, "height": 900}


@pytest.mark.parametrize(
    ("viewport", "scheme", "picture"),
    [(WIDE, "light", "profile-desktop"), (PHONE, "dark", "profile-phone-dark")],
    ids=["desktop", "phone-dark"],
)
def test_editing_the_profile_passes_axe(
    browser,
    live_server,
    alice,  # noqa: F811
    peggy,  # noqa: F811
    shoot,
    viewport,
    scheme,
    picture,
):
    from memory.core.person import CaregiverContext

    peggy.caregiver_context = {k: v for k, v in peggy.caregiver_context.items() if k != "timezone"}
    peggy.save(update_fields=["caregiver_context"])
    contact = CaregiverContext.of(peggy).family[0]
    page = open_page(browser, live_server, viewport=viewport, scheme=scheme)
    log_in(page, live_server)
    page.goto(f"{live_server.url}/people/{peggy.id}/profile/")
    settled(page)
    found = {}
    if result := violations(page):
        found["profile"] = result
    # The demo's people, entered at set-up, are on the profile (not "No one yet").
    people = page.locator("#profile-people")
    assert contact.name in people.inner_text() and "No one yet" not in people.inner_text()
    assert "time zone is not set" in page.locator("#profile-home").inner_text()

    # A time zone that does not exist is refused, naming the field; then a real one is saved.
    page.locator("#profile-home a.button").click()
    page.wait_for_selector("#id_time_zone")
    page.fill("#id_home", "Beech House")
    page.fill("#id_time_zone", "Europe/Atlantis")
    page.locator("#profile-home button.primary").click()
    page.wait_for_selector("#time-zone-error")
    assert "Time zone:" in page.locator("#time-zone-error").inner_text()
    if result := violations(page):
        found["profile, a refused time zone"] = result
    page.fill("#id_time_zone", "Europe/London")
    page.locator("#profile-home button.primary").click()
    page.wait_for_selector("#profile-home >> text=Lives at")
    assert "Europe/London" in page.locator("#profile-home").inner_text()
    peggy.refresh_from_db()
    assert CaregiverContext.of(peggy).time_zone == "Europe/London"

    # Pronouns, then the agreed answer to a question picked from the repeated-questions panel.
    page.locator("#profile-name a.button").click()
    page.wait_for_selector("#id_pronouns")
    page.select_option("#id_pronouns", "she/her")
    page.locator("#profile-name button.primary").click()
    page.wait_for_selector("#profile-name >> text=(she/her)")
    page.goto(f"{live_server.url}/people/{peggy.id}/questions/")
    settled(page)
    page.locator("a:has-text('Set an agreed answer')").first.click()
    page.wait_for_selector("#id_answer")
    if result := violations(page):
        found["agreed answer"] = result
    page.fill("#id_answer", "Claire is coming on Thursday, and she loves you.")
    page.locator("button.primary").click()
    page.wait_for_url("**/profile/**")
    settled(page)
    answers = page.locator("#profile-answers").inner_text()
    assert "Claire is coming on Thursday, and she loves you." in answers
    if result := violations(page):
        found["profile, after editing"] = result
    assert found == {}, json.dumps(found, indent=1)
    assert page.errors == []
    page.evaluate("document.getElementById('profile-home').scrollIntoView()")
    shoot(page, picture)
    page.context.close()
