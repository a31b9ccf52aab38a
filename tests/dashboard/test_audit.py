"""An organisation's audit on the dashboard (issue 14, item 4): its admins read who looked at
what, through the dashboard, the API, MCP or the admin; no one else does, and no organisation
sees another's."""

import uuid

import pytest
from django.test import Client
from django.urls import reverse

from dashboard import selectors
from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from memory.conversations import audit, services, tenancy
from memory.models import AccessEvent, Memory
from tests.dashboard.conftest import client_for, login, make_person

pytestmark = pytest.mark.django_db


@pytest.fixture
def default_org(person):
    return person.organisation


@pytest.fixture
def boss(default_org):
    """The default organisation's admin (not in any care team)."""
    return login("boss", default_org, admin=True)


@pytest.fixture
def other_org(db):
    return tenancy.organisation_get_or_create("riverside-care", name="Riverside Care")


def _audit_url(org) -> str:
    return reverse("dashboard:organisation_audit", args=[org.slug])


def test_the_admin_reads_dashboard_api_and_admin_rows_of_the_organisation(
    boss, default_org, alice_client, person, session, other_org
):
    alice_client.get(reverse("dashboard:person", args=[person.id]))
    key, raw = services.api_key_create(name="bot", organisation_id=default_org.pk)
    response = Client().get(
        f"/api/v1/sessions/{session.id}/messages", headers={"Authorization": f"Bearer {raw}"}
    )
    assert response.status_code == 200
    audit.record(
        organisation_id=default_org.pk,
        channel="admin",
        actor="user:root",
        action="admin_messages",
        outcome="allowed",
        person_id=person.id,
    )
    # Another organisation's row: never on this page.
    audit.record(
        organisation_id=other_org.pk,
        channel="api",
        actor="key:0ther0rg",
        action="export_json",
        outcome="allowed",
    )
    page = client_for(boss).get(_audit_url(default_org))
    assert page.status_code == 200
    content = page.content.decode()
    assert "alice" in content and "opened the person&#x27;s page" in content
    assert f"API key {key.prefix}" in content and "read a conversation&#x27;s messages" in content
    assert "operator root" in content and "read messages in the admin" in content
    assert "Peggy (Nana)" in content
    assert "0ther0rg" not in content and "exported everything" not in content
    # Never what was said.
    assert "Where am I" not in content and "fell" not in content


def test_the_people_list_links_the_audit_for_its_admins_only(boss, alice_client, default_org):
    assert _audit_url(default_org).encode() in client_for(boss).get("/").content
    assert _audit_url(default_org).encode() not in alice_client.get("/").content


def test_a_member_who_is_not_its_admin_gets_403(alice_client, default_org):
    assert alice_client.get(_audit_url(default_org)).status_code == 403


def test_a_login_of_another_organisation_gets_404_as_for_an_unknown_one(other_org, default_org):
    outsider = client_for(login("olga", other_org, admin=True))
    assert outsider.get(_audit_url(default_org)).status_code == 404
    assert outsider.get(reverse("dashboard:organisation_audit", args=["nowhere"])).status_code == (
        404
    )
    assert outsider.get(_audit_url(other_org)).status_code == 200


def test_anonymous_is_sent_to_log_in(default_org):
    response = Client().get(_audit_url(default_org))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("dashboard:login"))


def test_an_erasure_stays_in_the_organisations_audit(boss, alice_client, person, default_org):
    alice_client.post(reverse("dashboard:erase", args=[person.id]), {"confirm_name": "Nana"})
    row = AuditEvent.objects.get(action="erase")
    assert (row.person_id, row.organisation_id) == (None, default_org.pk)
    content = client_for(boss).get(_audit_url(default_org)).content.decode()
    assert "erased the person" in content


def test_forgetting_on_the_dashboard_is_audited_as_forgetting(alice_client, person, memory):
    url = reverse("dashboard:memory_action", args=[person.id, memory.id, "forget"])
    assert alice_client.post(url).status_code == 302
    assert not Memory.objects.filter(id=memory.id).exists()
    row = AuditEvent.objects.order_by("-id").first()
    assert (row.action, row.object_id, row.person_id) == (
        "forget_memory",
        str(memory.id),
        person.id,
    )


def test_a_caregiver_of_another_organisation_leaves_rows_in_that_one_only(
    other_org, default_org, boss
):
    ivy = make_person("Ivy", organisation=other_org)
    carer = login("olga", other_org)
    CareTeamMembership.objects.create(user=carer, person=ivy, role=CareRole.ADMIN)
    client_for(carer).get(reverse("dashboard:person", args=[ivy.id]))
    rows, _ = selectors.organisation_audit(organisation=default_org)
    assert [row.who for row in rows] == []
    rows, _ = selectors.organisation_audit(organisation=other_org)
    assert [(row.who, row.person.id) for row in rows] == [("olga", ivy.id)]


def test_the_audit_pages_newest_first_across_both_tables(alice, person, default_org):
    for n in range(5):
        AuditEvent.objects.create(
            username=f"carer{n}", organisation=default_org, person=person, action="view_person"
        )
        AccessEvent.objects.create(
            organisation=default_org,
            channel="api",
            actor=f"key:k{n}",
            action="export_json",
            outcome="allowed",
        )
    first, more = selectors.organisation_audit(organisation=default_org, page=1, per_page=4)
    second, _ = selectors.organisation_audit(organisation=default_org, page=2, per_page=4)
    third, last_more = selectors.organisation_audit(organisation=default_org, page=3, per_page=4)
    rows = first + second + third
    assert more and not last_more
    assert len(rows) == 10
    assert [row.at for row in rows] == sorted((row.at for row in rows), reverse=True)
    assert {row.who for row in rows} == {f"carer{n}" for n in range(5)} | {
        f"API key k{n}" for n in range(5)
    }


