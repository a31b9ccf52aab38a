"""The checked-in clients were generated from today's API: clients/openapi.json is compared
with the API as served by tests/memory/test_openapi.py (the contract's snapshot); here, every
operation has its module (CI's `make check-clients` also regenerates both clients and compares
every file)."""

from clara.api import api as ninja_api
from tests.clients.support import PYTHON_CLIENT


def test_the_python_client_has_a_module_for_every_operation():
    operations = {
        operation["operationId"]
        for methods in ninja_api.get_openapi_schema()["paths"].values()
        for operation in methods.values()
    }
    modules = {path.stem for path in (PYTHON_CLIENT / "clara_memory_client" / "api").rglob("*.py")}
    assert operations <= modules
