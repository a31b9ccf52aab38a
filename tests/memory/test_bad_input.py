"""Bad input to the bot API is a 4xx naming the field, never a 5xx; 503 only for a real outage.

A crafted-input matrix over every JSON body of /api/v1 (each field replaced by NaN, Infinity, an
overflowing number, a lone surrogate...), the cases found broken by hand (issue 15), malformed
headers, and the rule that a refused exchange stores nothing and is not kept for a retry.
The property-based fuzz of the whole OpenAPI document is tests/memory/test_api_fuzz.py.
"""

import json
import uuid

import pytest
from django.db import DataError
from django.test import Client, RequestFactory

from clara.api import database_unavailable
from memory.companion import tools as agent_tools
from memory.conversations import services, tenancy
from memory.core import strict_json
from memory.core.errors import Invalid
from memory.models import ChatMessage, Memory

# Raw JSON put in place of a value; the first group must be refused at the door, naming the field.
NAMING = {
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "overflowing float": "1e999",
    "integer past 64 bits": "9223372036854775808",
    "lone surrogate": '"\\ud800"',
    "lone surrogate in a list": '["\\udfff"]',
}
# Values some fields accept and others refuse; none may be a 5xx.
OTHER = {
    "1e308": "1e308",
    "-2**63": "-9223372036854775808",
    "object": "{}",
    "NUL": '"a\\u0000b"',
    "long text": json.dumps("x" * 20_000),
}
# Whole bodies that are not an object, or not JSON.
NOT_A_BODY = {
    "1e308": "1e308",
    "true": "true",
    "list": "[]",
    "NaN": "NaN",
    "lone surrogate": '"\\ud800"',
    "truncated": '{"a": ',
    "invalid UTF-8": b'{"a": "\xff"}',
    "deep": "[" * 100_000,
}
MARK = "__BAD_VALUE__"


