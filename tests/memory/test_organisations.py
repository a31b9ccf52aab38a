"""Organisations: one deployment, many care organisations, and none sees another's people.

The main test drives every operation of the OpenAPI document and every MCP tool with a key of a
second organisation against the first one's ids, and checks three things: no 2xx for anything
addressed by the first organisation's ids, none of its data in any answer, and all of its data
unchanged afterwards.
"""

import hashlib
import json
import uuid

import pytest
from django.core.management import call_command

from clara.api import api as ninja_api
from memory.companion import checkins, continuity
from memory.companion import tools as agent_tools
from memory.conversations import services, tenancy
from memory.conversations.models import Scope
from memory.core.errors import DomainError, InsufficientScope, NotFound
from memory.facts import store
from memory.models import (
    ApiKey,
    ChatMessage,
    CheckInSettings,
    Memory,
    Organisation,
    Person,
    Persona,
    Session,
)
from memory.webhooks import services as webhook_services
from memory.webhooks.models import Webhook
from tests.support.bot import Bot

pytestmark = pytest.mark.django_db

SECRET_WORDS = "Marigold lives at Beech House with her cat Tibbles"


@pytest.fixture
def first():
    """Organisation A with a person who talked, has memories, a persona and check-ins."""
    org = tenancy.organisation_get_or_create("sunrise-care")
    _, raw = services.api_key_create(name="A", organisation_id=org.pk)
    session, _ = services.session_resolve(
        session_id=uuid.uuid4(),
        user_id=uuid.uuid4(),
        display_name="Marigold",
        organisation_id=org.pk,
    )
    services.exchange_record(
        session_id=session.id,
        user_message=SECRET_WORDS,
        assistant_message="Tibbles sounds lovely, Marigold.",
        organisation_id=org.pk,
    )
    person = session.person
    facts_ns = store.person_namespace(person.id, "people")
    store.memory_upsert(namespace=facts_ns, key="cat", content="Her cat is called Tibbles.")
    store.memory_upsert(
        namespace=("org", str(org.pk), "agent", "notes"), key="home", content="Beech House"
    )
    continuity.persona_policy_set(
        slug="buddy",
        policy="dementia_safe",
        display_name="Marigold's Buddy",
        organisation_id=org.pk,
    )
    checkins.checkin_settings_update(
        person_id=person.id, enabled=True, times=["09:00"], night_start=22, night_end=7
    )
    webhook_services.webhook_create(
        organisation_id=org.pk, url="https://sunrise.example/hook", events=["alert.raised"]
    )
    memory_id = Memory.objects.filter(person=person).first().id
    return {
        "org": org,
        "raw": raw,
        "person": person,
        "session": session,
        "facts_ns": facts_ns,
        "memory_id": memory_id,
    }


@pytest.fixture
def second():
    org = tenancy.organisation_get_or_create("other-care")
    _, raw = services.api_key_create(name="B", organisation_id=org.pk)
    return {"org": org, "bot": Bot(raw), "caller": tenancy.Caller(organisation_id=org.pk)}


def _snapshot(first) -> str:
    """Everything stored for organisation A, as one hash."""
    org = first["org"]
    rows = [
        list(Person.objects.filter(organisation=org).values()),
        list(Session.objects.filter(organisation=org).values()),
        list(ChatMessage.objects.filter(person__organisation=org).values("id", "content")),
        list(Memory.objects.filter(person__organisation=org).values("id", "content", "status")),
        list(Memory.objects.filter(scope__contains=str(org.pk)).values("id", "content")),
        list(Persona.objects.filter(organisation=org).values()),
        list(CheckInSettings.objects.filter(person__organisation=org).values()),
        list(ApiKey.objects.filter(organisation=org).values("id", "revoked_at", "scopes")),
        list(Webhook.objects.filter(organisation=org).values("id", "url", "events")),
    ]
    return hashlib.sha256(json.dumps(rows, default=str, sort_keys=True).encode()).hexdigest()


def _their_data(first) -> list[str]:
    return [
        str(first["person"].id),
        str(first["session"].id),
        str(first["org"].pk),
        "Marigold",
        "Tibbles",
        "Beech House",
    ]


def _operations():
    schema = ninja_api.get_openapi_schema()
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation["operationId"]


def _first_webhook(first):
    return (
        Webhook.objects.filter(organisation=first["org"])
        .order_by("created_at")
        .values_list("id", flat=True)[0]
    )


