"""memory/companion/client.py, the reference bot's hand-written client (retries, one idempotency
key per exchange, the recovery log's 202), and the generated Python client (clients/python) agree
on every operation the hand-written one calls.

Every public call of `ClaraClient` runs against the real app in-process, with every optional field
given, and each request it sent and answer it got are recorded. For each, the generated client is
given the same inputs (the hand-written body read into the generated body model, whose declared
fields must hold every key) and answered with the app's recorded answer: it must send the same
method, path, query, body and key, and read the answer into its documented model with every value
the hand-written client read. So a change to the API shows in both or in neither.
"""

import dataclasses
import json
import re
import uuid
from datetime import UTC, datetime, timedelta
from enum import Enum

import httpx
import pytest
from clara_memory_client import AuthenticatedClient
from clara_memory_client.api.sessions import (
    build_context,
    close_session,
    get_session,
    list_messages,
    query_memory,
    resolve_session,
    store_exchange,
)
from clara_memory_client.models import (
    ErrorOut,
    ExchangeIn,
    QueryIn,
    SessionCloseIn,
    SessionIn,
)
from clara_memory_client.types import UNSET, Unset

from clara.wsgi import application
from memory.companion.client import ClaraClient, Emotion

pytestmark = pytest.mark.django_db(transaction=True)

BASE_URL = "http://testserver"
SESSION = "/api/v1/sessions/{session_id}"
# (method, path) -> (generated module, its body model): every operation ClaraClient calls.
OPERATIONS = {
    ("POST", "/api/v1/sessions"): (resolve_session, SessionIn),
    ("GET", SESSION): (get_session, None),
    ("POST", SESSION + "/context"): (build_context, QueryIn),
    ("POST", SESSION + "/query"): (query_memory, QueryIn),
    ("POST", SESSION + "/exchanges"): (store_exchange, ExchangeIn),
    ("GET", SESSION + "/messages"): (list_messages, None),
    ("POST", SESSION + "/close"): (close_session, SessionCloseIn),
}
CLIENT_CALLS = {
    "resolve_session",
    "get_session",
    "context",
    "query",
    "store_exchange",
    "messages",
    "close_session",
}


