"""Every dashboard page that reads a query parameter answers crafted values with a 4xx or the
page, never a 500; an absurd page number is a 400 naming `page`, after the access check."""

import pytest
from django.test import Client
from django.urls import reverse

from tests.dashboard.conftest import client_for, login
from tests.support.otp import verified_client

HX = {"HX-Request": "true"}
# What a pasted or tampered link may carry.
CRAFTED = [
    "9223372036854775807",
    "99999999999999999999999",
    "-1",
    "0",
    "1e3",
    "NaN",
    "abc",
    "%ED%A0%80",
    "\x00",
    "x" * 5000,
]
PAGES_WITH_PARAMETERS = [
    ("dashboard:person_sessions", "page"),
    ("dashboard:person_emotions", "days"),
    ("dashboard:profile", "edit"),
]


@pytest.fixture
def admin_client(person):
    return client_for(login("boss", person.organisation, admin=True))


@pytest.mark.parametrize(("name", "parameter"), PAGES_WITH_PARAMETERS)
@pytest.mark.parametrize("value", CRAFTED)
def test_a_crafted_query_parameter_is_never_a_server_error(alice, person, name, parameter, value):
    client = client_for(alice)
    client.raise_request_exception = False
    url = reverse(name, args=[person.id])
    for headers in ({}, HX):
        response = client.get(url, {parameter: value}, headers=headers)
        assert response.status_code in (200, 400), (name, value, response.status_code)


@pytest.mark.parametrize("value", CRAFTED)
def test_a_crafted_audit_page_is_never_a_server_error(admin_client, person, value):
    admin_client.raise_request_exception = False
    url = reverse("dashboard:organisation_audit", args=[person.organisation.slug])
    assert admin_client.get(url, {"page": value}).status_code in (200, 400)


@pytest.mark.parametrize("page", ["9223372036854775807", "10001", "0", "-1", "abc", "1.5"])
def test_an_absurd_page_of_conversations_is_a_400_naming_page(alice_client, person, page):
    url = reverse("dashboard:person_sessions", args=[person.id])
    response = alice_client.get(url, {"page": page}, headers=HX)
    assert response.status_code == 400
    assert response.content.decode().startswith("page: must be a whole number from 1 to 10000")


def test_an_absurd_audit_page_is_a_400_naming_page(admin_client, person):
    url = reverse("dashboard:organisation_audit", args=[person.organisation.slug])
    response = admin_client.get(url, {"page": "9223372036854775807"})
    assert response.status_code == 400
    assert response.content.decode().startswith("page: ")


def test_a_page_past_the_end_within_bounds_is_empty_not_an_error(alice_client, person):
    url = reverse("dashboard:person_sessions", args=[person.id])
    assert alice_client.get(url, {"page": "10000"}, headers=HX).status_code == 200
    assert alice_client.get(url, {"page": ""}, headers=HX).status_code == 200


def test_an_outsider_gets_404_whatever_the_page(charlie_client, person):
    # Access is checked before the parameter: a bad page never tells an outsider the person exists.
    url = reverse("dashboard:person_sessions", args=[person.id])
    assert charlie_client.get(url, {"page": "9223372036854775807"}).status_code == 404


@pytest.mark.parametrize("length", ["abc", "-1", "1e3"])
def test_a_malformed_content_length_on_a_form_is_a_400(alice, person, length):
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    verified_client(alice, client)  # a team admin: passed the second factor
    url = reverse("dashboard:profile_section", args=[person.id, "name"])
    response = client.post(url, {"preferred_name": "Peg"}, CONTENT_LENGTH=length)
    assert response.status_code == 400
    assert b"Content-Length" in response.content
