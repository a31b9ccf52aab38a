"""The published API description: reachable, self-hosted docs, and a snapshot of the contract.

The OpenAPI document and the docs page are public: `NinjaAPI(docs_decorator=None)` (the default)
serves them without the bot key, which the document itself says every operation needs.
To accept an intended change of the contract: `UPDATE_SNAPSHOTS=1 pytest tests/memory/test_openapi.py`.
"""

import json
import os
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders

from clara.api import api as ninja_api

SNAPSHOT = Path(__file__).with_name("openapi_snapshot.json")
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
    current = _dump(ninja_api.get_openapi_schema())
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(current)
    assert SNAPSHOT.exists(), "No snapshot yet: run with UPDATE_SNAPSHOTS=1 to write it."
    assert current == SNAPSHOT.read_text(), (
        "The OpenAPI schema changed. If the change is intended (and compatible for the bot), "
        "rerun with UPDATE_SNAPSHOTS=1 and commit tests/memory/openapi_snapshot.json."
    )