def _request_for(path: str, method: str, first) -> tuple[str, dict | None, dict | None]:
    """The path (with A's ids), a body and query parameters a bot could send."""
    person_id, session_id = str(first["person"].id), str(first["session"].id)
    filled = (
        path.replace("{session_id}", session_id)
        .replace("{person_id}", person_id)
        .replace("{check_in_id}", str(uuid.uuid4()))
        .replace("{turn_id}", str(uuid.uuid4()))
        .replace("{memory_id}", str(first["memory_id"]))
        .replace("{slug}", "buddy")
        .replace("{name}", "search_memory")
        .replace("{webhook_id}", str(_first_webhook(first)))
    )
    facts_ns = list(first["facts_ns"])
    bodies = {
        "/api/v1/sessions": {"session_id": session_id, "user_id": person_id},
        "/api/v1/sessions/{session_id}/query": {"message": "Where is Tibbles?"},
        "/api/v1/sessions/{session_id}/context": {"message": "Where is Tibbles?"},
        "/api/v1/sessions/{session_id}/exchanges": {
            "user_message": "Hello",
            "assistant_message": "Hello there.",
        },
        "/api/v1/sessions/{session_id}/close": {},
        "/api/v1/sessions/{session_id}/turns": {"message": "Hello", "client_key": "k1"},
        "/api/v1/sessions/{session_id}/turns/next": {},
        "/api/v1/sessions/{session_id}/turns/{turn_id}/complete": {"assistant_message": "Hi."},
        "/api/v1/memories": {"namespace": facts_ns, "key": "cat", "content": "Changed."},
        "/api/v1/memories/search": {"prefix": facts_ns[:2], "query": "cat"},
        "/api/v1/memories/namespaces": {"prefix": facts_ns[:2]},
        "/api/v1/people/{person_id}/memories/forget": {"entity": "person:tibbles"},
        "/api/v1/people/{person_id}/memory-settings": {"enabled": False},
        "/api/v1/people/{person_id}/persona": {"persona": "buddy"},
        "/api/v1/personas/{slug}": {"memory_policy": "dementia_safe"},
        "/api/v1/people/{person_id}/check-ins/settings": {
            "enabled": False,
            "times": [],
            "night_start": 22,
            "night_end": 7,
        },
        "/api/v1/people/{person_id}/erase": {"confirm": person_id},
        "/api/v1/tools/{name}": {"person_id": person_id, "query": "cat"},
        "/api/v1/webhooks": {"url": "https://other.example/hook", "events": ["alert.raised"]},
    }
    queries = {
        "/api/v1/memories/item": {"namespace": facts_ns, "key": "cat"},
        "/api/v1/memories/history": {"namespace": facts_ns, "key": "cat"},
    }
    body = bodies.get(path, {} if method in ("post", "put") else None)
    return filled, body, queries.get(path)


# Operations that act in the caller's own space, not on A's ids: they may succeed for B, but must
# show nothing of A and change nothing of A's.
OWN_SPACE = {
    ("put", "/api/v1/personas/{slug}"),
    ("get", "/api/v1/tools/schemas"),
    # An organisation registers and lists its own webhooks (deleting A's is a 404, checked).
    ("post", "/api/v1/webhooks"),
    ("get", "/api/v1/webhooks"),
}


def test_every_operation_with_another_organisations_key_finds_nothing_and_changes_nothing(
    first, second
):
    before = _snapshot(first)
    operations = list(_operations())
    assert len(operations) >= 30
    for path, method, operation_id in operations:
        url, body, query = _request_for(path, method, first)
        response = second["bot"].call(method, url, body, query)
        text = response.content.decode()
        for secret in _their_data(first):
            assert secret not in text, (operation_id, secret, text[:300])
        if (method, path) not in OWN_SPACE:
            assert response.status_code in (404, 409), (operation_id, response.status_code, text)
    assert _snapshot(first) == before
    # B's own persona of the same name is B's: A's is untouched.
    assert Persona.objects.get(organisation=first["org"], slug="buddy").display_name == (
        "Marigold's Buddy"
    )


def test_another_organisations_ids_answer_exactly_as_unknown_ones(first, second):
    bot = second["bot"]
    for template in (
        "/api/v1/sessions/{}",
        "/api/v1/people/{}/memories",
        "/api/v1/people/{}/export",
    ):
        known = first["session"].id if "sessions" in template else first["person"].id
        theirs = bot.call("get", template.format(known))
        unknown = bot.call("get", template.format(uuid.uuid4()))
        assert (theirs.status_code, theirs.json()) == (unknown.status_code, unknown.json())
        assert theirs.status_code == 404


def test_a_session_id_taken_by_another_organisation_is_a_conflict_and_links_nothing(first, second):
    response = second["bot"].call(
        "post", "/api/v1/sessions", {"session_id": str(first["session"].id)}
    )
    assert response.status_code == 409
    assert response.json()["field"] == "session_id"
    assert Session.objects.get(id=first["session"].id).organisation == first["org"]
    response = second["bot"].call("post", "/api/v1/sessions", {"user_id": str(first["person"].id)})
    assert response.status_code == 409
    assert response.json()["field"] == "user_id"
    assert not Session.objects.filter(organisation=second["org"]).exists()


