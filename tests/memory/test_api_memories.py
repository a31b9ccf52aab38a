"""The memory API: store operations, a person's controls, agent tools; bad input never stores."""

import json
import uuid

import pytest
from django.utils import timezone

from memory.companion import continuity
from memory.facts import store
from memory.models import Memory, Person, PersonNotes

pytestmark = pytest.mark.django_db


@pytest.fixture
def person(db):
    now = timezone.now()
    return Person.objects.create(display_name="Margaret", created_at=now, last_active_at=now)


def put(api, body):
    return api.client.put(
        "/api/v1/memories", json.dumps(body), content_type="application/json", headers=api.headers
    )


def delete(api, path, **params):
    from urllib.parse import urlencode

    return api.client.delete(f"{path}?{urlencode(params, doseq=True)}", headers=api.headers)


def test_memory_endpoints_need_a_key(anonymous_api, person):
    response = put(anonymous_api, {"namespace": ["memories", str(person.id)], "content": "x"})
    assert response.status_code == 401


def test_put_get_history_and_delete(api, person):
    ns = ["memories", str(person.id), "people"]
    created = put(
        api, {"namespace": ns, "key": "son", "content": "Her son is Tom", "type": "people"}
    )
    assert created.status_code == 201, created.json()
    assert created.json()["action"] == "created"
    assert created.json()["memory"]["namespace"] == ns
    assert created.json()["memory"]["confirmed"] is False

    changed = put(api, {"namespace": ns, "key": "son", "content": "Her son Tom lives in Glasgow"})
    assert changed.status_code == 200
    assert changed.json()["action"] == "superseded"

    got = api.get("/api/v1/memories/item", namespace=ns, key="son")
    assert got.status_code == 200
    assert got.json()["content"] == "Her son Tom lives in Glasgow"
    history = api.get("/api/v1/memories/history", namespace=ns, key="son").json()
    assert [m["status"] for m in history] == ["deprecated", "active"]

    gone = delete(api, "/api/v1/memories/item", namespace=ns, key="son")
    assert gone.json() == {"deleted": 2}
    missing = api.get("/api/v1/memories/item", namespace=ns, key="son")
    assert missing.status_code == 404
    assert missing.json()["field"] == "key"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"namespace": ["memories"], "content": "x"}, "namespace"),
        ({"namespace": ["memories", ""], "content": "x"}, "namespace"),
        ({"namespace": "memories", "content": "x"}, "namespace"),
        ({"namespace": ["a", "b"], "content": "x" * 8193}, "content"),
        ({"namespace": ["a", "b"], "content": ""}, "content"),
        ({"namespace": ["a", "b"], "content": "x", "importance": "high"}, "importance"),
        ({"namespace": ["a", "b"], "content": "x", "importance": 7}, "importance"),
        ({"namespace": ["a", "b"], "content": "x", "type": "hobby"}, "type"),
        ({"namespace": ["a", "b"], "content": "x", "entity_refs": ["John"]}, "entity_refs"),
        ({"namespace": ["a", "b"], "content": "x", "ttl_minutes": -5}, "ttl_minutes"),
        ({"namespace": ["a", "b"], "content": 5}, "content"),
    ],
)
def test_bad_input_is_a_422_naming_the_field_and_stores_nothing(api, body, field):
    response = put(api, body)
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field
    assert Memory.objects.count() == 0


def test_a_bot_cannot_confirm_or_claim_to_be_a_caregiver(api, person):
    response = put(
        api,
        {
            "namespace": ["memories", str(person.id), "people"],
            "content": "Her son is Tom",
            "source": "caregiver",
        },
    )
    assert response.status_code == 201
    memory = Memory.objects.get()
    assert memory.source == "tool"
    assert memory.confirmed is False


