"""The MCP server end to end, with the SDK's own client: over stdio and over streamable HTTP.

Each server runs as `manage.py mcp_server` in a subprocess on the test database (committed data,
hence `transaction=True`). The client side runs in `anyio.run`; the ORM work (fixtures, checks
of what was stored) stays in the test's own thread, outside the event loop.
"""

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import anyio
import httpx2
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memory.companion import mcp as mcp_server
from memory.companion import tools as agent_tools
from memory.conversations import services
from memory.core.errors import DomainError
from memory.models import ApiKey, Memory, PersonNotes

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # seconds for one client conversation; a loaded 2-core machine is slow to start

pytestmark = pytest.mark.django_db(transaction=True)


def _database_url() -> str:
    """The test database as a URL, so a subprocess uses the same one (as in test_worker)."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    host = db["HOST"] or "127.0.0.1"
    return f"postgres://{db['USER']}{password}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def _server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "DEBUG": "1", "CLARA_DATA_DIR": str(tmp_path)}
    env["DATABASE_URL"] = _database_url()
    env.pop("CLARA_API_KEY", None)
    env.update(extra)
    return env


def _command(*args: str) -> list[str]:
    return [sys.executable, "manage.py", "mcp_server", *args]


@pytest.fixture
def conversation(db):
    """A person in a session, and a live key."""
    session, _ = services.session_resolve(
        session_id=uuid.uuid4(), user_id=uuid.uuid4(), display_name="Nana"
    )
    _, raw_key = services.api_key_create(name="mcp test")
    return {"person_id": str(session.person_id), "session_id": str(session.id), "key": raw_key}


def _body(result) -> dict:
    """A tool result's JSON: the text block and the structured content say the same."""
    body = json.loads(result.content[0].text)
    assert result.structured_content == body
    return body


async def _exercise(client: Client, conversation: dict) -> dict:
    """List the tools and use each one as an agent would; return what get_context gave."""
    pid, sid = conversation["person_id"], conversation["session_id"]
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(listed) == [
        "search_memory",
        "upsert_memory",
        "forget_memory",
        "update_status",
        "get_context",
    ]
    # The input schema is the pydantic model's own: the one REST and function calling use.
    for name, tool in listed.items():
        assert tool.input_schema == agent_tools._parameters(agent_tools.MCP_TOOLS[name].args)
    assert listed["search_memory"].annotations.read_only_hint is True
    assert listed["forget_memory"].annotations.destructive_hint is True

    stored = await client.call_tool(
        "upsert_memory",
        {"person_id": pid, "content": "Her grandson Leo plays football", "type": "people"},
    )
    assert not stored.is_error, stored
    assert _body(stored)["action"] == "created"

    found = await client.call_tool("search_memory", {"person_id": pid, "query": "grandson"})
    # Not confirmed by a caregiver: in dementia-safe care (the default) it is not handed out.
    assert _body(found)["facts"] == []

    status = await client.call_tool(
        "update_status", {"person_id": pid, "fields": {"mood": "bright this morning"}}
    )
    assert _body(status)["fields"]["mood"]["value"] == "bright this morning"

    context = await client.call_tool(
        "get_context",
        {
            "session_id": sid,
            "message": "Where is Leo today?",
            "emotion": {
                "emotion": "calm",
                "confidence": 0.9,
                "distress_score": 0.1,
                "trajectory": "stable",
            },
        },
    )
    assert not context.is_error, context

    # A bad argument is a tool error naming the field, in the REST error shape.
    bad = await client.call_tool(
        "upsert_memory", {"person_id": pid, "content": "Likes tea", "importance": 9}
    )
    assert bad.is_error
    assert _body(bad)["field"] == "importance" and _body(bad)["code"] == "invalid"
    bad_emotion = await client.call_tool(
        "get_context",
        {"session_id": sid, "message": "Hello", "emotion": {"emotion": "calm", "confidence": 3}},
    )
    assert bad_emotion.is_error and _body(bad_emotion)["field"].startswith("emotion.")
    unknown_session = await client.call_tool(
        "get_context", {"session_id": str(uuid.uuid4()), "message": "Hello"}
    )
    assert unknown_session.is_error and _body(unknown_session)["code"] == "not_found"
    # An unknown tool is a protocol error, not a tool result.
    with pytest.raises(MCPError):
        await client.call_tool("drop_everything", {})
    return _body(context)


