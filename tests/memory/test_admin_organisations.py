"""The admin by organisation (issue 14, item 5), and the audit of operators reading messages (item 4).

ann is staff of organisation A (not a superuser) with every permission of the memory and
dashboard apps: she must see none of organisation B's people, sessions, messages, memories,
alerts, keys, personas or logins, in lists, searches, object pages, actions or the choices of a
foreign key. The superuser sees both.
"""

import json
import uuid

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db.models import Q
from django.urls import reverse

from dashboard.access import audit_record
from dashboard.models import AuditEvent, CareRole, CareTeamMembership
from dashboard.second_factor.services import recovery_codes_issue
from memory.admin.base import OrganisationScopedAdmin
from memory.companion import checkins, continuity
from memory.conversations import audit, homes, services, tenancy
from memory.conversations.emotion import EmotionReading
from memory.facts import store
from memory.models import (
    AccessEvent,
    Alert,
    ApiKey,
    ChatMessage,
    DetectedEmotion,
    Home,
    Memory,
    Narrative,
    Organisation,
    OrganisationMembership,
    Person,
    Persona,
    RepetitionRecord,
    Session,
    Unit,
)
from tests.support.otp import totp_device, verified_client

pytestmark = pytest.mark.django_db

User = get_user_model()
FELL = "I fell and I can't get up, help me"


def _organisation(slug: str, name: str) -> dict:
    """An organisation whose person talked (an escalation: an alert), with memories, a key, a
    persona, check-in settings, a caregiver in the care team and rows in both audits."""
    org = tenancy.organisation_get_or_create(slug)
    session, _ = services.session_resolve(
        session_id=uuid.uuid4(), user_id=uuid.uuid4(), display_name=name, organisation_id=org.pk
    )
    services.exchange_record(
        session_id=session.id,
        user_message=FELL,
        assistant_message=f"I'm calling someone now, {name}.",
        emotion=EmotionReading("fearful", 0.9, 0.9, "escalating"),
        narrative=services.NarrativeRef("garden-walk", "seed", "calming_story"),
        organisation_id=org.pk,
    )
    person = Person.objects.get(id=session.person_id)
    store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        key="cat",
        content=f"{name}'s cat",
        embed=False,
    )
    store.memory_upsert(namespace=("org", str(org.pk), "agent"), key="k", content="x", embed=False)
    key, _ = services.api_key_create(name=f"{slug} bot", organisation_id=org.pk)
    continuity.persona_policy_set(
        slug="buddy", policy="dementia_safe", display_name="Buddy", organisation_id=org.pk
    )
    checkins.checkin_settings_update(
        person_id=person.id, enabled=True, times=["09:00"], night_start=22, night_end=7
    )
    Narrative.objects.create(
        id=f"story-{slug}",
        title=f"{name}'s garden",
        category="reminiscence",
        text="…",
        person=person,
    )
    # Its home, with a unit where the person lives (memory/admin/homes.py).
    unit = homes.unit_add(home=homes.home_add(organisation=org, name="Rose House"), name="Wing A")
    homes.person_move(person=person, unit=unit)
    carer = User.objects.create_user(f"carer-{slug}", password="x")
    OrganisationMembership.objects.create(user=carer, organisation=org)
    CareTeamMembership.objects.create(user=carer, person=person, role=CareRole.ADMIN)
    audit_record(user=carer, person_id=person.id, action="view_person", organisation_id=org.pk)
    # The carer's second factor (its admin pages list a login's devices, never their secrets).
    totp_device(carer)
    recovery_codes_issue(user=carer)
    audit.record(
        organisation_id=org.pk,
        channel="api",
        actor=f"key:{key.prefix}",
        action="read_messages",
        outcome="allowed",
        person_id=person.id,
    )
    return {"org": org, "person": person, "session": session, "key": key, "carer": carer}


@pytest.fixture
def orgs(db):
    return _organisation("sunrise-care", "Alma"), _organisation("river-homes", "Bruno")


@pytest.fixture
def ann(orgs):
    """Staff of organisation A with every permission of the memory and dashboard apps."""
    user = User.objects.create_user("ann", password="x", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            Q(content_type__app_label__in=["memory", "dashboard"])
            | Q(content_type__app_label="auth", codename="view_user")
        )
    )
    OrganisationMembership.objects.create(user=user, organisation=orgs[0]["org"])
    return user


@pytest.fixture
def ann_client(ann):
    # Staff pass the second factor before any admin page (tests/dashboard/test_two_factor.py).
    return verified_client(ann)


