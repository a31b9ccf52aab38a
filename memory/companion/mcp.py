"""Clara's memory tools over the Model Context Protocol: stdio and streamable HTTP.

The tools are the agent tools of `memory.companion.tools` (`MCP_TOOLS`): each MCP tool's input
schema is its pydantic argument model's JSON schema, and a call goes through
`agent_tools.call`, so the MCP server, the REST /tools endpoints and the function-calling
schemas validate and behave alike. A bad argument or a refused call comes back as an MCP tool
error (`isError`) whose text is the REST error body, `{"detail", "code", "field"}`.

Auth is the REST API's: a live bot API key (`manage.py create_api_key`). Over stdio the key comes
from the environment and is checked at start and again on every call (a revoked key stops
working); over HTTP every request carries `Authorization: Bearer <key>`, checked by the SDK's
bearer-auth middleware with `ClaraKeyVerifier` (401 without a live key), and an MCP session
only answers the key that opened it. Every tool call counts against the key's per-minute budget,
shared with the REST API.

The Django ORM is synchronous: tool calls and key checks run in asgiref's one shared sync thread
(`thread_sensitive=True`, as Django's own async views do), with stale connections closed before
and after each call, as Django does around a request.
"""

import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, close_old_connections
from django.utils import timezone
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from starlette.applications import Starlette

from clara import ratelimit
from memory.companion import tools as agent_tools
from memory.conversations import services, tenancy
from memory.conversations.models import AccessChannel, ApiKey
from memory.core.errors import DomainError

logger = logging.getLogger(__name__)

SERVER_NAME = "clara-memory"
HTTP_PATH = "/mcp"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

# Hints for MCP clients (they may ask before running a tool that changes or deletes things).
ANNOTATIONS = {
    "search_memory": ToolAnnotations(read_only_hint=True, open_world_hint=False),
    "get_context": ToolAnnotations(read_only_hint=True, open_world_hint=False),
    "upsert_memory": ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
    "update_status": ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
    ),
    "forget_memory": ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
    ),
}


class Unauthorized(DomainError):
    status = 401
    code = "unauthorized"


class RateLimited(DomainError):
    status = 429
    code = "rate_limited"


_T = TypeVar("_T")


def _with_fresh_connection(fn: Callable[..., _T]) -> Callable[..., _T]:
    """Run `fn` between two `close_old_connections()`, like a Django request.

    Drops a connection that is past CONN_MAX_AGE or broken before the call, and after it (on
    SQLite in development CONN_MAX_AGE is 0, so the file is not held open between calls).
    """

    def wrapper(*args: Any, **kwargs: Any) -> _T:
        close_old_connections()
        try:
            return fn(*args, **kwargs)
        finally:
            close_old_connections()

    return wrapper


