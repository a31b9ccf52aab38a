"""The published API description: reachable, self-hosted docs, and a snapshot of the contract.

The OpenAPI document and the docs page are public: `NinjaAPI(docs_decorator=None)` (the default)
serves them without the bot key, which the document itself says every operation needs.
The snapshot of the contract is the document the clients are generated from,
clients/openapi.json: to accept an intended change, `make clients` and commit what it writes.
"""

import functools
import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders

from clara.api import api as ninja_api

SNAPSHOT = Path(__file__).resolve().parents[2] / "clients" / "openapi.json"
OPENAPI_URL = "/api/v1/openapi.json"
DOCS_URL = "/api/v1/docs"

CONTRACT_OPERATIONS = {
    ("post", "/api/v1/sessions"),
    ("get", "/api/v1/sessions/{session_id}"),
    ("post", "/api/v1/sessions/{session_id}/query"),
    ("post", "/api/v1/sessions/{session_id}/exchanges"),
    ("get", "/api/v1/sessions/{session_id}/messages"),
    ("post", "/api/v1/sessions/{session_id}/close"),
}


def _operations(schema: dict) -> dict:
    return {
        (method, path): operation
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
    }


@functools.cache
def _document() -> dict:
    """Built once per run: the tests below only read it."""
    return ninja_api.get_openapi_schema()


def _dump(schema: dict) -> str:
    return json.dumps(schema, sort_keys=True, indent=2) + "\n"


def test_openapi_document_is_served_without_a_key(anonymous_api):
    response = anonymous_api.get(OPENAPI_URL)
    assert response.status_code == 200
    body = response.json()
    assert body["info"]["title"] == "Clara Memory API"
    assert body["openapi"].startswith("3.")


def test_openapi_document_lists_every_contract_operation(anonymous_api):
    assert CONTRACT_OPERATIONS <= _operations(anonymous_api.get(OPENAPI_URL).json()).keys()


@pytest.mark.parametrize(("method", "path"), sorted(CONTRACT_OPERATIONS))
def test_openapi_document_marks_every_operation_as_needing_the_bearer_key(
    anonymous_api, method, path
):
    schema = anonymous_api.get(OPENAPI_URL).json()
    (scheme_name,) = _operations(schema)[(method, path)]["security"][0]
    assert schema["components"]["securitySchemes"][scheme_name] == {
        "type": "http",
        "scheme": "bearer",
    }


@pytest.mark.parametrize(("method", "path"), sorted(CONTRACT_OPERATIONS))
def test_openapi_document_describes_401_404_409_422_errors(anonymous_api, method, path):
    responses = _operations(anonymous_api.get(OPENAPI_URL).json())[(method, path)]["responses"]
    assert {"401", "404", "409", "422"} <= responses.keys()


# Generated clients name their methods after these: a change here breaks every client's code.
OPERATION_IDS = {
    ("post", "/api/v1/sessions"): "resolve_session",
    ("get", "/api/v1/sessions/{session_id}"): "get_session",
    ("post", "/api/v1/sessions/{session_id}/query"): "query_memory",
    ("post", "/api/v1/sessions/{session_id}/context"): "build_context",
    ("post", "/api/v1/sessions/{session_id}/exchanges"): "store_exchange",
    ("get", "/api/v1/sessions/{session_id}/messages"): "list_messages",
    ("post", "/api/v1/sessions/{session_id}/close"): "close_session",
    ("post", "/api/v1/sessions/{session_id}/turns"): "submit_turn_message",
    ("post", "/api/v1/sessions/{session_id}/turns/next"): "next_turn",
    ("post", "/api/v1/sessions/{session_id}/turns/{turn_id}/complete"): "complete_turn",
    ("put", "/api/v1/memories"): "put_memory",
    ("get", "/api/v1/memories/item"): "get_memory",
    ("delete", "/api/v1/memories/item"): "delete_memory",
    ("get", "/api/v1/memories/history"): "get_memory_history",
    ("post", "/api/v1/memories/search"): "search_memories",
    ("post", "/api/v1/memories/namespaces"): "list_namespaces",
    ("get", "/api/v1/people/{person_id}/memories"): "list_person_memories",
    ("post", "/api/v1/people/{person_id}/memories/forget"): "forget_memories",
    ("delete", "/api/v1/people/{person_id}/memories/{memory_id}"): "forget_memory",
    ("put", "/api/v1/people/{person_id}/memory-settings"): "put_memory_settings",
    ("get", "/api/v1/people/{person_id}/export"): "export_person",
    ("post", "/api/v1/people/{person_id}/erase"): "erase_person",
    ("put", "/api/v1/people/{person_id}/persona"): "put_person_persona",
    ("put", "/api/v1/personas/{slug}"): "put_persona_policy",
    ("get", "/api/v1/people/{person_id}/outbox"): "list_outbox",
    ("post", "/api/v1/people/{person_id}/outbox/{check_in_id}/delivered"): "mark_outbox_delivered",
    ("get", "/api/v1/people/{person_id}/check-ins/settings"): "get_check_in_settings",
    ("put", "/api/v1/people/{person_id}/check-ins/settings"): "put_check_in_settings",
    ("get", "/api/v1/tools/schemas"): "list_tool_schemas",
    ("post", "/api/v1/tools/{name}"): "call_tool",
    ("post", "/api/v1/webhooks"): "create_webhook",
    ("get", "/api/v1/webhooks"): "list_webhooks",
    ("delete", "/api/v1/webhooks/{webhook_id}"): "delete_webhook",
    ("post", "/api/v1/webhooks/{webhook_id}/rotate-secret"): "rotate_webhook_secret",
    ("get", "/api/v1/people/{person_id}/fhir"): "export_person_fhir",
}