def _of(model, org: Organisation):
    """The rows of `model` that belong to `org` (what the scope must keep or cut)."""
    if model is Organisation:
        return model.objects.filter(pk=org.pk)
    if model is User:
        return model.objects.filter(organisation_memberships__organisation=org)
    if model is Memory:
        return model.objects.filter(
            Q(person__organisation=org) | Q(namespace__startswith=f"org\x1f{org.pk}")
        )
    if model is Narrative:
        return model.objects.filter(person__organisation=org)
    if model is Alert:
        return model.objects.filter(Q(person__organisation=org) | Q(session__organisation=org))
    for path in (
        "organisation",
        "home__organisation",  # a home's unit
        "session__organisation",
        "person__organisation",
        "webhook__organisation",
        "user__organisation_memberships__organisation",  # a login's second factor
    ):
        try:
            return model.objects.filter(**{path: org})
        except Exception:  # noqa: S112 - the model has no such path: try the next
            continue
    raise AssertionError(f"no way from {model.__name__} to its organisation")


def _scoped_pages():
    return [
        model
        for model in admin.site._registry
        if model._meta.app_label in ("memory", "dashboard") or model is User
    ]


def _url(model, view: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def test_every_memory_and_dashboard_admin_page_uses_the_organisation_scope():
    pages = _scoped_pages()
    assert len(pages) >= 20
    for model in pages:
        assert isinstance(admin.site._registry[model], OrganisationScopedAdmin), model


def test_what_organisation_b_owns_is_in_the_database(orgs):
    # So the tests below prove something: each kind the issue names exists for B.
    org_b = orgs[1]["org"]
    for model in (Person, Session, ChatMessage, Memory, Alert, ApiKey, Persona, Home, Unit):
        assert _of(model, org_b).exists(), model


@pytest.mark.parametrize("model", _scoped_pages(), ids=lambda m: m.__name__)
def test_staff_of_one_organisation_see_none_of_anothers_rows(model, orgs, ann_client):
    a, b = orgs[0]["org"], orgs[1]["org"]
    # Taken before the page: opening a list of the audit writes audit rows of its own.
    mine = set(_of(model, a).values_list("pk", flat=True))
    response = ann_client.get(_url(model, "changelist"))
    assert response.status_code == 200
    shown = {obj.pk for obj in response.context["cl"].result_list}
    theirs = set(_of(model, b).values_list("pk", flat=True))
    assert not shown & theirs
    assert mine <= shown | {None}
    for pk in list(theirs)[:3]:
        page = ann_client.get(_url(model, "change", pk))
        # Django answers a row outside the queryset as a missing one.
        assert page.status_code == 302 and page["Location"] == reverse("admin:index"), model


@pytest.mark.parametrize("model", _scoped_pages(), ids=lambda m: m.__name__)
def test_a_superuser_sees_every_organisations_rows(model, orgs, admin_client):
    expected = [set(_of(model, o["org"]).values_list("pk", flat=True)) for o in orgs]
    response = admin_client.get(_url(model, "changelist"), {"all": ""})
    shown = {obj.pk for obj in response.context["cl"].result_list}
    for rows in expected:
        assert rows <= shown, model


def test_searching_finds_nothing_of_another_organisation(orgs, ann_client, admin_client):
    bruno = orgs[1]["person"]
    for model, q in [
        (Person, "Bruno"),
        (Person, str(bruno.id)),
        (Session, str(bruno.id)),
        (ChatMessage, str(orgs[1]["session"].id)),
        (Alert, str(bruno.id)),
        (ApiKey, orgs[1]["key"].prefix),
        (User, "carer-river-homes"),
    ]:
        assert ann_client.get(_url(model, "changelist"), {"q": q}).context["cl"].result_count == 0
        assert admin_client.get(_url(model, "changelist"), {"q": q}).context["cl"].result_count
    assert ann_client.get(_url(Person, "changelist"), {"q": "Alma"}).context["cl"].result_count


def test_foreign_key_choices_offer_only_the_staffs_organisation(orgs, ann_client):
    a, b = orgs
    url = _url(CareTeamMembership, "add")
    # Another organisation's person (typed into the raw-id box) is not a valid choice.
    response = ann_client.post(
        url, {"user": a["carer"].pk, "person": b["person"].pk, "role": "family"}
    )
    assert response.status_code == 200
    assert "person" in response.context["adminform"].form.errors
    # Nor another organisation's login.
    response = ann_client.post(
        url, {"user": b["carer"].pk, "person": a["person"].pk, "role": "family"}
    )
    assert "user" in response.context["adminform"].form.errors
    # Nor another organisation, for a login's membership.
    form = ann_client.get(_url(OrganisationMembership, "add")).context["adminform"].form
    assert list(form.fields["organisation"].queryset) == [a["org"]]
    assert not CareTeamMembership.objects.filter(person=b["person"], user=a["carer"]).exists()


def test_a_care_team_takes_only_logins_of_the_persons_organisation(orgs, admin_client):
    a, b = orgs
    response = admin_client.post(
        _url(CareTeamMembership, "add"),
        {"user": b["carer"].pk, "person": a["person"].pk, "role": "family"},
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["user"] == [
        "This login is not in the person's organisation."
    ]


def test_actions_reach_only_the_staffs_rows(orgs, ann_client):
    a, b = orgs
    response = ann_client.post(
        _url(ApiKey, "changelist"),
        {"action": "revoke_keys", "_selected_action": [a["key"].pk, b["key"].pk]},
    )
    assert response.status_code == 302
    assert ApiKey.objects.get(pk=a["key"].pk).revoked_at is not None
    assert ApiKey.objects.get(pk=b["key"].pk).revoked_at is None


def test_api_keys_are_listed_with_organisation_scopes_and_expiry(orgs, admin_client):
    key, _ = services.api_key_create(
        name="vendor", organisation_id=orgs[1]["org"].pk, scopes=["turns", "memories:read"]
    )
    page = admin_client.get(_url(ApiKey, "changelist")).content.decode()
    for header in ("organisation", "scopes", "expires at"):
        assert header in page.lower()
    assert "turns, memories:read" in page
    assert "River Homes" in page


def test_superusers_create_and_edit_organisations_and_staff_cannot(orgs, admin_client, ann_client):
    data = {"slug": "hill-house", "name": "Hill House", "contact_email": "duty@hill.example"}
    assert admin_client.post(_url(Organisation, "add"), data).status_code == 302
    hill = Organisation.objects.get(slug="hill-house")
    assert (hill.name, hill.contact_email) == ("Hill House", "duty@hill.example")
    assert (hill.transcript_retention_days, hill.inactive_after_days) == (365, 90)
    data["contact_email"] = "night@hill.example"
    data |= {"transcript_retention_days": "180", "inactive_after_days": "60"}
    assert admin_client.post(_url(Organisation, "change", hill.pk), data).status_code == 302
    hill = Organisation.objects.get(pk=hill.pk)
    assert hill.contact_email == "night@hill.example"
    assert (hill.transcript_retention_days, hill.inactive_after_days) == (180, 60)

    a = orgs[0]["org"]
    assert ann_client.get(_url(Organisation, "add")).status_code == 403
    response = ann_client.post(
        _url(Organisation, "change", a.pk), {"slug": "x", "name": "x", "contact_email": ""}
    )
    assert response.status_code == 403
    assert Organisation.objects.get(pk=a.pk).slug == "sunrise-care"


def test_staff_may_not_change_the_shared_story_library(orgs, ann_client):
    library = Narrative.objects.create(
        id="library-story", title="The sea", category="reminiscence", text="Waves."
    )
    response = ann_client.post(
        _url(Narrative, "change", library.pk),
        {"title": "Changed", "category": "reminiscence", "length": "short", "text": "x"},
    )
    assert response.status_code == 403
    assert Narrative.objects.get(pk=library.pk).title == "The sea"


# --- Operators reading what a person said are audited ------------------------------------------


def _new_rows(before: set) -> list[AccessEvent]:
    return list(AccessEvent.objects.exclude(id__in=before).order_by("at"))


def _ids() -> set:
    return set(AccessEvent.objects.values_list("id", flat=True))


def _no_text() -> None:
    dump = json.dumps(list(AccessEvent.objects.values()), default=str)
    assert "fell" not in dump and "calling" not in dump and "Alma" not in dump


@pytest.mark.parametrize(
    "model",
    [ChatMessage, Session, RepetitionRecord],
    ids=lambda m: m.__name__,
)
def test_an_object_page_showing_messages_writes_one_row(model, orgs, admin_client):
    a = orgs[0]
    obj = model.objects.filter(person=a["person"]).first() if model is not Session else a["session"]
    before = _ids()
    assert admin_client.get(_url(model, "change", obj.pk)).status_code == 200
    (row,) = _new_rows(before)
    assert (row.channel, row.actor, row.action, row.outcome) == (
        "admin",
        "user:admin",
        "admin_messages",
        "allowed",
    )
    assert (row.organisation_id, row.person_id, row.object_id) == (
        a["org"].pk,
        a["person"].id,
        str(obj.pk),
    )
    assert row.user.username == "admin"
    _no_text()


@pytest.mark.parametrize(
    "model", [ChatMessage, DetectedEmotion, RepetitionRecord], ids=lambda m: m.__name__
)
def test_a_list_showing_messages_writes_one_row_per_person_shown(model, orgs, admin_client):
    before = _ids()
    assert admin_client.get(_url(model, "changelist")).status_code == 200
    rows = _new_rows(before)
    assert {(r.organisation_id, r.person_id) for r in rows} == {
        (o["org"].pk, o["person"].id) for o in orgs
    }
    assert len(rows) == 2
    assert {(r.action, r.outcome) for r in rows} == {("admin_messages", "allowed")}
    _no_text()


# Pages of a person's data without their words (lists of people, summaries, ...) are audited
# as reads: tests/memory/test_admin_audit.py walks every such page.


def test_staff_opening_another_organisations_message_is_audited_as_not_found(orgs, ann_client):
    message = ChatMessage.objects.filter(person=orgs[1]["person"]).first()
    before = _ids()
    assert ann_client.get(_url(ChatMessage, "change", message.pk)).status_code == 302
    (row,) = _new_rows(before)
    assert (row.actor, row.outcome, row.organisation_id, row.person_id) == (
        "user:ann",
        "not_found",
        None,
        None,
    )


def test_staff_without_the_permission_are_audited_as_refused(orgs, ann, ann_client):
    ann.user_permissions.remove(*Permission.objects.filter(codename__endswith="chatmessage"))
    message = ChatMessage.objects.filter(person=orgs[0]["person"]).first()
    before = _ids()
    assert ann_client.get(_url(ChatMessage, "change", message.pk)).status_code == 403
    (row,) = _new_rows(before)
    assert (row.outcome, row.person_id, row.organisation_id) == (
        "refused",
        orgs[0]["person"].id,
        orgs[0]["org"].pk,
    )


def test_the_dashboards_audit_rows_carry_their_organisation(orgs):
    assert set(AuditEvent.objects.values_list("organisation_id", flat=True)) == {
        o["org"].pk for o in orgs
    }


def test_staff_cannot_learn_whether_another_organisations_story_id_exists(orgs, ann_client):
    """Issue 30: a typed id answered "already exists" for B's story and not for an unknown one.
    Staff no longer choose ids (made by code); B's story is answered as an unknown id."""
    theirs = Narrative.objects.get(person=orgs[1]["person"])
    form = {
        "title": "Alma's tea",
        "category": "reminiscence",
        "length": "short",
        "text": "Tea at four.",
        "target_emotions": "[]",
        "question_types": "[]",
        "theme_tags": "[]",
        "person": str(orgs[0]["person"].pk),
        "active": "on",
    }
    answers = []
    for typed in (theirs.pk, "no-such-story"):
        response = ann_client.post(_url(Narrative, "add"), {**form, "id": typed})
        assert response.status_code == 302, getattr(response, "context", None)
        answers.append(response["Location"].split("/change/")[0].rsplit("/", 1)[0])
    assert answers[0] == answers[1]
    made = [
        story
        for story in Narrative.objects.filter(person=orgs[0]["person"])
        if story.title == "Alma's tea"
    ]
    assert len(made) == 2
    assert all(uuid.UUID(story.pk).version == 7 for story in made)
    assert Narrative.objects.get(pk=theirs.pk).title == "Bruno's garden"  # untouched

    # Its change page answers as an unknown id's does.
    foreign = ann_client.get(_url(Narrative, "change", theirs.pk))
    unknown = ann_client.get(_url(Narrative, "change", "no-such-story"))
    assert foreign.status_code == unknown.status_code == 302
    assert foreign["Location"] == unknown["Location"]


def test_the_story_search_finds_library_titles_and_no_encrypted_story(orgs, ann_client):
    Narrative.objects.create(
        id="library-sea", title="The sea at Tenby", category="grounding", text="Waves."
    )
    response = ann_client.get(_url(Narrative, "changelist"), {"q": "sea at tenby"})
    assert response.status_code == 200
    assert [obj.pk for obj in response.context["cl"].result_list] == ["library-sea"]
    # A person's story is ciphertext in its column: its title cannot match in SQL (no 500).
    response = ann_client.get(_url(Narrative, "changelist"), {"q": "Alma's garden"})
    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == []
