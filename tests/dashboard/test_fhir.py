"""The FHIR R4 export: every bundle validates with `fhir.resources`, its figures are the clinician
report's for the same period, no word the person said is in it, and it is scoped, audited and
refuses bad dates like the export beside it."""

from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from fhir.resources.R4B.bundle import Bundle
from fhir.resources.R4B.codesystem import CodeSystem
from fhir.resources.R4B.communication import Communication
from fhir.resources.R4B.documentreference import DocumentReference
from fhir.resources.R4B.flag import Flag
from fhir.resources.R4B.observation import Observation
from fhir.resources.R4B.patient import Patient

from dashboard import words
from dashboard.alerting import ladder, report, respond
from memory.conversations import services, tenancy
from memory.core.person import person_zone
from memory.models import AccessEvent, Alert
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

RESOURCES = {
    "Patient": Patient,
    "Observation": Observation,
    "Flag": Flag,
    "Communication": Communication,
    "DocumentReference": DocumentReference,
}
# What the person said in the fixture's conversations (tests/dashboard/conftest.py), beside
# "Where am I?", which is also the label of that kind of question.
THEIR_WORDS = ("Is this my home", "That is lovely", "Sarah", "can't get up", "I fell")


@pytest.fixture
def export_api(person):
    _, raw = services.api_key_create(
        name="care record", organisation_id=person.organisation_id, scopes=["export"]
    )
    return ApiClient(raw)


@pytest.fixture
def handled_alert(alice, alert):
    """The fall alert e-mailed to alice (the team's admin), who claimed it."""
    alice.email = "alice@care.example"
    alice.save()
    ladder.alert_deliver(alert_id=alert.id)
    respond.alert_claim_by(alert=alert, user=alice, via="dashboard")
    return Alert.objects.get(id=alert.id)


def _validated(body: dict) -> dict[str, list[dict]]:
    """The bundle validated whole and resource by resource; its resources by type."""
    Bundle.model_validate(body)
    by_type: dict[str, list[dict]] = {}
    for entry in body["entry"]:
        resource = entry["resource"]
        RESOURCES[resource["resourceType"]].model_validate(resource)
        assert entry["fullUrl"] == f"urn:uuid:{resource['id']}"
        by_type.setdefault(resource["resourceType"], []).append(resource)
    return by_type


def _code(resource: dict) -> str:
    return resource["code"]["coding"][0]["code"]


def test_the_bundle_validates_and_holds_each_kind_of_resource(export_api, person, handled_alert):
    response = export_api.get(f"/api/v1/people/{person.id}/fhir")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["resourceType"] == "Bundle" and body["type"] == "collection"
    found = _validated(body)

    (patient,) = found["Patient"]
    assert patient["identifier"][0]["value"] == str(person.id)
    assert patient["name"] == [{"text": "Nana"}, {"use": "usual", "text": "Peggy"}]
    assert set(patient) == {"resourceType", "id", "identifier", "active", "name"}
    (flag,) = found["Flag"]
    assert flag["status"] == "active" and _code(flag) == "fall"
    assert flag["identifier"][0]["value"] == str(handled_alert.id)
    kinds = {c["category"][0]["coding"][1]["code"] for c in found["Communication"]}
    assert {"sent", "claimed"} <= kinds
    sent = next(
        c for c in found["Communication"] if c["category"][0]["coding"][1]["code"] == "sent"
    )
    assert sent["recipient"][0]["display"] == "alice"
    assert "payload" not in sent
    (document,) = found["DocumentReference"]
    attachment = document["content"][0]["attachment"]
    assert attachment["contentType"] == "application/pdf"
    first, last = _period(person)
    assert attachment["url"].endswith(f"/people/{person.id}/report.pdf?from={first}&to={last}")
    assert {_code(o) for o in found["Observation"]} == {
        "upset-score-weekly",
        "conversations-weekly",
        "repeated-questions",
    }


def _period(person) -> tuple[str, str]:
    today = timezone.now().astimezone(person_zone(person)).date()
    return (today - timedelta(days=29)).isoformat(), today.isoformat()


def test_the_figures_are_the_clinician_reports_for_the_same_period(export_api, person):
    first, last = (timezone.now() - timedelta(days=20)).date(), timezone.now().date()
    response = export_api.get(
        f"/api/v1/people/{person.id}/fhir", **{"from": first.isoformat(), "to": last.isoformat()}
    )
    found = _validated(response.json())
    pdf = report.report_context(
        person=person, period=report.Period(start=first, end=last), now=timezone.now()
    )

    upset = [o for o in found["Observation"] if _code(o) == "upset-score-weekly"]
    conversations = [o for o in found["Observation"] if _code(o) == "conversations-weekly"]
    assert [o.get("valueQuantity", {}).get("value") for o in upset] == [
        w["upset"] for w in pdf["mood"]
    ]
    assert [o["valueInteger"] for o in conversations] == [w["conversations"] for w in pdf["mood"]]
    assert [o["effectivePeriod"]["start"][:10] for o in upset] == [
        w["start"].isoformat() for w in pdf["mood"]
    ]
    assert any(w["upset"] is not None for w in pdf["mood"])  # the check compares real figures
    (questions,) = [o for o in found["Observation"] if _code(o) == "repeated-questions"]
    assert [
        (c["code"]["coding"][0]["display"], c["valueInteger"]) for c in questions["component"]
    ] == [(q["kind"], q["times"]) for q in pdf["questions"]]
    assert questions["valueInteger"] == sum(q["times"] for q in pdf["questions"]) > 0