def test_operation_ids_are_the_frozen_short_list():
    operations = _operations(_document())
    assert {key: operation["operationId"] for key, operation in operations.items()} == (
        OPERATION_IDS
    )


# Answered before any view runs (framing, key, scope, body size, rate, database), so documented
# on every operation with the error shape: a generated client parses them instead of raising.
@pytest.mark.parametrize("status", ["400", "401", "403", "404", "409", "413", "422", "429", "503"])
def test_every_operation_documents_the_statuses_any_request_may_get(status):
    for key, operation in _operations(_document()).items():
        response = operation["responses"].get(status)
        assert response is not None, (key, status)
        assert response["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorOut"
        }, (key, status)


def test_401_documents_www_authenticate_and_429_retry_after():
    for operation in _operations(_document()).values():
        assert "WWW-Authenticate" in operation["responses"]["401"]["headers"]
        assert "Retry-After" in operation["responses"]["429"]["headers"]


def test_the_csv_export_is_documented_as_text_csv():
    operation = _operations(_document())[("get", "/api/v1/people/{person_id}/export")]
    content = operation["responses"]["200"]["content"]
    assert content["text/csv"]["schema"] == {"type": "string"}
    # First: openapi-python-client reads only the first media type (JSON first crashed on CSV).
    assert list(content) == ["text/csv", "application/json"]


def test_close_sessions_optional_body_is_its_schema_not_a_union_with_null():
    operation = _operations(_document())[("post", "/api/v1/sessions/{session_id}/close")]
    assert operation["requestBody"]["required"] is False
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SessionCloseIn"
    }


def test_a_client_pointed_at_the_server_root_reaches_the_paths():
    schema = _document()
    assert schema["servers"] == [{"url": "/", "description": schema["servers"][0]["description"]}]
    assert all(path.startswith("/api/v1/") for path in schema["paths"])


def test_every_tag_used_is_declared_with_a_description():
    schema = _document()
    declared = {tag["name"]: tag["description"] for tag in schema["tags"]}
    used = {tag for operation in _operations(schema).values() for tag in operation["tags"]}
    assert used <= declared.keys()
    assert all(declared.values())


def test_every_component_schema_is_used():
    schema = _document()
    text = json.dumps(schema["paths"]) + json.dumps(schema["components"]["schemas"])
    for name in schema["components"]["schemas"]:
        assert f'"#/components/schemas/{name}"' in text, name


def test_error_codes_memory_types_and_statuses_are_enums():
    schemas = _document()["components"]["schemas"]
    assert "insufficient_scope" in schemas["ErrorOut"]["properties"]["code"]["enum"]
    assert "preference" in schemas["MemoryOut"]["properties"]["type"]["enum"]
    assert schemas["MemoryOut"]["properties"]["status"]["enum"]
    assert set(schemas["SessionOut"]["properties"]["status"]["enum"]) == {
        "active",
        "closed",
        "expired",
    }


def test_every_domain_error_code_is_in_the_documented_enum():
    from memory.core.errors import ERROR_CODES, DomainError

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    # The MCP server's own errors travel over MCP, not in this API's bodies.
    codes = {cls.code for cls in subclasses(DomainError) if not cls.__module__.endswith(".mcp")}
    assert codes <= set(ERROR_CODES)


def test_docs_page_loads(anonymous_api):
    response = anonymous_api.get(DOCS_URL)
    assert response.status_code == 200
    assert OPENAPI_URL in response.content.decode()


@pytest.mark.parametrize("cdn", ["cdn", "jsdelivr", "unpkg"])
def test_docs_page_uses_no_cdn(anonymous_api, cdn):
    assert cdn not in anonymous_api.get(DOCS_URL).content.decode().lower()


def test_docs_page_loads_swagger_from_our_static_files(anonymous_api):
    html = anonymous_api.get(DOCS_URL).content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    scripts = [asset for asset in assets if asset.endswith(".js")]
    assert any("swagger-ui-bundle" in script for script in scripts)
    static_prefix = "/" + settings.STATIC_URL.lstrip("/")
    for asset in assets:
        assert asset.startswith(static_prefix), asset
        assert finders.find(asset.removeprefix(static_prefix)), f"{asset} is not a static file"


def test_openapi_schema_matches_the_snapshot():
    assert json.loads(_dump(_document())) == json.loads(SNAPSHOT.read_text()), (
        "The OpenAPI schema changed. If the change is intended (and compatible for the bot), "
        "run `make clients` and commit clients/ (the document and both clients)."
    )


def test_close_session_without_a_body_as_a_generated_client_sends_it(api):
    # openapi-python-client sends Content-Type: application/json and no body when it is unset.
    session = api.post("/api/v1/sessions", {}).json()["session_id"]
    response = api.post(f"/api/v1/sessions/{session}/close", raw="")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "closed"