def _check_stored_and_context(api, conversation: dict, context: dict) -> None:
    """What the tools wrote is in the database; get_context matches the REST turn, minus analysis."""
    memory = Memory.objects.get(person_id=conversation["person_id"])
    assert memory.content == "Her grandson Leo plays football"
    assert memory.source == Memory.Source.TOOL and memory.confirmed is False
    notes = PersonNotes.objects.get(person_id=conversation["person_id"])
    assert notes.fields["mood"]["value"] == "bright this morning"

    rest = api.post(
        f"/api/v1/sessions/{conversation['session_id']}/context",
        {
            "message": "Where is Leo today?",
            "emotion": {
                "emotion": "calm",
                "confidence": 0.9,
                "distress_score": 0.1,
                "trajectory": "stable",
            },
        },
    ).json()
    # Repeat counts are for the bot's logic; an MCP tool's result goes to the LLM.
    assert "analysis" in rest and "analysis" not in context
    assert set(context) == {"system_prompt", "messages", "max_tokens", "narrative"}
    assert context == {key: rest[key] for key in context}
    assert context["messages"][-1] == {"role": "user", "content": "Where is Leo today?"}


# --- stdio -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "why"),
    [("", "CLARA_API_KEY is not set"), ("clara_nothere_notakey", "not a live API key")],
)
@pytest.mark.django_db  # no server process: roll back rather than flush
def test_stdio_refuses_to_start_without_a_live_key(monkeypatch, key, why):
    # In process: the refusal comes before the server would take over stdin and stdout.
    monkeypatch.setenv("CLARA_API_KEY", key)
    with pytest.raises(CommandError, match=why):
        call_command("mcp_server", "--transport", "stdio")


def test_stdio_tools_end_to_end(conversation, tmp_path, api):
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_server", "--transport", "stdio"],
        env=_server_env(tmp_path, CLARA_API_KEY=conversation["key"]),
        cwd=str(ROOT),
    )
    log_path = tmp_path / "stdio.log"

    async def scenario() -> tuple[dict, object]:
        with anyio.fail_after(TIMEOUT), open(log_path, "w") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                context = await _exercise(client, conversation)
                # Revoking the key stops the running server at the next call.
                await anyio.to_thread.run_sync(_revoke, conversation["key"])
                refused = await client.call_tool(
                    "search_memory", {"person_id": conversation["person_id"], "query": "x"}
                )
                return context, refused

    try:
        context, refused = anyio.run(scenario)
    except BaseException:
        print(log_path.read_text())
        raise
    assert refused.is_error and _body(refused)["code"] == "unauthorized"
    _check_stored_and_context(api, conversation, context)


def _revoke(raw_key: str) -> None:
    prefix = raw_key.split("_")[1]
    services.api_key_revoke(key=ApiKey.objects.get(prefix=prefix))
    connection.close()


# --- streamable HTTP ---------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def http_server(tmp_path_factory, django_db_setup):
    """`manage.py mcp_server --transport http` on a free port; yield its /mcp URL.

    One server for the module: it keeps no state between requests but its MCP sessions, and
    every request's key is checked against the database as it is when the request arrives.
    """
    tmp_path = tmp_path_factory.mktemp("mcp-http")
    port = _free_port()
    log_path = tmp_path / "http.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            _command("--transport", "http", "--port", str(port)),
            cwd=ROOT,
            env=_server_env(tmp_path),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            assert process.poll() is None, log_path.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}{mcp_server.HTTP_PATH}"
    except BaseException:
        print(log_path.read_text())
        raise
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _mcp_client(url: str, raw_key: str, mode: str = "auto") -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw_key}"}, timeout=TIMEOUT)
    return Client(streamable_http_client(url, http_client=http), mode=mode)