async def in_django_thread(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Run ORM code from async code: in asgiref's shared sync thread, one call at a time."""
    return await sync_to_async(_with_fresh_connection(fn), thread_sensitive=True)(*args, **kwargs)


def authenticate_key(raw_key: str) -> str | None:
    """The prefix of the live API key `raw_key`, or None. Records the key's use."""
    key = services.api_key_authenticate(raw_key=raw_key)
    return None if key is None else key.prefix


class ClaraKeyVerifier:
    """The SDK's TokenVerifier for Clara's bot API keys: a bearer token is a live key or nothing."""

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            prefix = await in_django_thread(authenticate_key, token)
        except DatabaseError:
            # As the REST API: the key cannot be checked, so the request is not let in.
            logger.warning("could not check an MCP API key: the database is unavailable")
            return None
        if prefix is None:
            return None
        # client_id identifies the key (its public prefix); sessions are bound to it.
        return AccessToken(token=token, client_id=prefix, scopes=[])


def _tool_list() -> list[Tool]:
    return [
        Tool(
            name=tool.name,
            description=tool.description,
            input_schema=agent_tools._parameters(tool.args),
            annotations=ANNOTATIONS.get(tool.name),
        )
        for tool in agent_tools.MCP_TOOLS.values()
    ]


def _input_schema(name: str) -> dict[str, Any] | None:
    tool = agent_tools.MCP_TOOLS.get(name)
    return None if tool is None else agent_tools._parameters(tool.args)


def _json(value: Any) -> Any:
    """`value` as plain JSON types (ids and times as strings)."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def _error(detail: str, code: str, field: str | None) -> CallToolResult:
    body = {"detail": detail, "code": code, "field": field}
    return CallToolResult(
        content=[TextContent(text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def run_tool(
    name: str, arguments: dict[str, Any], *, key_prefix: str | None, raw_key: str | None
) -> dict[str, Any]:
    """Authorize one tool call for a key, count it against the key's budget and run the tool.

    `raw_key` (stdio) is checked again here, so revoking the key stops a running server;
    `key_prefix` (HTTP) is a key the bearer middleware has just checked. Raises DomainError.
    """
    if raw_key is not None:
        key_prefix = authenticate_key(raw_key)
    if key_prefix is None:
        raise Unauthorized("The API key is missing, revoked or wrong.", field="api_key")
    decision = ratelimit.hit(
        client_id=f"key:{key_prefix}", limit=settings.CLARA_API_RATE_LIMIT_PER_MINUTE
    )
    if not decision.allowed:
        wait = max(1, decision.retry_after)
        raise RateLimited(f"Too many requests for this API key; retry in {wait} s.")
    key = ApiKey.objects.filter(prefix=key_prefix, revoked_at__isnull=True).first()
    if key is None or (key.expires_at is not None and key.expires_at <= timezone.now()):
        raise Unauthorized("The API key is missing, revoked or wrong.", field="api_key")
    caller = tenancy.caller_for_key(key)
    return agent_tools.call(
        name, arguments, caller=caller, tools=agent_tools.MCP_TOOLS, channel=AccessChannel.MCP
    )


def _http_key_prefix(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The key the bearer middleware accepted for this HTTP request (None on stdio)."""
    request = ctx.request
    if request is None:
        return None
    user = request.scope.get("user")
    return user.access_token.client_id if isinstance(user, AuthenticatedUser) else None


def build_server(*, stdio_key: str | None = None) -> Server[Any]:
    """The MCP server. `stdio_key` is the API key a stdio server runs with (None over HTTP)."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=_tool_list())

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        if params.name not in agent_tools.MCP_TOOLS:
            # An unknown tool is a protocol error in MCP, not a tool error.
            raise MCPError(code=INVALID_PARAMS, message=f"No tool named {params.name!r}.")
        try:
            result = await in_django_thread(
                run_tool,
                params.name,
                params.arguments or {},
                key_prefix=_http_key_prefix(ctx),
                raw_key=stdio_key,
            )
        except DomainError as exc:
            return _error(exc.detail, exc.code, exc.field)
        except DatabaseError as exc:
            logger.warning("database error in MCP tool %s: %s", params.name, type(exc).__name__)
            return _error(
                "The memory store is busy or unavailable; retry shortly.", "unavailable", None
            )
        except Exception:
            logger.exception("MCP tool %s failed", params.name)
            raise MCPError(code=INTERNAL_ERROR, message="Internal error.") from None
        body = _json(result)
        return CallToolResult(
            content=[TextContent(text=json.dumps(body, ensure_ascii=False))],
            structured_content=body,
        )

    return Server(
        SERVER_NAME,
        title="Clara Memory",
        instructions=(
            "Memory for a companion of a person living with dementia. Use it to choose warm, "
            "familiar topics; never to quiz, test or correct the person, and never state an "
            "unconfirmed fact as true."
        ),
        get_tool_input_schema=_input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(*, raw_key: str) -> None:
    """Serve MCP over this process's stdin and stdout until the client closes stdin."""
    server = build_server(stdio_key=raw_key)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(*, raw_key: str) -> None:
    anyio.run(lambda: serve_stdio(raw_key=raw_key))


def transport_security(host: str) -> TransportSecuritySettings | None:
    """Host/Origin checks against DNS rebinding: the SDK's for loopback, else ALLOWED_HOSTS."""
    if host in LOOPBACK_HOSTS:
        return None  # the SDK allows only loopback Host and Origin headers
    allowed = list(settings.ALLOWED_HOSTS)
    if "*" in allowed:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        allowed_hosts=allowed + [f"{name}:*" for name in allowed],
        allowed_origins=[f"{scheme}://{name}" for name in allowed for scheme in ("https", "http")],
    )


def http_app(*, host: str = "127.0.0.1", port: int = 8765) -> Starlette:
    """The streamable HTTP app, at /mcp, behind the SDK's bearer-auth middleware."""
    server = build_server()
    authority = f"[{host}]" if ":" in host else host
    return server.streamable_http_app(
        streamable_http_path=HTTP_PATH,
        max_request_body_size=settings.CLARA_API_MAX_BODY_BYTES,
        transport_security=transport_security(host),
        host=host,
        # Clara issues the keys itself (no OAuth server): the SDK needs an issuer URL for its
        # auth settings, and with no resource_server_url it publishes no OAuth metadata.
        auth=AuthSettings(issuer_url=f"http://{authority}:{port}", resource_server_url=None),
        token_verifier=ClaraKeyVerifier(),
    )


def run_http(*, host: str, port: int) -> None:
    """Serve MCP over streamable HTTP at http://host:port/mcp until interrupted."""
    import uvicorn

    uvicorn.run(http_app(host=host, port=port), host=host, port=port, log_level="info")