def test_a_week_without_readings_says_why_it_has_no_value(export_api, person):
    old = (timezone.now() - timedelta(days=120)).date()
    response = export_api.get(
        f"/api/v1/people/{person.id}/fhir",
        **{"from": old.isoformat(), "to": (old + timedelta(days=6)).isoformat()},
    )
    found = _validated(response.json())
    upset = [o for o in found["Observation"] if _code(o) == "upset-score-weekly"]
    assert upset and all("valueQuantity" not in o and o["dataAbsentReason"] for o in upset)
    assert "Flag" not in found  # the fall was raised after this period


def test_an_alert_raised_before_the_period_and_still_open_is_a_flag(export_api, person, alert):
    Alert.objects.filter(id=alert.id).update(created_at=timezone.now() - timedelta(days=10))
    first = (timezone.now() - timedelta(days=3)).date()
    response = export_api.get(f"/api/v1/people/{person.id}/fhir", **{"from": first.isoformat()})
    found = _validated(response.json())
    assert [f["identifier"][0]["value"] for f in found["Flag"]] == [str(alert.id)]
    assert "Communication" not in found  # its e-mails belong to the period it was raised in


def test_no_word_the_person_said_is_in_it(export_api, person, handled_alert):
    text = export_api.get(f"/api/v1/people/{person.id}/fhir").content.decode()
    assert all(words_ not in text for words_ in THEIR_WORDS)
    assert words.alert_headline(handled_alert.kind, handled_alert.detail) in text


def test_a_resolved_alert_is_no_flag_and_its_outcome_is_a_communication(
    export_api, person, alice, handled_alert
):
    respond.alert_resolve_by(alert=handled_alert, user=alice, outcome="well", via="dashboard")
    found = _validated(export_api.get(f"/api/v1/people/{person.id}/fhir").json())
    assert "Flag" not in found
    (resolved,) = [
        c for c in found["Communication"] if c["category"][0]["coding"][1]["code"] == "resolved"
    ]
    assert resolved["topic"]["coding"][0]["code"] == "well"
    assert resolved["sender"]["display"] == "alice"


def test_ids_are_stable_across_exports(export_api, person):
    first = export_api.get(f"/api/v1/people/{person.id}/fhir").json()
    again = export_api.get(f"/api/v1/people/{person.id}/fhir").json()
    assert [e["fullUrl"] for e in first["entry"]] == [e["fullUrl"] for e in again["entry"]]


def test_it_is_audited_as_an_export(export_api, person):
    export_api.get(f"/api/v1/people/{person.id}/fhir")
    (row,) = AccessEvent.objects.filter(action="export_fhir")
    assert row.person_id == person.id and row.outcome == "allowed"
    assert row.organisation_id == person.organisation_id


def test_another_organisations_person_answers_like_an_unknown_one(person):
    elsewhere = tenancy.organisation_get_or_create("elsewhere")
    _, raw = services.api_key_create(name="other", organisation_id=elsewhere.pk, scopes=["export"])
    theirs = ApiClient(raw).get(f"/api/v1/people/{person.id}/fhir")
    never = ApiClient(raw).get("/api/v1/people/00000000-0000-0000-0000-000000000000/fhir")
    assert theirs.status_code == never.status_code == 404
    assert theirs.json() == never.json()


def test_a_key_without_the_export_scope_gets_403(person):
    _, raw = services.api_key_create(
        name="bot", organisation_id=person.organisation_id, scopes=["turns"]
    )
    response = ApiClient(raw).get(f"/api/v1/people/{person.id}/fhir")
    assert response.status_code == 403 and response.json()["field"] == "export"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "2026-13-01"}, "from"),
        ({"to": "yesterday"}, "to"),
        ({"from": "2026-05-02", "to": "2026-05-01"}, "from"),
        ({"from": "2024-01-01", "to": "2026-01-01"}, "from"),  # more than 366 days
        ({"to": "9999-12-31"}, "to"),  # a day at date's end overflowed once a day was added
        ({"from": "0001-01-01", "to": "0001-01-31"}, "to"),  # and at its start
    ],
)
def test_bad_dates_are_a_4xx_naming_the_field(export_api, person, params, field):
    response = export_api.get(f"/api/v1/people/{person.id}/fhir", **params)
    assert response.status_code == 422 and response.json()["field"] == field
    assert not AccessEvent.objects.filter(action="export_fhir").exists()


def test_every_clara_code_in_a_bundle_is_in_the_code_system_served_at_its_url(
    export_api, person, alice, handled_alert, client
):
    respond.alert_resolve_by(alert=handled_alert, user=alice, outcome="well", via="dashboard")
    body = export_api.get(f"/api/v1/people/{person.id}/fhir").json()
    served = {}
    used = 0
    for coding in _codings(body):
        if "/fhir/CodeSystem/" not in coding["system"]:
            continue
        path = urlsplit(coding["system"]).path
        if path not in served:
            response = client.get(path)  # no login: the codes are about no one
            assert response.status_code == 200 and response["Content-Type"].startswith(
                "application/fhir+json"
            )
            served[path] = response.json()
            CodeSystem.model_validate(served[path])
            assert served[path]["url"] == coding["system"]
        concepts = {c["code"]: c["display"] for c in served[path]["concept"]}
        assert concepts[coding["code"]] == coding["display"], coding
        used += 1
    assert used >= 8 and len(served) == 6
    assert client.get("/fhir/CodeSystem/nothing-here").status_code == 404


def _codings(node):
    if isinstance(node, dict):
        if "system" in node and "code" in node:
            yield node
        for value in node.values():
            yield from _codings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _codings(value)