def test_search_and_namespaces(api, person):
    ns = ["memories", str(person.id), "people"]
    put(
        api,
        {
            "namespace": ns,
            "content": "Her daughter Sarah visits on Sundays",
            "type": "people",
            "entity_refs": ["person:sarah"],
            "importance": 2,
        },
    )
    put(
        api,
        {
            "namespace": ns,
            "content": "Sarah is a teacher in York",
            "type": "people",
            "entity_refs": ["person:sarah"],
            "importance": 2,
        },
    )
    put(
        api,
        {
            "namespace": ["memories", str(person.id), "preference"],
            "content": "Loves strong tea with two sugars",
            "type": "preference",
        },
    )
    response = api.post(
        "/api/v1/memories/search",
        {
            "prefix": ["memories", str(person.id)],
            "query": "When does her daughter come?",
            "entity_cards": True,
            "limit": 2,
        },
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["items"][0]["memory"]["content"] == "Her daughter Sarah visits on Sundays"
    assert body["entity_cards"][0].startswith("[person:sarah]: ")
    only_prefs = api.post(
        "/api/v1/memories/search",
        {"prefix": ["memories", str(person.id)], "query": "tea", "types": ["preference"]},
    ).json()
    assert [i["memory"]["type"] for i in only_prefs["items"]] == ["preference"]

    listed = api.post("/api/v1/memories/namespaces", {"prefix": ["memories"], "max_depth": 2})
    assert listed.json() == {"namespaces": [["memories", str(person.id)]]}


def test_search_bad_input(api):
    for body, field in (
        ({"prefix": ["memories"], "query": "x"}, "prefix"),
        ({"prefix": ["a", "b"], "limit": 0}, "limit"),
        ({"prefix": ["a", "b"], "types": ["hobby"]}, "types.0"),
        ({"prefix": ["a", "b"], "threshold": 3}, "threshold"),
    ):
        response = api.post("/api/v1/memories/search", body)
        assert response.status_code == 422, body
        assert response.json()["field"] == field


def test_person_controls_list_forget_disable_export_erase(api, person):
    ns = ["memories", str(person.id), "people"]
    put(
        api,
        {
            "namespace": ns,
            "content": "Her son is Tom",
            "type": "people",
            "entity_refs": ["person:tom"],
        },
    )
    put(
        api,
        {
            "namespace": ns,
            "content": "Her daughter is Sarah",
            "type": "people",
            "entity_refs": ["person:sarah"],
        },
    )
    base = f"/api/v1/people/{person.id}"
    assert len(api.get(f"{base}/memories").json()) == 2

    forgot = api.post(f"{base}/memories/forget", {"entity": "person:tom"})
    assert forgot.json() == {"deleted": 1}
    assert [m["content"] for m in api.get(f"{base}/memories").json()] == ["Her daughter is Sarah"]

    off = api.client.put(
        f"{base}/memory-settings",
        json.dumps({"enabled": False}),
        content_type="application/json",
        headers=api.headers,
    )
    assert off.json()["memory_enabled"] is False
    refused = put(api, {"namespace": ns, "content": "Likes gardening"})
    assert refused.status_code == 409
    assert refused.json()["field"] == "namespace"

    exported = api.get(f"{base}/export")
    assert exported.status_code == 200
    assert exported.json()["memories"][0]["content"] == "Her daughter is Sarah"
    csv_export = api.get(f"{base}/export", format="csv")
    assert csv_export["Content-Type"].startswith("text/csv")
    assert b"Her daughter is Sarah" in csv_export.content

    wrong = api.post(f"{base}/erase", {"confirm": str(uuid.uuid4())})
    assert wrong.status_code == 422
    assert wrong.json()["field"] == "confirm"
    assert Person.objects.filter(id=person.id).exists()
    erased = api.post(f"{base}/erase", {"confirm": str(person.id)})
    assert erased.status_code == 200
    assert not Person.objects.filter(id=person.id).exists()
    assert api.get(f"{base}/memories").status_code == 404


# --- Agent tools --------------------------------------------------------------------------------


def test_tool_schemas_in_both_formats(api):
    openai = api.get("/api/v1/tools/schemas").json()
    names = [tool["function"]["name"] for tool in openai]
    assert names == ["search_memory", "upsert_memory", "forget_memory", "update_status"]
    assert openai[0]["type"] == "function"
    assert "query" in openai[0]["function"]["parameters"]["properties"]
    anthropic = api.get("/api/v1/tools/schemas", format="anthropic").json()
    assert [tool["name"] for tool in anthropic] == names
    assert anthropic[1]["input_schema"]["required"] == ["person_id", "content"]


@pytest.mark.parametrize(("policy", "handed_out"), [("dementia_safe", False), ("continuous", True)])
def test_unconfirmed_facts_reach_the_tools_only_where_the_personas_policy_allows(
    api, person, policy, handed_out
):
    continuity.persona_policy_set(slug="companion", policy=policy, display_name="Companion")
    continuity.person_persona_set(person_id=person.id, persona="companion")
    pid = str(person.id)
    api.post(
        "/api/v1/tools/upsert_memory",
        {"person_id": pid, "content": "Her husband John sailed to Norway", "type": "people"},
    )
    facts = api.post(
        "/api/v1/tools/search_memory", {"person_id": pid, "query": "husband John"}
    ).json()["facts"]
    if handed_out:
        # Outside dementia care: there, with a note not to state it as true. (Unconfirmed sad
        # news is held back by the firewall there too: tests/memory/test_tool_firewall.py.)
        assert facts[0]["confirmed"] is False and "not confirmed" in facts[0]["note"]
    else:
        assert facts == []


def test_tools_upsert_search_forget_and_status(api, person):
    pid = str(person.id)
    stored = api.post(
        "/api/v1/tools/upsert_memory",
        {
            "person_id": pid,
            "content": "Her grandson Leo plays football",
            "type": "people",
            "entity_refs": ["person:leo"],
        },
    )
    assert stored.status_code == 200, stored.json()
    assert stored.json()["action"] == "created"

    search = {"person_id": pid, "query": "grandson football"}
    # Not confirmed by a caregiver: in dementia-safe care (the default) it is not handed out.
    found = api.post("/api/v1/tools/search_memory", search).json()
    assert found["facts"] == [] and found["entity_cards"] == []
    store.memory_confirm(uuid.UUID(stored.json()["memory"]["id"]), user=None)
    found = api.post("/api/v1/tools/search_memory", search).json()
    assert found["facts"][0]["content"] == "Her grandson Leo plays football"
    assert found["facts"][0]["confirmed"] is True and "note" not in found["facts"][0]

    status = api.post(
        "/api/v1/tools/update_status", {"person_id": pid, "fields": {"mood": "bright this morning"}}
    ).json()
    assert status["fields"]["mood"]["value"] == "bright this morning"
    assert "updated_at" in status["fields"]["mood"]
    assert PersonNotes.objects.get().fields["mood"]["value"] == "bright this morning"

    memory_id = stored.json()["memory"]["id"]
    forgot = api.post("/api/v1/tools/forget_memory", {"person_id": pid, "memory_id": memory_id})
    assert forgot.json() == {"deleted": 1}
    assert Memory.objects.count() == 0


@pytest.mark.parametrize(
    ("name", "arguments", "status", "field"),
    [
        ("nope", {}, 404, "name"),
        ("search_memory", {"query": "x"}, 422, "person_id"),
        ("search_memory", {"person_id": "not-a-uuid", "query": "x"}, 422, "person_id"),
        (
            "upsert_memory",
            {"person_id": "00000000-0000-0000-0000-000000000000", "content": "x", "importance": 9},
            422,
            "importance",
        ),
        (
            "upsert_memory",
            {"person_id": "00000000-0000-0000-0000-000000000000", "content": "x", "colour": "red"},
            422,
            "colour",
        ),
        (
            "update_status",
            {"person_id": "00000000-0000-0000-0000-000000000000", "fields": {}},
            422,
            "fields",
        ),
        (
            "update_status",
            {"person_id": "00000000-0000-0000-0000-000000000000", "fields": {"mood": "calm"}},
            404,
            "person_id",
        ),
        ("forget_memory", {"person_id": "00000000-0000-0000-0000-000000000000"}, 422, "memory_id"),
    ],
)
def test_tool_bad_arguments_name_the_field(api, name, arguments, status, field):
    response = api.post(f"/api/v1/tools/{name}", arguments)
    assert response.status_code == status, response.json()
    assert response.json()["field"] == field
    assert Memory.objects.count() == 0


def test_conversation_search_stays_inside_the_current_session(api, person):
    from memory.conversations import services

    earlier, _ = services.session_resolve(user_id=person.id)
    services.exchange_record(
        session_id=earlier.id,
        user_message="I used to grow roses",
        assistant_message="Roses are lovely.",
    )
    services.session_close(session_id=earlier.id)
    current, _ = services.session_resolve(user_id=person.id)
    services.exchange_record(
        session_id=current.id,
        user_message="The garden looks nice today",
        assistant_message="It does, the garden is full of colour.",
    )
    pid = str(person.id)
    needs_session = api.post(
        "/api/v1/tools/search_memory",
        {"person_id": pid, "query": "garden roses", "scope": "conversations"},
    )
    assert needs_session.status_code == 422
    assert needs_session.json()["field"] == "session_id"
    found = api.post(
        "/api/v1/tools/search_memory",
        {
            "person_id": pid,
            "query": "garden roses",
            "scope": "conversations",
            "session_id": str(current.id),
        },
    ).json()
    said = [m["content"] for m in found["conversation"]]
    assert "I used to grow roses" not in said
    assert said == ["The garden looks nice today", "It does, the garden is full of colour."]
    # What was said, never when or how often.
    assert set(found["conversation"][0]) == {"role", "content"}
