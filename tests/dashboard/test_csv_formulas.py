"""The dashboard's CSV of what Clara remembers keeps formulas as text (OWASP CSV injection):
what a family member types into the profile reaches the team admin's spreadsheet as text."""

import csv
import io

import pytest
from django.urls import reverse

from memory.models import Memory
from tests.memory.test_csv_formulas import PAYLOADS, formula_like

pytestmark = pytest.mark.django_db


def test_what_family_type_into_the_profile_comes_back_from_the_csv_as_text(
    alice_client, bob_client, person
):
    url = reverse("dashboard:profile_section", args=[person.id, "routines"])
    for payload in PAYLOADS:
        assert bob_client.post(url, {"routine": payload}).status_code == 302
    people = reverse("dashboard:profile_section", args=[person.id, "people"])
    someone = {"name": "@SUM(1+1)", "relation": '=HYPERLINK("http://evil.example")', "note": ""}
    assert bob_client.post(people, someone).status_code == 302
    # The form strips the whitespace around what is typed: the formula itself is what remains.
    typed = {payload.strip() for payload in PAYLOADS}
    stored = set(
        Memory.objects.filter(person=person, type="routine").values_list("content", flat=True)
    )
    assert stored == typed

    response = alice_client.get(reverse("dashboard:export_csv", args=[person.id]))
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    contents = {row["content"] for row in rows}
    assert {"'" + text for text in typed} <= contents
    assert any(c.startswith("'@SUM(1+1) is") for c in contents)
    for row in rows:
        assert not any(formula_like(value) for value in row.values()), row