def _paths(value, path=()):
    """Every path to a value inside a JSON body."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*path, key)
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield (*path, index)
            yield from _paths(child, (*path, index))


def _with(body: dict, path: tuple, raw: str) -> str:
    copy = json.loads(json.dumps(body))
    target = copy
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = MARK
    return json.dumps(copy).replace(json.dumps(MARK), raw)


@pytest.fixture
def world(db):
    """A key, a person with a session and one exchange, and a Client that never raises."""
    _, key = services.api_key_create(name="bad input")
    client = Client(raise_request_exception=False)
    headers = {"Authorization": f"Bearer {key}"}
    person, session = str(uuid.uuid4()), str(uuid.uuid4())
    response = client.post(
        "/api/v1/sessions",
        {"session_id": session, "user_id": person, "display_name": "Nana"},
        content_type="application/json",
        headers=headers,
    )
    assert response.status_code == 201
    return {"client": client, "headers": headers, "person": person, "session": session}


def _bodies(person: str, session: str) -> list[tuple[str, str, dict]]:
    """A valid body for every /api/v1 operation that takes one, with every optional field set."""
    namespace = ["memories", person, "people"]
    emotion = {"emotion": "calm", "confidence": 0.5, "distress_score": 0.1, "trajectory": "stable"}
    return [
        (
            "put",
            "/api/v1/memories",
            {
                "namespace": namespace,
                "key": "k",
                "content": "Likes tea",
                "metadata": {"a": 1, "b": [1.5]},
                "ttl_minutes": 5,
                "importance": 1,
                "confidence": 0.5,
                "entity_labels": {"person:x": "X"},
                "subtype": {"a": "b"},
                "entity_refs": ["person:x"],
                "memory_key": "m",
                "persona": "p",
            },
        ),
        (
            "post",
            "/api/v1/memories/search",
            {
                "prefix": namespace,
                "query": "tea",
                "limit": 5,
                "offset": 0,
                "threshold": 0.1,
                "filter": {"a": 1},
                "persona": "p",
            },
        ),
        (
            "post",
            "/api/v1/memories/namespaces",
            {"prefix": ["memories"], "suffix": [], "max_depth": 2, "limit": 5, "offset": 0},
        ),
        (
            "put",
            f"/api/v1/people/{person}/check-ins/settings",
            {
                "enabled": True,
                "times": ["09:00"],
                "night_start": 22,
                "night_end": 7,
                "max_unanswered": 3,
            },
        ),
        ("post", f"/api/v1/people/{person}/memories/forget", {"entity": "person:x"}),
        ("put", f"/api/v1/people/{person}/memory-settings", {"enabled": True}),
        ("put", f"/api/v1/people/{person}/persona", {"persona": "clara"}),
        ("put", "/api/v1/personas/clara", {"memory_policy": "dementia_safe", "display_name": "C"}),
        ("post", "/api/v1/sessions", {"session_id": str(uuid.uuid4()), "user_id": person}),
        ("post", f"/api/v1/sessions/{session}/context", {"message": "Hi", "emotion": emotion}),
        ("post", f"/api/v1/sessions/{session}/query", {"message": "Hi", "emotion": emotion}),
        (
            "post",
            f"/api/v1/sessions/{session}/exchanges",
            {
                "user_message": "Hi",
                "assistant_message": "Hello",
                "emotion": emotion,
                "idempotency_key": "x",
                "narrative": {"id": "a", "mode": "seed", "category": "c"},
            },
        ),
        ("post", f"/api/v1/sessions/{session}/turns", {"message": "Hi", "client_key": "ck"}),
        (
            "post",
            f"/api/v1/sessions/{session}/turns/{uuid.uuid4()}/complete",
            {"assistant_message": "Hello", "processing_time_ms": 5, "emotion": emotion},
        ),
        ("post", "/api/v1/tools/search_memory", {"person_id": person, "query": "tea", "limit": 5}),
        (
            "post",
            "/api/v1/tools/upsert_memory",
            {"person_id": person, "content": "Likes tea", "importance": 1},
        ),
        ("post", "/api/v1/tools/update_status", {"person_id": person, "fields": {"mood": 1.5}}),
        ("post", f"/api/v1/sessions/{session}/close", {"ended_at": None}),
        ("post", f"/api/v1/people/{person}/erase", {"confirm": str(uuid.uuid4())}),
    ]


def test_every_field_of_every_body_refuses_unstorable_values_naming_the_field(world):
    client, headers = world["client"], world["headers"]
    wrong = []
    for method, path, body in _bodies(world["person"], world["session"]):
        for where in _paths(body):
            field = ".".join(str(part) for part in where)
            for name, raw in NAMING.items():
                response = getattr(client, method)(
                    path, _with(body, where, raw), content_type="application/json", headers=headers
                )
                # A bad value inside a list is refused at its index.
                expected = f"{field}.0" if name == "lone surrogate in a list" else field
                got = (
                    response.json()
                    if response["Content-Type"].startswith("application/json")
                    else {}
                )
                if response.status_code != 422 or got.get("field") != expected:
                    wrong.append((method, path, field, name, response.status_code, got))
    assert wrong == []


def test_no_field_of_any_body_gives_a_server_error(world):
    client, headers = world["client"], world["headers"]
    errors = []
    for method, path, body in _bodies(world["person"], world["session"]):
        for where in _paths(body):
            for name, raw in OTHER.items():
                response = getattr(client, method)(
                    path, _with(body, where, raw), content_type="application/json", headers=headers
                )
                if response.status_code >= 500:
                    errors.append((method, path, where, name, response.status_code))
        for name, raw in NOT_A_BODY.items():
            response = getattr(client, method)(
                path, raw, content_type="application/json", headers=headers
            )
            if not 400 <= response.status_code < 500:
                errors.append((method, path, "body", name, response.status_code))
    assert errors == [], "\n".join(map(str, errors))


# --- The cases issue 15 found --------------------------------------------------------------------


def _put_memory(world, **fields):
    body = {"namespace": ["memories", world["person"], "people"], "content": "Likes tea"}
    return world["client"].put(
        "/api/v1/memories",
        json.dumps(body | fields),
        content_type="application/json",
        headers=world["headers"],
    )


@pytest.mark.parametrize("ttl", [1e308, 10**12, 10 * 366 * 24 * 60 + 1])
def test_a_ttl_past_ten_years_is_a_422_naming_it(world, ttl):
    response = _put_memory(world, ttl_minutes=ttl)
    assert response.status_code == 422
    assert response.json()["field"] == "ttl_minutes"
    assert not Memory.objects.exists()


def test_a_ttl_of_ten_years_is_kept(world):
    assert _put_memory(world, ttl_minutes=10 * 366 * 24 * 60).status_code == 201


def test_a_lone_surrogate_in_a_namespace_label_is_a_422_naming_it(world):
    raw = json.dumps({"namespace": ["memories", world["person"], "x"], "content": "Tea"}).replace(
        '"x"', '"\\ud83d"'
    )
    response = world["client"].put(
        "/api/v1/memories", raw, content_type="application/json", headers=world["headers"]
    )
    assert response.status_code == 422
    assert response.json() == {
        "detail": "namespace.2: text must be valid Unicode (a lone surrogate was sent).",
        "code": "invalid",
        "field": "namespace.2",
    }


def test_a_surrogate_pair_is_ordinary_text(world):
    # "\ud83d\ude00" is one emoji written as a pair, not a lone surrogate.
    raw = json.dumps({"namespace": ["memories", world["person"], "x"], "content": "Tea"}).replace(
        '"Tea"', '"Tea \\ud83d\\ude00"'
    )
    response = world["client"].put(
        "/api/v1/memories", raw, content_type="application/json", headers=world["headers"]
    )
    assert response.status_code == 201
    assert response.json()["memory"]["content"] == "Tea \U0001f600"


def test_nan_in_metadata_is_a_422_not_a_503_to_retry(world):
    raw = json.dumps(
        {"namespace": ["memories", world["person"], "people"], "content": "Tea", "metadata": {}}
    ).replace("{}", '{"mood": NaN}')
    response = world["client"].put(
        "/api/v1/memories", raw, content_type="application/json", headers=world["headers"]
    )
    assert response.status_code == 422
    assert "Retry-After" not in response
    assert response.json()["field"] == "metadata.mood"


def test_a_refused_exchange_stores_nothing_and_is_not_kept_for_a_retry(world, settings):
    path = f"/api/v1/sessions/{world['session']}/exchanges"
    raw = json.dumps(
        {
            "user_message": "Hi",
            "assistant_message": "Hello",
            "emotion": {"emotion": "calm", "confidence": 0.5, "distress_score": 0.1},
        }
    ).replace("0.1}", 'Infinity, "trajectory": "stable"}')
    response = world["client"].post(
        path, raw, content_type="application/json", headers=world["headers"]
    )
    assert response.status_code == 422
    assert response.json()["field"] == "emotion.distress_score"
    assert not ChatMessage.objects.exists()
    assert not settings.CLARA_RECOVERY_LOG.exists()


@pytest.mark.parametrize("offset", [10_001, 2**63, -1])
def test_an_offset_past_the_last_page_allowed_is_a_422(world, offset):
    for path, body in [
        ("/api/v1/memories/search", {"prefix": ["memories", world["person"]]}),
        ("/api/v1/memories/namespaces", {"prefix": ["memories"]}),
    ]:
        response = world["client"].post(
            path,
            json.dumps(body | {"offset": offset}),
            content_type="application/json",
            headers=world["headers"],
        )
        assert response.status_code == 422, path
        assert response.json()["field"] == "offset"


@pytest.mark.parametrize("limit", ["0", "501", "9223372036854775808", "NaN", "1e3", "\x00"])
def test_a_message_limit_out_of_range_is_a_422_naming_it(world, limit):
    response = world["client"].get(
        f"/api/v1/sessions/{world['session']}/messages", {"limit": limit}, headers=world["headers"]
    )
    assert response.status_code == 422
    assert response.json()["field"] == "limit"


# --- Headers -------------------------------------------------------------------------------------


@pytest.mark.parametrize("length", ["abc", "-1", "1e3", " 5", "5 ", "0x10", "99999999999999999999"])
def test_a_malformed_content_length_is_a_400_naming_the_header(world, length):
    response = world["client"].post(
        f"/api/v1/sessions/{world['session']}/exchanges",
        json.dumps({"user_message": "Hi", "assistant_message": "Hello"}),
        content_type="application/json",
        headers=world["headers"],
        CONTENT_LENGTH=length,
    )
    assert response.status_code == 400
    assert response.json()["field"] == "Content-Length"
    assert not ChatMessage.objects.exists()


def test_a_well_formed_content_length_still_works(world):
    body = json.dumps({"user_message": "Hi", "assistant_message": "Hello"})
    response = world["client"].post(
        f"/api/v1/sessions/{world['session']}/exchanges",
        body,
        content_type="application/json",
        headers=world["headers"],
        CONTENT_LENGTH=str(len(body)),
    )
    assert response.status_code == 201


@pytest.mark.parametrize(
    "authorization",
    ["Bearer " + "x" * 10_000, "Basic YTpi", "Bearer clara_\x00", "Bearer", "Bearer a b c"],
)
def test_a_malformed_authorization_header_is_a_401(world, authorization):
    response = world["client"].get(
        f"/api/v1/sessions/{world['session']}", HTTP_AUTHORIZATION=authorization
    )
    assert response.status_code == 401


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/json; charset=latin-1", "multipart/form-data"]
)
def test_an_unexpected_content_type_is_not_a_server_error(world, content_type):
    response = world["client"].generic(
        "POST",
        f"/api/v1/sessions/{world['session']}/exchanges",
        json.dumps({"user_message": "Hi", "assistant_message": "Hello"}),
        content_type=content_type,
        headers=world["headers"],
    )
    assert response.status_code < 500


# --- Below the HTTP layer ------------------------------------------------------------------------


def test_a_tool_called_over_mcp_refuses_a_lone_surrogate_naming_the_argument(world):
    caller = tenancy.caller_for_key(services.api_key_create(name="mcp")[0])
    with pytest.raises(Invalid) as refused:
        agent_tools.call(
            "update_status",
            {"person_id": world["person"], "fields": {"mood": "\ud800"}},
            caller=caller,
        )
    assert refused.value.field == "fields.mood"


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"a": [1, {"b": float("nan")}]}, "a.1.b"),
        ({"a": float("inf")}, "a"),
        ({"\ud800": 1}, "body"),
        ([2**64], "0"),
        ({"ok": [1, 2.5, "é", True, None, -(2**63)]}, None),
    ],
)
def test_strict_json_names_the_first_unstorable_value(value, field):
    if field is None:
        strict_json.check(value)
        return
    with pytest.raises(Invalid) as refused:
        strict_json.check(value)
    assert refused.value.field == field


def test_strict_json_survives_deep_nesting():
    deep: list = []
    for _ in range(20_000):
        deep = [deep]
    strict_json.check(deep)


def test_a_value_the_database_refuses_is_a_422_not_an_outage():
    response = database_unavailable(RequestFactory().get("/api/v1/x"), DataError("out of range"))
    assert response.status_code == 422
    assert "Retry-After" not in response
    assert json.loads(response.content)["code"] == "invalid"
