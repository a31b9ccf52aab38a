"""The checked-in clients were generated from today's API: a change to the API that forgot
`make clients` fails here, offline (CI's `make check-clients` also regenerates both clients and
compares every file)."""

import json

from clara.api import api as ninja_api
from tests.clients.support import CLIENTS, PYTHON_CLIENT


def test_the_clients_document_is_the_api_as_served():
    checked_in = json.loads((CLIENTS / "openapi.json").read_text())
    assert checked_in == json.loads(json.dumps(ninja_api.get_openapi_schema())), (
        "clients/openapi.json is not the API's document: run `make clients` and commit"
    )


def test_the_python_client_has_a_module_for_every_operation():
    operations = {
        operation["operationId"]
        for methods in ninja_api.get_openapi_schema()["paths"].values()
        for operation in methods.values()
    }
    modules = {path.stem for path in (PYTHON_CLIENT / "clara_memory_client" / "api").rglob("*.py")}
    assert operations <= modules
