"""Three actors, as in healthchecks' tests: alice (the person's team admin, may read full
conversations), bob (family in the same team, may not) and charlie (an outsider: in the team
of someone else). The person has real conversations stored through the memory's services.

All three are logins of the default organisation, where the person is; tests of several
organisations make their own (`login`, `make_person(organisation=...)`)."""

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from dashboard.models import CareRole, CareTeamMembership
from memory.conversations import services, tenancy
from memory.conversations.emotion import EmotionReading
from memory.facts import store
from memory.models import Alert, Memory, Organisation, OrganisationMembership, Person, Session

PASSWORD = "a-long-test-password"


def reading(distress: float, emotion: str = "anxious") -> EmotionReading:
    return EmotionReading(
        emotion=emotion, confidence=0.8, distress_score=distress, trajectory="stable"
    )


def make_person(
    name: str, context: dict | None = None, *, organisation: Organisation | None = None
) -> Person:
    person_id = uuid.uuid4()
    services.session_resolve(
        user_id=person_id,
        display_name=name,
        at=timezone.now() - timedelta(days=3),
        organisation_id=organisation.pk if organisation else None,
    )
    person = Person.objects.get(id=person_id)
    person.caregiver_context = context or {}
    person.save()
    return person


def converse(person: Person, at, exchanges, *, story_at: int | None = None) -> Session:
    """One closed conversation; `exchanges` is a list of (what the person said, distress, emotion)."""
    session, _ = services.session_resolve(
        user_id=person.id, at=at, organisation_id=person.organisation_id
    )
    for index, (message, distress, emotion) in enumerate(exchanges):
        narrative = None
        if story_at == index:
            narrative = services.NarrativeRef("garden-walk", "seed", "calming_story")
        services.exchange_record(
            session_id=session.id,
            user_message=message,
            assistant_message="I'm here with you, you are safe.",
            emotion=reading(distress, emotion),
            narrative=narrative,
            at=at + timedelta(minutes=index),
            organisation_id=person.organisation_id,
        )
    services.session_close(session_id=session.id, at=at + timedelta(minutes=len(exchanges)))
    return Session.objects.get(id=session.id)


@pytest.fixture
def person(db):
    person = make_person(
        "Nana",
        {"preferredName": "Peggy", "pronouns": "she/her", "timezone": "Europe/London"},
    )
    now = timezone.now()
    converse(
        person,
        now - timedelta(days=2, hours=3),
        [
            ("Where am I?", 0.6, "confused"),
            ("Where am I?", 0.7, "anxious"),
            ("Is this my home?", 0.5, "confused"),
            ("That is lovely", 0.2, "calm"),
        ],
        story_at=1,
    )
    converse(
        person,
        now - timedelta(hours=2),
        [
            ("When is Sarah coming?", 0.5, "anxious"),
            ("I fell and I can't get up, help me", 0.9, "fearful"),
            ("When is Sarah coming?", 0.4, "anxious"),
        ],
    )
    return person


@pytest.fixture
def other_person(db):
    return make_person("Grandad", {"preferredName": "Arthur"})


@pytest.fixture
def session(person):
    return Session.objects.filter(person=person).order_by("-created_at").first()


@pytest.fixture
def memory(person):
    """Something Clara heard in a conversation: not confirmed yet."""
    return store.memory_upsert(
        namespace=store.person_namespace(person.id, "people"),
        content="Sarah is Peggy's daughter.",
        type="people",
        memory_key="people|person:sarah|relationship",
        source=Memory.Source.CONVERSATION_EXTRACTION,
        embed=False,
    ).memory


@pytest.fixture
def alert(person):
    return Alert.objects.get(person=person, kind=Alert.Kind.ESCALATION)


def login(username: str, *organisations: Organisation, admin: bool = False):
    """A login belonging to these organisations (the default one without any)."""
    user = get_user_model().objects.create_user(username, password=PASSWORD, first_name=username)
    for organisation in organisations or (tenancy.organisation_get_or_create(),):
        OrganisationMembership.objects.create(user=user, organisation=organisation, is_admin=admin)
    return user


def _user(username: str):
    return login(username)


@pytest.fixture
def alice(person):
    user = _user("alice")
    CareTeamMembership.objects.create(
        user=user, person=person, role=CareRole.ADMIN, can_see_transcripts=True
    )
    return user


@pytest.fixture
def bob(person):
    user = _user("bob")
    CareTeamMembership.objects.create(
        user=user, person=person, role=CareRole.FAMILY, can_see_transcripts=False
    )
    return user


@pytest.fixture
def charlie(other_person):
    user = _user("charlie")
    CareTeamMembership.objects.create(
        user=user, person=other_person, role=CareRole.ADMIN, can_see_transcripts=True
    )
    return user


def client_for(user) -> Client:
    """A logged-in client; a login that must pass the second factor (an organisation admin) has
    passed it (tests/dashboard/test_two_factor.py tests what happens before)."""
    from dashboard.two_factor import required_for
    from tests.support.otp import verified_client

    if required_for(user):
        return verified_client(user)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice_client(alice):
    return client_for(alice)


@pytest.fixture
def bob_client(bob):
    return client_for(bob)


@pytest.fixture
def charlie_client(charlie):
    return client_for(charlie)
