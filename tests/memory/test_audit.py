"""The audit of disclosures outside the per-turn path (issue 14, item 4).

Every read of messages or memories, search, listing, export, tool call (REST and MCP), forgetting
and erasure leaves exactly one AccessEvent row: who (the key's prefix), which person, what, when
and the outcome (allowed, refused for a key without the scope, not found for another
organisation's ids). No row holds a name or message text. The per-turn path writes none.
"""

import json
import uuid

import pytest

from memory.companion import mcp
from memory.conversations import services, tenancy
from memory.conversations.models import Scope
from memory.facts import store
from memory.models import AccessEvent, Memory, Person
from tests.support.bot import Bot

pytestmark = pytest.mark.django_db

SECRET_WORDS = "Marigold lives at Beech House with her cat Tibbles"
SECRETS = ("Marigold", "Beech", "Tibbles", "daughter")


@pytest.fixture
def a():
    """Organisation A: a key, a person who told Clara about Tibbles, and their memories."""
    org = tenancy.organisation_get_or_create("sunrise-care")
    key, raw = services.api_key_create(name="A", organisation_id=org.pk)
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
    memory = store.memory_upsert(
        namespace=facts_ns, key="cat", content="Her cat is called Tibbles.", embed=False
    ).memory
    # Confirmed: in dementia-safe care the tools hand out confirmed facts only.
    store.memory_confirm(memory.id, user=None)
    memory.refresh_from_db()
    store.memory_upsert(
        namespace=("org", str(org.pk), "agent", "notes"), key="home", content="Beech House"
    )
    return {
        "org": org,
        "key": key,
        "raw": raw,
        "bot": Bot(raw),
        "person": person,
        "session": session,
        "facts_ns": list(facts_ns),
        "memory": memory,
    }


@pytest.fixture
def b():
    org = tenancy.organisation_get_or_create("other-care")
    key, raw = services.api_key_create(name="B", organisation_id=org.pk)
    return {"org": org, "key": key, "raw": raw, "bot": Bot(raw)}


# name: (method, path, body, query, scope, action, whether the row names the person, object)
CASES = {
    "messages": ("get", "/sessions/{sid}/messages", None, None, "turns", "read_messages", True, "sid"),
    "memory": ("get", "/memories/item", None, "key", "memories:read", "read_memory", True, "mid"),
    "history": ("get", "/memories/history", None, "key", "memories:read", "read_memory_history", True, ""),
    "search": ("post", "/memories/search", "search", None, "memories:read", "search_memories", True, ""),
    "namespaces": ("post", "/memories/namespaces", "prefix", None, "memories:read", "list_namespaces", True, ""),
    "person memories": ("get", "/people/{pid}/memories", None, None, "memories:read", "read_person_memories", True, ""),
    "export": ("get", "/people/{pid}/export", None, None, "export", "export_json", True, ""),
    "export csv": ("get", "/people/{pid}/export", None, {"format": "csv"}, "export", "export_csv", True, ""),
    "tool": ("post", "/tools/search_memory", "tool", None, "memories:read", "tool_call", True, "search_memory"),
    "forget key": ("delete", "/memories/item", None, "key", "memories:write", "forget", True, ""),
    "forget entity": ("post", "/people/{pid}/memories/forget", "entity", None, "memories:write", "forget", True, ""),
    "forget one": ("delete", "/people/{pid}/memories/{mid}", None, None, "memories:write", "forget", True, "mid"),
    # Once erased there is no one to point at: the row keeps who, what, when and the outcome.
    "erase": ("post", "/people/{pid}/erase", "erase", None, "erase", "erase", False, ""),
}  # fmt: skip


def _request(case: str, a) -> tuple[str, str, dict | None, dict | None]:
    method, path, body, query, *_ = CASES[case]
    pid, sid = str(a["person"].id), str(a["session"].id)
    path = "/api/v1" + path.format(pid=pid, sid=sid, mid=a["memory"].id)
    bodies = {
        "search": {"prefix": a["facts_ns"][:2], "query": "Tibbles"},
        "prefix": {"prefix": a["facts_ns"][:2]},
        "tool": {"person_id": pid, "query": "Tibbles"},
        "entity": {"entity": "person:tibbles"},
        "erase": {"confirm": pid},
    }
    queries = {"key": {"namespace": a["facts_ns"], "key": "cat"}}
    return (
        method,
        path,
        bodies.get(body),
        queries["key"] if query == "key" else query,
    )