# auto: the 2026 protocol (server/discover, no session); legacy: the initialize handshake and an
# MCP session, which most MCP clients still speak.
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_http_tools_end_to_end(conversation, http_server, api, mode):
    async def scenario() -> dict:
        with anyio.fail_after(TIMEOUT):
            async with _mcp_client(http_server, conversation["key"], mode) as client:
                assert (client.protocol_version == "2026-07-28") == (mode == "auto")
                return await _exercise(client, conversation)

    context = anyio.run(scenario)
    _check_stored_and_context(api, conversation, context)


def test_http_rejects_requests_without_a_live_key(conversation, http_server):
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}

    async def post(extra: dict[str, str]) -> httpx2.Response:
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            return await http.post(http_server, json=initialize, headers=headers | extra)

    async def scenario() -> list[httpx2.Response]:
        with anyio.fail_after(TIMEOUT):
            return [
                await post({}),
                await post({"Authorization": "Bearer clara_nothere_notakey"}),
                await post({"Authorization": f"Basic {conversation['key']}"}),
                await post({"Authorization": f"Bearer {conversation['key']}"}),
                # DNS rebinding: a page on another site that resolves to 127.0.0.1.
                await post(
                    {"Authorization": f"Bearer {conversation['key']}", "Host": "evil.example"}
                ),
            ]

    missing, wrong, not_bearer, good, rebound = anyio.run(scenario)
    for refused in (missing, wrong, not_bearer):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
    assert good.status_code == 200
    assert rebound.status_code == 421

    # The SDK's client, with a wrong key, cannot even connect.
    async def connect_with_wrong_key() -> None:
        with anyio.fail_after(TIMEOUT):
            async with _mcp_client(http_server, "clara_nothere_notakey") as client:
                await client.list_tools()

    with pytest.raises(BaseExceptionGroup) as refused:
        anyio.run(connect_with_wrong_key)
    assert refused.group_contains(MCPError, depth=None)


# --- authorization and budget, in process -------------------------------------------------------
# No server process reads these tests' data, so they roll back instead of flushing the database.


@pytest.mark.django_db
def test_a_tool_call_counts_against_the_keys_rate_limit(conversation, settings):
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 2
    prefix = conversation["key"].split("_")[1]
    arguments = {"person_id": conversation["person_id"], "query": "tea"}
    for _ in range(2):
        mcp_server.run_tool("search_memory", arguments, key_prefix=prefix, raw_key=None)
    with pytest.raises(mcp_server.RateLimited):
        mcp_server.run_tool("search_memory", arguments, key_prefix=prefix, raw_key=None)


@pytest.mark.django_db
def test_a_call_without_a_key_is_refused(conversation):
    arguments = {"person_id": conversation["person_id"], "query": "tea"}
    for key_prefix, raw_key in [(None, None), (None, "clara_nothere_notakey")]:
        with pytest.raises(DomainError) as refused:
            mcp_server.run_tool("search_memory", arguments, key_prefix=key_prefix, raw_key=raw_key)
        assert refused.value.code == "unauthorized"


@pytest.mark.django_db
def test_a_public_http_server_accepts_only_the_allowed_hosts(settings):
    settings.ALLOWED_HOSTS = ["memory.example.org"]
    checks = mcp_server.transport_security("0.0.0.0")
    assert checks.enable_dns_rebinding_protection
    assert checks.allowed_hosts == ["memory.example.org", "memory.example.org:*"]
    assert "https://memory.example.org" in checks.allowed_origins
    # On loopback the SDK's own checks apply (loopback names only).
    assert mcp_server.transport_security("127.0.0.1") is None