class Recorder(httpx.BaseTransport):
    """The app in-process; keeps each request with the app's answer."""

    def __init__(self):
        self.app = httpx.WSGITransport(app=application)
        self.exchanges: list[tuple[httpx.Request, httpx.Response]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.app.handle_request(request)
        response.read()
        self.exchanges.append((request, response))
        return response


class Replay(httpx.BaseTransport):
    """Answers with the app's recorded answer; keeps the request it was sent."""

    def __init__(self, answer: httpx.Response):
        self.answer = answer
        self.request: httpx.Request | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.request = request
        return httpx.Response(
            self.answer.status_code, headers=self.answer.headers, content=self.answer.content
        )


def _operation(path: str) -> tuple[str, dict[str, str]]:
    """The path's template and its parameters."""
    match = re.fullmatch(r"/api/v1/sessions/([0-9a-f-]{36})(/\w+)?", path)
    if match is None:
        return path, {}
    return SESSION + (match.group(2) or ""), {"session_id": match.group(1)}


def _declared(model: type) -> set[str]:
    return {a.name for a in model.__attrs_attrs__} - {"additional_properties"}


def _body(request: httpx.Request) -> dict | None:
    return json.loads(request.content) if request.content else None


def _same(mine, generated, where: str) -> None:
    """What the hand-written client read equals what the generated one read (by declared names)."""
    if dataclasses.is_dataclass(mine):
        for f in dataclasses.fields(mine):
            _same(getattr(mine, f.name), getattr(generated, f.name), f"{where}.{f.name}")
    elif isinstance(mine, dict) and hasattr(generated, "__attrs_attrs__"):
        declared = _declared(type(generated))
        for key, value in mine.items():
            if key in declared:
                _same(value, getattr(generated, key), f"{where}.{key}")
            else:  # a free-form object (additional properties)
                assert generated[key] == value, f"{where}.{key}"
    elif isinstance(mine, list):
        assert len(mine) == len(generated), where
        for i, (a, b) in enumerate(zip(mine, generated, strict=True)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(generated, Unset):
        assert mine in (None, False, [], {}), where
    elif isinstance(generated, datetime) and isinstance(mine, str):
        assert datetime.fromisoformat(mine) == generated, where
    elif isinstance(generated, uuid.UUID) and isinstance(mine, str):
        assert uuid.UUID(mine) == generated, where
    elif isinstance(generated, Enum):
        assert generated.value == mine, where
    else:
        assert mine == generated, where


def test_the_reference_client_calls_only_what_this_test_covers():
    public = {
        name
        for name in vars(ClaraClient)
        if not name.startswith("_") and callable(getattr(ClaraClient, name))
    }
    assert public - {"close"} == CLIENT_CALLS


def test_the_reference_client_and_the_generated_client_agree_on_every_operation(api_key):
    recorder = Recorder()
    client = ClaraClient(BASE_URL, api_key, transport=recorder, backoff=0)
    now = datetime.now(UTC).replace(microsecond=0)
    calm = Emotion("calm", 0.7, 0.1, "stable")
    results = {}

    session = client.resolve_session(
        user_id=uuid.uuid4(), display_name="Nana", started_at=now - timedelta(hours=1)
    )
    sid = session.session_id
    results["resolve_session"] = session
    results["get_session"] = client.get_session(sid)
    context = client.context(sid, "Where am I?", calm, occurred_at=now - timedelta(minutes=30))
    results["build_context"] = context
    results["query_memory"] = client.query(sid, "Where am I?", calm)
    results["store_exchange"] = client.store_exchange(
        sid,
        "Where am I?",
        "You're at home, and I'm right here with you.",
        emotion=calm,
        intent="location",
        narrative=context.narrative,
        processing_time_ms=12,
        occurred_at=now - timedelta(minutes=20),
    )
    results["list_messages"] = client.messages(sid, limit=10)
    results["close_session"] = client.close_session(sid, ended_at=now - timedelta(minutes=1))
    results["close_session again"] = client.close_session(sid)  # no body at all

    seen = set()
    for request, answer in recorder.exchanges:
        template, path_params = _operation(request.url.path)
        module, model = OPERATIONS[(request.method, template)]
        seen.add((request.method, template))
        kwargs: dict = {**path_params, **{k: int(v) for k, v in request.url.params.items()}}
        body = _body(request)
        if model is not None:
            if body is not None:
                assert set(body) <= _declared(model), f"{template}: undeclared {set(body)}"
                kwargs["body"] = model.from_dict(body)
            else:
                kwargs["body"] = UNSET
        replay = Replay(answer)
        generated = AuthenticatedClient(
            base_url=BASE_URL,
            token=api_key,
            httpx_args={"transport": replay},
            raise_on_unexpected_status=True,
        )
        with generated:
            response = module.sync_detailed(**kwargs, client=generated)

        sent = replay.request
        assert (sent.method, sent.url.path, sent.url.params) == (
            request.method,
            request.url.path,
            request.url.params,
        )
        assert _body(sent) == body, template
        assert sent.headers["authorization"] == request.headers["authorization"]
        assert response.status_code == answer.status_code
        assert not isinstance(response.parsed, ErrorOut), template

        name = module.__name__.rsplit(".", 1)[1]
        mine = results.pop(name, None) or results.pop(f"{name} again")
        parsed = response.parsed
        if name == "list_messages":
            _same(mine, parsed.messages, name)
        elif name == "store_exchange":
            assert not mine.pending
            _same(
                [mine.user_message_id, mine.user_sequence_number],
                [parsed.user_message.message_id, parsed.user_message.sequence_number],
                name,
            )
            _same(
                [mine.assistant_message_id, mine.assistant_sequence_number],
                [parsed.assistant_message.message_id, parsed.assistant_message.sequence_number],
                name,
            )
        else:
            _same(mine, parsed, name)

    assert seen == set(OPERATIONS)
    assert results == {}
