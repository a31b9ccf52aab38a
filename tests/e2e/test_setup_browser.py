"""Issue 32, in a real browser at desktop and phone sizes: the people list (dense rows, a name
search), the person page's section menu and alert buttons, remembering on the profile, and an
organisation's set-up (a team admin's invitation to several people, the audit's filters).
axe checks each state these flows add (tests/e2e/test_accessibility.py covers every page)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from dashboard.models import CareRole, CareTeamMembership
from memory.facts import store
from memory.models import Alert, Memory, OrganisationMembership, Person
from tests.dashboard.conftest import PASSWORD, converse, login, make_person
from tests.e2e.test_accessibility import violations
from tests.support.otp import second_step_code

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}
SIZES = {"desktop": DESKTOP, "phone": PHONE}
NAMES = ["Peggy", "Arthur", "Margaret", "Edith", "Harold", "Winifred", "Stanley", "Mabel", "Zoë"]


@pytest.fixture
def home():
    """Nine residents in alice's care teams (she runs them; an organisation admin too), one
    archived; Peggy had a hard conversation an hour ago (an alert) and mentioned Sarah."""
    people = [make_person(f"{name} Example", {"preferredName": name}) for name in NAMES]
    Person.objects.filter(pk=people[-1].pk).update(status=Person.Status.ARCHIVED)
    extra = make_person("Walter Example", {"preferredName": "Walter"})  # the tenth: archived too
    Person.objects.filter(pk=extra.pk).update(status=Person.Status.ARCHIVED)
    alice = login("alice", people[0].organisation, admin=True)
    alice.email = "alice@care.example"
    alice.save()
    for person in [*people, extra]:
        CareTeamMembership.objects.create(
            user=alice, person=person, role=CareRole.ADMIN, can_see_transcripts=True
        )
    peggy = people[0]
    peggy.caregiver_context = {**peggy.caregiver_context, "timezone": "Europe/London"}
    peggy.save()
    converse(
        peggy,
        timezone.now() - timedelta(hours=1),
        [
            ("Where is Sarah?", 0.5, "anxious"),
            ("I fell and I can't get up, help me", 0.9, "fearful"),
        ],
    )
    for text in ("Sarah is Peggy's daughter.", "Sarah visits on Sundays."):
        store.memory_upsert(
            namespace=store.person_namespace(peggy.id, "people"),
            content=text,
            type="people",
            entity_refs=["person:sarah"],
            entity_labels={"person:sarah": "Sarah"},
            source=Memory.Source.CONVERSATION_EXTRACTION,
            embed=False,
        )
    return {"alice": alice, "peggy": peggy, "people": people}


def log_in(browser, live_server, viewport):
    # CSP bypassed only so axe can be injected; the pages run as everywhere else.
    page = browser.new_context(viewport=viewport, bypass_csp=True).new_page()
    page.set_default_timeout(45_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    code = second_step_code("alice")
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.click("button.primary")
    if code is not None:
        page.wait_for_url(f"{live_server.url}/account/two-factor/?**")
        page.fill("#id_token", code)
        page.click("button.primary")
    page.wait_for_url(f"{live_server.url}/")
    return page


VISIBLE_CARDS = """() => {
  document.querySelector('.cards').scrollIntoView({block: 'start'});
  return [...document.querySelectorAll('.card')].filter(card => {
    const box = card.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= window.innerHeight;
  }).length;
}"""


@pytest.mark.parametrize("size", SIZES)
def test_the_people_list_is_dense_and_finds_by_name(browser, live_server, home, size, shoot):
    page = log_in(browser, live_server, SIZES[size])
    assert page.locator(".card").count() == 8  # the archived left out...
    assert "2 archived or inactive not shown" in page.locator("#people-count").inner_text()
    # ...and a screen holds them all: at least 8 on a laptop, 5 on a phone.
    assert page.evaluate(VISIBLE_CARDS) >= (8 if size == "desktop" else 5)
    page.evaluate("window.scrollTo(0, 0)")
    shoot(page, f"people-{size}")
    # htmx follows the typing; the address keeps the search (a reload shows the same).
    page.fill("#id_q", "marg")
    page.wait_for_function("() => document.querySelectorAll('.card').length === 1")
    assert page.locator(".card-name").inner_text() == "Margaret (Margaret Example)"
    assert "q=marg" in page.url
    page.fill("#id_q", "zoe")
    page.check("#id_show")
    page.wait_for_selector(".card-archived")
    assert "Archived" in page.locator(".card-archived").inner_text()
    assert violations(page) == []
    shoot(page, f"people-search-{size}")
    assert page.errors == []
    page.context.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_person_page_jumps_to_a_section_and_puts_the_buttons_first(
    browser, live_server, home, size, shoot
):
    peggy = home["peggy"]
    alert = Alert.objects.get(person=peggy, kind=Alert.Kind.ESCALATION)
    page = log_in(browser, live_server, SIZES[size])
    page.goto(f"{live_server.url}/people/{peggy.id}/")
    item = page.locator(f"#alert-{alert.id}")
    item.locator("button.claim").wait_for()
    claim = item.locator("button.claim").bounding_box()
    note = item.locator("input[name=note]").bounding_box()
    assert claim["y"] < note["y"]
    # The chart library is neither preloaded nor in the page: charts.js asks for it when a
    # chart comes near the screen.
    assert page.locator("link[href*=plotly], script[src*=plotly]").count() <= (
        1 if page.evaluate("typeof Plotly") == "object" else 0
    )
    page.wait_for_selector("#calming h2")
    page.locator(".section-menu a[href='#calming']").click()
    page.wait_for_function(
        "() => Math.abs(document.getElementById('calming').getBoundingClientRect().top) < 120"
    )
    assert page.url.endswith("#calming")
    shoot(page, f"person-menu-{size}")
    # The browser's Back returns to the menu.
    page.go_back()
    page.wait_for_function("() => window.scrollY < 400")
    assert page.errors == []
    page.context.close()


@pytest.mark.parametrize("size", SIZES)
def test_remembering_off_and_forgetting_someone_from_the_profile(
    browser, live_server, home, size, shoot
):
    peggy = home["peggy"]
    page = log_in(browser, live_server, SIZES[size])
    page.goto(f"{live_server.url}/people/{peggy.id}/profile/#profile-remembering")
    section = page.locator("#profile-remembering")
    section.locator("button:has-text('Switch remembering off')").click()
    page.wait_for_selector("#profile-remembering >> text=Remembering is off.")
    page.locator("#id_thing").select_option("entity:person:sarah")
    page.locator("#profile-remembering button:has-text('Forget…')").click()
    page.wait_for_selector("#forget-confirm")
    assert "That is 2 things" in page.locator("#forget-confirm").inner_text()
    assert Memory.objects.filter(person=peggy).count() == 2  # asking forgets nothing
    page.locator("#forget-confirm").scroll_into_view_if_needed()
    assert violations(page) == []
    shoot(page, f"profile-forget-{size}")
    page.locator("#forget-confirm button:has-text('Yes, forget it')").click()
    page.wait_for_selector(
        "#profile-remembering >> text=Clara has forgotten everything about Sarah"
    )
    assert not Memory.objects.filter(person=peggy).exists()
    peggy.refresh_from_db()
    assert peggy.memory_enabled is False
    assert page.errors == []
    page.context.close()


@pytest.mark.parametrize("size", SIZES)
def test_a_team_admin_invites_to_two_teams_and_the_audit_filters(
    browser, live_server, home, size, shoot, smtp_server
):
    peggy, arthur = home["people"][:2]
    # alice runs these care teams but is not the organisation's admin here.
    OrganisationMembership.objects.filter(user=home["alice"]).update(is_admin=False)
    page = log_in(browser, live_server, SIZES[size])
    page.click("text=Invite someone to the care teams you run")
    page.fill("#id_email", "new.carer@family.example")
    page.check(f"input[name=people][value='{peggy.id}']")
    page.check(f"input[name=people][value='{arthur.id}']")
    assert page.locator("#id_role").input_value() == "family"  # the least right first
    assert violations(page) == []
    page.click("button:has-text('Send the invitation')")
    page.wait_for_selector(".messages >> text=Invitation sent to new.carer@family.example")
    assert "Peggy" in page.locator("table.list").inner_text()
    assert "Arthur" in page.locator("table.list").inner_text()
    shoot(page, f"invite-teams-{size}")
    # The organisation's admin reads the audit, narrowed to one person and one kind.
    OrganisationMembership.objects.filter(user=home["alice"]).update(is_admin=True)
    slug = peggy.organisation.slug
    page.goto(f"{live_server.url}/organisations/{slug}/audit/")
    page.select_option("#id_person", str(arthur.id))
    page.select_option("#id_kind", "dashboard:invitation_sent")
    page.click("form.filters button")
    page.wait_for_url("**/audit/?**")
    rows = page.locator("table.list tbody tr")
    assert rows.count() == 1
    assert "sent an invitation" in rows.first.inner_text()
    assert violations(page) == []
    shoot(page, f"audit-filter-{size}")
    assert page.errors == []
    page.context.close()