def _object(case: str, a) -> str:
    expected = CASES[case][7]
    return {"sid": str(a["session"].id), "mid": str(a["memory"].id)}.get(expected, expected)


def _one_new_row(before: set) -> AccessEvent:
    rows = list(AccessEvent.objects.exclude(id__in=before))
    assert len(rows) == 1, [(r.action, r.outcome) for r in rows]
    return rows[0]


def _ids() -> set:
    return set(AccessEvent.objects.values_list("id", flat=True))


def _no_text_in_the_audit() -> None:
    dump = json.dumps(list(AccessEvent.objects.values()), default=str)
    for secret in SECRETS:
        assert secret not in dump


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_allowed_disclosure_writes_one_row_naming_key_person_and_action(case, a):
    method, path, body, query = _request(case, a)
    before = _ids()
    response = a["bot"].call(method, path, body, query)
    assert response.status_code == 200, response.content
    row = _one_new_row(before)
    names_person = CASES[case][6]
    assert row.actor == f"key:{a['key'].prefix}"
    assert (row.channel, row.action, row.outcome) == ("api", CASES[case][5], "allowed")
    assert row.organisation_id == a["org"].pk
    assert row.person_id == (a["person"].id if names_person else None)
    if _object(case, a):
        assert row.object_id == _object(case, a)
    assert row.user_id is None
    _no_text_in_the_audit()


@pytest.mark.parametrize("case", sorted(CASES))
def test_another_organisations_key_is_audited_as_not_found_in_its_own_audit(case, a, b):
    method, path, body, query = _request(case, a)
    before = _ids()
    response = b["bot"].call(method, path, body, query)
    assert response.status_code == 404
    row = _one_new_row(before)
    assert row.actor == f"key:{b['key'].prefix}"
    assert (row.action, row.outcome) == (CASES[case][5], "not_found")
    # In B's audit, pointing at no one of A's.
    assert row.organisation_id == b["org"].pk
    assert row.person_id is None
    _no_text_in_the_audit()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_key_without_the_scope_is_audited_as_refused(case, a):
    scope = CASES[case][4]
    others = [value for value in Scope.values if value != scope]
    key, raw = services.api_key_create(name="narrow", organisation_id=a["org"].pk, scopes=others)
    method, path, body, query = _request(case, a)
    before = _ids()
    response = Bot(raw).call(method, path, body, query)
    assert response.status_code == 403
    row = _one_new_row(before)
    assert (row.actor, row.action, row.outcome) == (f"key:{key.prefix}", CASES[case][5], "refused")
    assert row.organisation_id == a["org"].pk
    # The person the request names, being the key's organisation's (a session id names none).
    assert row.person_id == (None if case == "messages" else a["person"].id)


def test_a_missing_memory_of_the_callers_own_person_is_not_found_naming_them(a):
    before = _ids()
    query = {"namespace": a["facts_ns"], "key": "dog"}
    assert a["bot"].call("get", "/api/v1/memories/item", query=query).status_code == 404
    row = _one_new_row(before)
    assert (row.action, row.outcome, row.person_id) == ("read_memory", "not_found", a["person"].id)


def test_an_organisations_own_namespace_is_audited_without_a_person(a):
    before = _ids()
    query = {"namespace": ["agent", "notes"], "key": "home"}
    response = a["bot"].call("get", "/api/v1/memories/item", query=query)
    assert response.json()["content"] == "Beech House"
    row = _one_new_row(before)
    assert (row.action, row.outcome, row.person_id) == ("read_memory", "allowed", None)


def test_bad_input_is_not_audited(a):
    before = _ids()
    response = a["bot"].call("post", "/api/v1/tools/search_memory", {"person_id": "nope"})
    assert response.status_code == 422
    assert _ids() == before


