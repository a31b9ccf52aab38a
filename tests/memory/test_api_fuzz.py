"""A property-based fuzz of the whole published API: no input the OpenAPI document allows (or
almost allows) may give a 5xx.

schemathesis reads /api/v1/openapi.json from the app itself (in-process WSGI, the real
middleware, a real API key with every scope) and generates requests for every operation, both
those the schema accepts and those it refuses (negative mode). Half the cases aim at a real
person and session (path ids replaced), so the fuzz reaches past the 404s into the services.

Bounded: CLARA_FUZZ_EXAMPLES examples per operation and mode (default 10: 30 operations,
up to ~600 requests, two to three minutes on two busy cores). Runs in `make test`, on SQLite and PostgreSQL
alike. A failure prints the request as a curl command to replay it.
"""

import os
import uuid

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.generation import GenerationMode

from memory.conversations import services

EXAMPLES = int(os.environ.get("CLARA_FUZZ_EXAMPLES", "10"))
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]


@pytest.fixture
def _connections_kept_open():
    """What Django's test Client does around a request: the real WSGI handler would close the
    database connection when each request finishes, and with it the test's database."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def fuzz_world(db, settings, _connections_kept_open):
    # The fuzz sends hundreds of requests on one key within a minute.
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 10**6
    _, key = services.api_key_create(name="fuzz")
    person, session = uuid.uuid4(), uuid.uuid4()
    services.session_resolve(session_id=session, user_id=person, display_name="Nana")
    services.exchange_record(session_id=session, user_message="Hi", assistant_message="Hello")
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())
    return (
        schema,
        {"Authorization": f"Bearer {key}"},
        {
            "person_id": str(person),
            "session_id": str(session),
        },
    )


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.value)
def test_no_request_gives_a_server_error(fuzz_world, mode):
    schema, headers, real_ids = fuzz_world
    failures = []
    operations = list(schema.get_all_operations())
    assert len(operations) >= 30  # every operation of the document, not a silent empty run
    for result in operations:
        operation = result.ok()

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode), aim_at_real=st.booleans())
        def run(case, aim_at_real):
            if aim_at_real and case.path_parameters:
                for name in case.path_parameters:
                    if name in real_ids:
                        case.path_parameters[name] = real_ids[name]
            response = case.call(headers=headers)
            assert response.status_code < 500, (
                f"{response.status_code} for {case.as_curl_command(headers=headers)}\n"
                f"{response.text[:500]}"
            )

        try:
            run()
        except AssertionError as failure:
            failures.append(f"{operation.label}: {failure}")
    assert failures == [], "\n\n".join(failures)