def test_the_audit_names_people_not_logins(boss, default_org, alice, person):
    """A login with a name is shown by its name; an operator too (the login stays on the row)."""
    from django.contrib.auth import get_user_model

    alice.first_name, alice.last_name = "Alice", "Lee"
    alice.save()
    get_user_model().objects.create_user("root", first_name="Rita", last_name="Okoye")
    client_for(alice).get(reverse("dashboard:person", args=[person.id]))
    audit.record(
        organisation_id=default_org.pk,
        channel="admin",
        actor="user:root",
        action="admin_messages",
        outcome="allowed",
        person_id=person.id,
    )
    content = client_for(boss).get(_audit_url(default_org)).content.decode()
    assert "<td>Alice Lee</td>" in content and "<td>alice</td>" not in content
    assert "operator Rita Okoye" in content and "operator root" not in content


# --- Filters (issue 32) ---------------------------------------------------------------------


def _table(response) -> str:
    content = response.content.decode()
    if "<tbody>" not in content:
        assert "Nothing recorded that matches." in content
        return ""
    return content[content.index("<tbody>") : content.index("</tbody>")]


@pytest.fixture
def mixed_rows(boss, default_org, alice, bob, person, other_person):
    """alice and bob on the dashboard about Peggy, alice about Arthur, an API key about Peggy."""
    from dashboard.access import audit_record

    for user, someone, action in (
        (alice, person, "view_person"),
        (bob, person, "view_emotions"),
        (alice, other_person, "view_profile"),
    ):
        audit_record(user=user, person_id=someone.id, action=action, organisation_id=default_org.pk)
    audit.record(
        organisation_id=default_org.pk,
        channel="api",
        actor="key:abcd1234",
        action="export_json",
        outcome="allowed",
        person_id=person.id,
    )
    return client_for(boss)


def test_the_audit_filters_by_person_login_and_kind(mixed_rows, default_org, person):
    url = _audit_url(default_org)
    by_person = _table(mixed_rows.get(url, {"person": str(person.id)}))
    assert "Peggy (Nana)" in by_person and "Arthur" not in by_person
    assert "API key abcd1234" in by_person  # both sources
    by_login = _table(mixed_rows.get(url, {"login": "ALICE"}))
    assert "alice" in by_login and "bob" not in by_login and "API key" not in by_login
    by_key = _table(mixed_rows.get(url, {"login": "abcd1234"}))
    assert "API key abcd1234" in by_key and "alice" not in by_key
    by_kind = _table(mixed_rows.get(url, {"kind": "dashboard:view_emotions"}))
    assert "bob" in by_kind and "alice" not in by_kind and "API key" not in by_kind
    api_kind = _table(mixed_rows.get(url, {"kind": "api:export_json"}))
    assert "API key abcd1234" in api_kind and "bob" not in api_kind


def test_the_audit_filters_by_day(mixed_rows, default_org):
    from datetime import date, timedelta

    today = date.today()
    url = _audit_url(default_org)
    assert "alice" in _table(mixed_rows.get(url, {"from": today.isoformat()}))
    past = (today - timedelta(days=3)).isoformat()
    assert "alice" not in _table(mixed_rows.get(url, {"from": past, "to": past}))


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"person": "not-an-id"}, "person"),
        ({"kind": "dashboard:nothing"}, "kind"),
        ({"from": "2026-13-01"}, "from"),
        ({"from": "2026-05-02", "to": "2026-05-01"}, "to"),
        ({"login": "x" * 161}, "login"),
    ],
)
def test_a_bad_filter_is_a_400_naming_it(boss, default_org, params, field):
    response = client_for(boss).get(_audit_url(default_org), params)
    assert response.status_code == 400
    assert response.content.decode().startswith(f"{field}:")


def test_another_organisations_person_is_refused_like_an_unknown_id(boss, default_org, other_org):
    elsewhere = make_person("Zed", organisation=other_org)
    theirs = client_for(boss).get(_audit_url(default_org), {"person": str(elsewhere.id)})
    unknown = client_for(boss).get(_audit_url(default_org), {"person": str(uuid.uuid4())})
    assert theirs.status_code == unknown.status_code == 400
    assert theirs.content == unknown.content


def test_the_person_choice_lists_everyone_of_the_organisation_by_name_read_as_values(
    mixed_rows, default_org, person, other_person, other_org
):
    # A care group has thousands of people: their names are read as three columns, not as
    # whole people built and checked one by one.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    make_person("Zed Elsewhere", organisation=other_org)
    with CaptureQueriesContext(connection) as queries:
        content = mixed_rows.get(_audit_url(default_org)).content.decode()
    choice = content[content.index('name="person"') :]
    choice = choice[: choice.index("</select>")]
    assert choice.index("Arthur") < choice.index("Peggy (Nana)")
    assert f'<option value="{person.id}"' in choice and "Zed" not in choice
    reads = [q["sql"] for q in queries.captured_queries if 'FROM "people"' in q["sql"]]
    assert any(
        sql.startswith('SELECT "people"."id" AS "id", "people"."display_name" AS "display_name", ')
        and ' AS "caregiver_context" FROM "people"' in sql
        for sql in reads
    )
