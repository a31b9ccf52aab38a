"""One audit rule for every admin page that shows a person's data (issue 30, step 4).

Every model registered in the admin that holds a person's data (a person, or a row with a foreign
key to one) is walked from the admin site's registry: an operator opening its list, and one of
its rows, writes an audit row naming the person and the operator. A model registered later
without the rule (or without a row in the fixture below) fails here.
"""

import json
from datetime import timedelta

import pytest
from django.contrib import admin
from django.utils import timezone

from memory.admin.base import holds_person_data
from memory.models import (
    AccessEvent,
    ApiKey,
    CheckIn,
    Commitment,
    DetectedEmotion,
    Organisation,
    Person,
    Persona,
    PersonTrend,
    RollingSummary,
    Session,
    SummarySpine,
)
from tests.memory.test_admin_organisations import _organisation, _url
from tests.support.otp import verified_client

pytestmark = pytest.mark.django_db

# What the fixture's people said and what the summaries quote: never in an audit row.
WORDS = ("fell", "calling", "Alma", "Bruno", "garden", "quoted")


def _person_pages() -> list:
    return [model for model in admin.site._registry if holds_person_data(model)]


def _computed_rows(person: Person) -> None:
    """The rows the jobs write about a person, so every page has something to show."""
    now = timezone.now()
    RollingSummary.objects.create(
        person=person, text=f"{person.display_name} quoted: I fell", updated_at=now
    )
    SummarySpine.objects.create(
        person=person, version=1, content={"s": "quoted"}, message_count=2, created_at=now
    )
    PersonTrend.objects.create(person=person, day=now.date(), data={}, computed_at=now)
    Commitment.objects.create(
        person=person, kind="plan", text="I will call my daughter", created_at=now
    )
    CheckIn.objects.create(
        person=person,
        persona="buddy",
        slot="09:00",
        decided_at=now - timedelta(hours=1),
        outcome="suppressed",
        reason="night",
    )


@pytest.fixture
def orgs(db):
    made = _organisation("sunrise-care", "Alma"), _organisation("river-homes", "Bruno")
    for org in made:
        _computed_rows(org["person"])
    return made


