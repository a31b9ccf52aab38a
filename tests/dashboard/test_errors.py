"""The dashboard's own 403, 404 and 500 pages, with DEBUG on (as under `make run`) and off."""

import pytest
from django.test import Client
from django.urls import reverse

from tests.support.otp import verified_client

pytestmark = pytest.mark.django_db


@pytest.fixture(params=[True, False], ids=["debug", "production"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


def test_an_unknown_address_gets_the_dashboards_404_without_the_url_list(debug, alice_client):
    response = alice_client.get("/no/such/page/")
    assert response.status_code == 404
    content = response.content.decode()
    assert '<h1 id="error-title">Not found</h1>' in content
    assert "dashboard.css" in content  # the dashboard's own page, in its style
    assert "api/v1/" not in content and "URLconf" not in content


def test_an_unknown_address_still_gets_its_trailing_slash(alice_client):
    response = alice_client.get("/login")
    assert response.status_code == 301 and response["Location"] == "/login/"


def test_another_organisations_person_reads_exactly_as_an_unknown_one(
    debug, alice_client, other_person
):
    import uuid

    theirs = alice_client.get(reverse("dashboard:person", args=[other_person.id]))
    unknown = alice_client.get(reverse("dashboard:person", args=[uuid.uuid4()]))
    assert theirs.status_code == unknown.status_code == 404
    assert b"Not found" in theirs.content

    def page(response) -> str:  # the same page, but for the per-request CSRF token
        import re

        return re.sub(r'(value="|"x-csrftoken": ")[^"]{64}"', "", response.content.decode())

    assert page(theirs) == page(unknown)


def test_a_member_without_the_right_gets_the_dashboards_403(debug, bob_client, person):
    response = bob_client.get(reverse("dashboard:team", args=[person.id]))
    assert response.status_code == 403
    content = response.content.decode()
    assert "You can&#x27;t open this" in content and "dashboard.css" in content
    assert "403 Forbidden" not in content


def test_a_failed_csrf_check_gets_the_dashboards_403(person, alice):
    client = verified_client(alice, Client(enforce_csrf_checks=True))  # a team admin: passed it
    response = client.post(reverse("dashboard:team_add", args=[person.id]), {"username": "x"})
    assert response.status_code == 403
    assert b"You can&#x27;t open this" in response.content


def test_an_unexpected_error_gets_the_dashboards_500_and_is_still_raised_to_tests(
    debug, alice_client, monkeypatch
):
    from dashboard import views

    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(views.selectors, "people_rows_for_user", broken)
    with pytest.raises(RuntimeError):  # the test client re-raises what Django would log
        alice_client.get(reverse("dashboard:people"))
    alice_client.raise_request_exception = False
    response = alice_client.get(reverse("dashboard:people"))
    assert response.status_code == 500
    content = response.content.decode()
    assert "Something went wrong" in content and "a bug" not in content
    assert "Traceback" not in content


def test_the_api_keeps_its_json_errors(debug, client):
    response = client.get("/api/v1/no-such-endpoint")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] in ("not_found", "http_404") or "detail" in response.json()


def test_the_favicon_is_served(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
    assert b"favicon.svg" in client.get(reverse("dashboard:login")).content