def test_listings_and_searches_show_only_the_callers_own(first, second):
    bot = second["bot"]
    own = bot.call(
        "put",
        "/api/v1/memories",
        {"namespace": ["agent", "notes"], "key": "home", "content": "A bungalow by the sea"},
    )
    assert own.status_code == 201
    assert own.json()["memory"]["namespace"] == ["agent", "notes"]
    listed = bot.call("post", "/api/v1/memories/namespaces", {}).json()["namespaces"]
    assert listed == [["agent", "notes"]]
    found = bot.call(
        "post", "/api/v1/memories/search", {"prefix": ["agent", "notes"], "query": "house"}
    ).json()
    assert [item["memory"]["content"] for item in found["items"]] == ["A bungalow by the sea"]
    # A's own view is unchanged by B's same-named namespace.
    a_bot = Bot(first["raw"])
    a_found = a_bot.call(
        "get", "/api/v1/memories/item", query={"namespace": ["agent", "notes"], "key": "home"}
    )
    assert a_found.json()["content"] == "Beech House"
    a_listed = a_bot.call("post", "/api/v1/memories/namespaces", {}).json()["namespaces"]
    assert ["agent", "notes"] in a_listed
    assert ["memories", str(first["person"].id), "people"] in a_listed


def test_every_mcp_tool_with_another_organisations_caller_finds_nothing(first, second):
    before = _snapshot(first)
    person_id, session_id = str(first["person"].id), str(first["session"].id)
    arguments = {
        "search_memory": {
            "person_id": person_id,
            "query": "cat",
            "scope": "both",
            "session_id": session_id,
        },
        "upsert_memory": {"person_id": person_id, "content": "Changed."},
        "forget_memory": {"person_id": person_id, "entity": "person:tibbles"},
        "update_status": {"person_id": person_id, "fields": {"mood": "sad"}},
        "get_context": {"session_id": session_id, "message": "Where is Tibbles?"},
    }
    assert set(arguments) == set(agent_tools.MCP_TOOLS)
    for name, args in arguments.items():
        with pytest.raises(NotFound):
            agent_tools.call(name, args, caller=second["caller"], tools=agent_tools.MCP_TOOLS)
    assert _snapshot(first) == before


@pytest.mark.parametrize("scope", Scope.values)
def test_a_key_without_a_scope_gets_403_naming_it_wherever_the_scope_is_needed(first, scope):
    others = [value for value in Scope.values if value != scope]
    _, raw = services.api_key_create(name="narrow", organisation_id=first["org"].pk, scopes=others)
    bot = Bot(raw)
    refused = 0
    for path, method, operation_id in _operations():
        url, body, query = _request_for(path, method, first)
        response = bot.call(method, url, body, query)
        if response.status_code == 403:
            assert response.json() == {
                "detail": f"This API key lacks the '{scope}' scope.",
                "code": "insufficient_scope",
                "field": scope,
            }, operation_id
            refused += 1
    assert refused >= 1
    # And through the tools, with the same rule.
    caller = tenancy.Caller(organisation_id=first["org"].pk, scopes=frozenset(others))
    for tool in agent_tools.MCP_TOOLS.values():
        if tool.scope == scope:
            with pytest.raises(InsufficientScope):
                agent_tools.call(tool.name, {}, caller=caller, tools=agent_tools.MCP_TOOLS)


def test_a_revoked_or_expired_key_is_refused(first):
    key, raw = services.api_key_create(name="short", organisation_id=first["org"].pk)
    bot = Bot(raw)
    path = f"/api/v1/sessions/{first['session'].id}"
    assert bot.call("get", path).status_code == 200
    ApiKey.objects.filter(pk=key.pk).update(expires_at="2000-01-01T00:00:00Z")
    assert bot.call("get", path).status_code == 401
    ApiKey.objects.filter(pk=key.pk).update(expires_at=None)
    assert bot.call("get", path).status_code == 200
    services.api_key_revoke(key=ApiKey.objects.get(pk=key.pk))
    assert bot.call("get", path).status_code == 401


def test_create_api_key_names_the_organisation_scopes_and_expiry(capsys):
    call_command(
        "create_api_key", "vendor bot", "--org", "river-homes", "--scopes", "turns",
        "memories:read", "--expires", "30",
    )  # fmt: skip
    raw = capsys.readouterr().out.strip().splitlines()[-1]
    key = ApiKey.objects.get(prefix=raw.split("_")[1])
    assert key.organisation.slug == "river-homes"
    assert key.scopes == ["turns", "memories:read"]
    assert key.expires_at is not None
    call_command("create_api_key", "make run")
    raw = capsys.readouterr().out.strip().splitlines()[-1]
    key = ApiKey.objects.get(prefix=raw.split("_")[1])
    assert key.organisation.slug == "default"
    assert sorted(key.scopes) == sorted(Scope.values)


def test_a_person_in_a_new_organisation_talks_with_the_default_persona(second):
    session, _ = services.session_resolve(
        user_id=uuid.uuid4(), display_name="Ivy", organisation_id=second["org"].pk
    )
    person = continuity.person_persona_set(
        person_id=session.person_id, persona="clara", organisation_id=second["org"].pk
    )
    assert continuity.policy_of(person.id) == "dementia_safe"


def test_the_default_organisation_exists_after_migrating(db):
    assert Organisation.objects.filter(slug="default").exists()


def test_domain_errors_are_what_the_api_maps(first, second):
    with pytest.raises(DomainError):
        tenancy.session_of(second["caller"], first["session"].id)
