"""create_demo_caregivers: the demo logins `make run` prints."""

import base64
import io
import re

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command
from django.test import Client, RequestFactory
from django.urls import reverse
from django_otp.oath import totp

from dashboard.models import CareTeamMembership
from memory.conversations import tenancy
from memory.models import OrganisationMembership
from tests.dashboard.conftest import client_for, make_person

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command("create_demo_caregivers", *args, stdout=out)
    return out.getvalue()


def test_demo_is_admin_of_everyone_and_family_may_not_read_conversations(person, other_person):
    output = run("--force", "--password", "pw-for-the-demo")
    assert "demo / pw-for-the-demo" in output and "family / pw-for-the-demo" in output
    demo = CareTeamMembership.objects.filter(user__username="demo")
    family = CareTeamMembership.objects.filter(user__username="family")
    assert {(m.person_id, m.role, m.can_see_transcripts) for m in demo} == {
        (person.id, "admin", True),
        (other_person.id, "admin", True),
    }
    assert {(m.role, m.can_see_transcripts) for m in family} == {("family", False)}
    request = RequestFactory().post("/login/")
    assert authenticate(request, username="demo", password="pw-for-the-demo") is not None


def test_demo_logins_have_people_s_names(person):
    """Pages name people, never logins: the demo's logins have full names."""
    from django.contrib.auth import get_user_model

    run("--force", "--password", "pw-for-the-demo")
    users = get_user_model().objects.filter(username__in=["demo", "family", "orgadmin"])
    names = {u.username: u.get_full_name() for u in users}
    assert names == {"demo": "Sam Taylor", "family": "Claire Morgan", "orgadmin": "Priya Shah"}


def test_running_it_again_resets_the_password_and_adds_nothing(person):
    run("--force", "--password", "first-password")
    output = run("--force")
    new_password = output.split("demo / ")[1].split()[0]
    assert new_password != "first-password"
    assert CareTeamMembership.objects.count() == 3
    request = RequestFactory().post("/login/")
    assert authenticate(request, username="demo", password=new_password) is not None


def test_refuses_without_debug(settings, person):
    settings.DEBUG = False
    with pytest.raises(CommandError):
        run()
    assert not CareTeamMembership.objects.exists()


def test_demo_logins_belong_to_the_default_organisation_and_see_only_its_people(
    person, other_person
):
    elsewhere = make_person("Ivy", organisation=tenancy.organisation_get_or_create("riverside"))
    run("--force", "--password", "pw-for-the-demo")
    memberships = {
        (m.user.username, m.organisation.slug, m.is_admin)
        for m in OrganisationMembership.objects.select_related("user", "organisation")
    }
    assert memberships == {
        ("demo", "default", False),
        ("family", "default", False),
        ("orgadmin", "default", True),
    }
    assert not CareTeamMembership.objects.filter(person=elsewhere).exists()
    demo = client_for(CareTeamMembership.objects.filter(user__username="demo").first().user)
    content = demo.get("/").content.decode()
    assert "Peggy (Nana)" in content and "Ivy" not in content
    # The audit is the organisation admin's, who passes a second factor first.
    assert demo.get("/organisations/default/audit/").status_code == 403
    orgadmin = CareTeamMembership.objects.filter(user__username="orgadmin").first().user
    assert client_for(orgadmin).get("/organisations/default/audit/").status_code == 200


def test_the_organisation_admin_logs_in_with_the_printed_authenticator_key(person):
    output = run("--force", "--password", "pw-for-the-demo")
    key = re.search(r"orgadmin / \S+.*\n\s+second step: authenticator key (\w+)", output).group(1)
    client = Client()
    response = client.post("/login/", {"username": "orgadmin", "password": "pw-for-the-demo"})
    assert response.status_code == 302
    # Nothing but the second step until the code is given.
    assert client.get("/").url.startswith(reverse("dashboard:two_factor"))
    code = f"{totp(base64.b32decode(key + '=' * (-len(key) % 8))):06d}"
    response = client.post(reverse("dashboard:two_factor"), {"token": code, "next": "/"})
    assert response.status_code == 302 and response.url == "/"
    assert client.get("/organisations/default/audit/").status_code == 200
    # `family` needs no second step: in with the password alone.
    family = Client()
    family.post("/login/", {"username": "family", "password": "pw-for-the-demo"})
    assert family.get("/").status_code == 200


def test_the_team_admin_logs_in_with_its_printed_authenticator_key(person):
    # `demo` exports and erases the demo's people: a team admin passes a second factor too.
    output = run("--force", "--password", "pw-for-the-demo")
    key = re.search(r"demo / \S+.*\n\s+second step: authenticator key (\w+)", output).group(1)
    client = Client()
    client.post("/login/", {"username": "demo", "password": "pw-for-the-demo"})
    assert client.get("/").url.startswith(reverse("dashboard:two_factor"))
    code = f"{totp(base64.b32decode(key + '=' * (-len(key) % 8))):06d}"
    response = client.post(reverse("dashboard:two_factor"), {"token": code, "next": "/"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_a_fresh_demo_shows_no_time_zone_warning(db):
    """What a new user sees first: the demo's people have their zone, so no yellow UTC notice
    on the staff page or the family page."""
    from memory.models import Person

    call_command("load_demo", "--people", "1", "--days", "1", stdout=io.StringIO())
    run("--force", "--password", "pw-for-the-demo")
    person = Person.objects.get()
    for username in ("demo", "family"):
        user = CareTeamMembership.objects.get(user__username=username).user
        page = client_for(user).get(f"/people/{person.id}/")
        assert page.status_code == 200
        assert 'id="zone-notice"' not in page.content.decode(), username