@pytest.fixture
def operator(orgs):
    """Staff of organisation A with every permission of the memory and dashboard apps."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.db.models import Q

    from memory.models import OrganisationMembership

    user = get_user_model().objects.create_user("olga", password="x", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(Q(content_type__app_label__in=["memory", "dashboard"]))
    )
    OrganisationMembership.objects.create(user=user, organisation=orgs[0]["org"])
    return user


@pytest.fixture
def operator_client(operator):
    return verified_client(operator)


def _ids() -> set:
    return set(AccessEvent.objects.values_list("id", flat=True))


def _new_rows(before: set) -> list[AccessEvent]:
    return list(AccessEvent.objects.exclude(id__in=before).order_by("at"))


def _no_words(rows) -> None:
    dump = json.dumps([{k: str(v) for k, v in vars(r).items()} for r in rows])
    for word in WORDS:
        assert word not in dump, word


def _row_of(model, person: Person):
    """A row of `model` about `person`."""
    if model is Person:
        return person
    for field in model._meta.concrete_fields:
        if field.many_to_one and field.related_model is Person:
            return model.objects.filter(**{field.name: person}).order_by("pk").first()
    for field in model._meta.concrete_fields:
        if field.many_to_one and field.related_model is Session:
            return model.objects.filter(**{f"{field.name}__person": person}).order_by("pk").first()
    return None


def test_the_pages_the_issue_names_hold_a_persons_data():
    pages = set(_person_pages())
    from dashboard.models import CareTeamMembership
    from memory.models import Alert, Narrative

    for model in (RollingSummary, Commitment, Person, Narrative, Alert, CareTeamMembership):
        assert model in pages, model
    # Pages about no one are not audited as a person's data.
    for model in (Organisation, ApiKey, Persona):
        assert model not in pages, model


@pytest.mark.parametrize("model", _person_pages(), ids=lambda m: m.__name__)
def test_an_operator_opening_a_list_of_a_persons_data_is_audited(model, orgs, operator_client):
    a = orgs[0]
    assert _row_of(model, a["person"]) is not None, f"add a row of {model.__name__} to the fixture"
    before = _ids()
    assert operator_client.get(_url(model, "changelist")).status_code == 200
    rows = _new_rows(before)
    assert rows, f"{model.__name__}: its list shows a person's data and wrote no audit row"
    assert {(r.organisation_id, r.person_id) for r in rows} >= {(a["org"].pk, a["person"].id)}
    # Organisation A's operator: only A's people are shown, so only A's audit has the rows.
    assert {r.organisation_id for r in rows} == {a["org"].pk}
    for row in rows:
        assert (row.channel, row.actor, row.outcome) == ("admin", "user:olga", "allowed")
        assert row.user.username == "olga"
        assert row.action in ("admin_read", "admin_messages")
    _no_words(rows)


@pytest.mark.parametrize("model", _person_pages(), ids=lambda m: m.__name__)
def test_an_operator_opening_a_row_of_a_persons_data_is_audited(model, orgs, operator_client):
    a = orgs[0]
    obj = _row_of(model, a["person"])
    assert obj is not None, f"add a row of {model.__name__} to the fixture"
    before = _ids()
    assert operator_client.get(_url(model, "change", obj.pk)).status_code == 200
    (row,) = _new_rows(before)
    assert (row.channel, row.actor, row.outcome) == ("admin", "user:olga", "allowed")
    assert (row.organisation_id, row.person_id) == (a["org"].pk, a["person"].id)
    assert row.object_id in (str(obj.pk), f"{model._meta.model_name}:{obj.pk}")
    _no_words([row])


@pytest.mark.parametrize("model", _person_pages(), ids=lambda m: m.__name__)
def test_a_rows_history_and_delete_confirmation_are_audited(model, orgs, operator_client):
    # Both show the row's name (the person's, for most): one row each, allowed or refused
    # (pages whose rows are never deleted here answer 403).
    a = orgs[0]
    obj = _row_of(model, a["person"])
    for view, statuses in (("history", {200}), ("delete", {200, 403})):
        before = _ids()
        assert operator_client.get(_url(model, view, obj.pk)).status_code in statuses
        (row,) = _new_rows(before)
        assert row.outcome in ("allowed", "refused"), view
        assert (row.organisation_id, row.person_id) == (a["org"].pk, a["person"].id)


@pytest.mark.parametrize("model", _person_pages(), ids=lambda m: m.__name__)
def test_another_organisations_row_is_audited_as_not_found(model, orgs, operator_client):
    theirs = _row_of(model, orgs[1]["person"])
    before = _ids()
    assert operator_client.get(_url(model, "change", theirs.pk)).status_code == 302
    (row,) = _new_rows(before)
    # Nothing of organisation B in A's audit, nor in B's: an attempt that found nothing.
    assert (row.outcome, row.organisation_id, row.person_id) == ("not_found", None, None)


def test_the_profile_summaries_commitments_alerts_and_care_teams_say_what_was_read(
    orgs, operator_client
):
    from dashboard.models import CareTeamMembership
    from memory.models import Alert, Narrative

    a = orgs[0]
    before = _ids()
    for model in (Person, RollingSummary, Commitment, Narrative, Alert, CareTeamMembership):
        obj = _row_of(model, a["person"])
        operator_client.get(_url(model, "change", obj.pk))
    rows = _new_rows(before)
    assert [r.object_id.split(":")[0] for r in rows] == [
        "person",
        "rollingsummary",
        "commitment",
        "narrative",
        "alert",
        "careteammembership",
    ]
    assert {r.action for r in rows} == {"admin_read"}


def test_a_page_with_a_persons_name_but_not_their_words_is_a_read(orgs, operator_client):
    a = orgs[0]
    emotion = DetectedEmotion.objects.filter(person=a["person"]).first()
    before = _ids()
    operator_client.get(_url(DetectedEmotion, "change", emotion.pk))
    operator_client.get(_url(Session, "changelist"))
    rows = _new_rows(before)
    assert [(r.action, r.object_id) for r in rows] == [
        ("admin_read", f"detectedemotion:{emotion.pk}"),
        ("admin_read", "session"),
    ]


def test_the_shared_story_library_and_pages_about_no_one_are_not_audited(
    orgs, operator_client, admin_client
):
    from memory.models import Narrative

    library = Narrative.objects.create(
        id="library-story", title="The sea", category="reminiscence", text="Waves."
    )
    before = _ids()
    assert admin_client.get(_url(Narrative, "change", library.pk)).status_code == 200
    for model in (Organisation, ApiKey, Persona):
        assert operator_client.get(_url(model, "changelist")).status_code == 200
    assert _ids() == before


def test_a_list_costs_the_same_few_queries_however_many_people_it_shows(
    orgs, operator_client, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as few:
        operator_client.get(_url(Commitment, "changelist"))
    person = orgs[0]["person"]
    for index in range(5):
        other = Person.objects.create(
            display_name=f"P{index}",
            organisation_id=person.organisation_id,
            created_at=timezone.now(),
            last_active_at=timezone.now(),
        )
        _computed_rows(other)
    with django_assert_max_num_queries(len(few.captured_queries)):
        operator_client.get(_url(Commitment, "changelist"))