def test_an_erasure_with_the_wrong_confirmation_is_audited_as_such(a):
    """Not as allowed, and not silently: an attempt to erase is worth a row whatever happened."""
    before = _ids()
    response = a["bot"].call(
        "post", f"/api/v1/people/{a['person'].id}/erase", {"confirm": str(uuid.uuid4())}
    )
    assert response.status_code == 422 and response.json()["field"] == "confirm"
    row = _one_new_row(before)
    assert (row.action, row.outcome, row.person_id) == ("erase", "unconfirmed", a["person"].id)
    assert Person.objects.filter(id=a["person"].id).exists()


def test_a_memory_switched_off_refuses_a_tool_write_and_the_audit_says_so(a):
    store.person_memory_set_enabled(person_id=a["person"].id, enabled=False)
    before = _ids()
    response = a["bot"].call(
        "post",
        "/api/v1/tools/upsert_memory",
        {"person_id": str(a["person"].id), "content": "Likes tea."},
    )
    assert response.status_code == 409
    row = _one_new_row(before)
    assert (row.action, row.object_id, row.outcome) == ("tool_call", "upsert_memory", "refused")
    assert row.person_id == a["person"].id


# --- MCP -------------------------------------------------------------------------------------------


def _mcp(a, name: str, arguments: dict, raw: str | None = None):
    return mcp.run_tool(name, arguments, key_prefix=None, raw_key=raw or a["raw"])


def test_an_mcp_tool_call_writes_one_row_on_the_mcp_channel(a):
    before = _ids()
    result = _mcp(a, "search_memory", {"person_id": str(a["person"].id), "query": "Tibbles"})
    assert result["facts"]
    row = _one_new_row(before)
    assert (row.channel, row.action, row.object_id, row.outcome) == (
        "mcp",
        "tool_call",
        "search_memory",
        "allowed",
    )
    assert (row.actor, row.person_id) == (f"key:{a['key'].prefix}", a["person"].id)
    _no_text_in_the_audit()


def test_forgetting_over_mcp_is_audited(a):
    before = _ids()
    _mcp(a, "forget_memory", {"person_id": str(a["person"].id), "memory_id": str(a["memory"].id)})
    row = _one_new_row(before)
    assert (row.channel, row.object_id, row.outcome, row.person_id) == (
        "mcp",
        "forget_memory",
        "allowed",
        a["person"].id,
    )
    assert not Memory.objects.filter(id=a["memory"].id).exists()


def test_an_mcp_call_with_another_organisations_key_is_not_found(a, b):
    from memory.core.errors import NotFound

    before = _ids()
    with pytest.raises(NotFound):
        _mcp(a, "search_memory", {"person_id": str(a["person"].id), "query": "x"}, raw=b["raw"])
    row = _one_new_row(before)
    assert (row.channel, row.outcome, row.organisation_id, row.person_id) == (
        "mcp",
        "not_found",
        b["org"].pk,
        None,
    )


# --- The per-turn path is not audited ------------------------------------------------------------


def test_the_per_turn_path_writes_no_audit_row(a):
    bot, sid, pid = a["bot"], str(a["session"].id), str(a["person"].id)
    calls = [
        ("post", "/api/v1/sessions", {"session_id": sid, "user_id": pid}),
        ("get", f"/api/v1/sessions/{sid}", None),
        ("post", f"/api/v1/sessions/{sid}/query", {"message": "Where is my cat?"}),
        ("post", f"/api/v1/sessions/{sid}/context", {"message": "Where is my cat?"}),
        (
            "post",
            f"/api/v1/sessions/{sid}/exchanges",
            {"user_message": "Hello", "assistant_message": "Hello there."},
        ),
        ("post", f"/api/v1/sessions/{sid}/turns", {"message": "Hi", "client_key": "k1"}),
        ("post", f"/api/v1/sessions/{sid}/close", {}),
    ]
    for method, path, body in calls:
        response = bot.call(method, path, body)
        assert response.status_code < 300, (path, response.content)
    _mcp(a, "get_context", {"session_id": sid, "message": "Where is my cat?"})
    assert not AccessEvent.objects.exists()
