"""The published OpenAPI document: what ninja generates, finished so client generators and linters
take it as it is (`make lint-openapi` runs redocly and spectral on it).

Ninja describes each operation from its router; what every operation shares is added here, in one
place, rather than repeated in eight routers: the statuses answered before a view runs (400 from
a malformed request, 401 without a good key, 403 without the scope, 413 for a body over the
limit, 429 past the rate limit, 503 when the database is away), the short operation ids, the
server, the tags, contact and licence, and no schema that nothing uses.
"""

from typing import Any

# Operation ids are part of the contract: generated clients name their methods after them. Short
# and stable, keyed by the view's module and function so moving a router keeps its ids, and
# renaming a view fails tests/memory/test_openapi.py's frozen list instead of renaming a method.
OPERATION_IDS = {
    "memory.conversations.api.resolve_session": "resolve_session",
    "memory.conversations.api.get_session": "get_session",
    "memory.conversations.api.query_memory": "query_memory",
    "memory.conversations.api.store_exchange": "store_exchange",
    "memory.conversations.api.list_messages": "list_messages",
    "memory.conversations.api.close_session": "close_session",
    "memory.companion.api_context.build_context": "build_context",
    "memory.facts.api.put_memory": "put_memory",
    "memory.facts.api.get_memory": "get_memory",
    "memory.facts.api.delete_memory": "delete_memory",
    "memory.facts.api.memory_history": "get_memory_history",
    "memory.facts.api.search_memories": "search_memories",
    "memory.facts.api.list_namespaces": "list_namespaces",
    "memory.facts.api.person_memories": "list_person_memories",
    "memory.facts.api.person_memories_forget": "forget_memories",
    "memory.facts.api.person_memory_forget": "forget_memory",
    "memory.facts.api.person_memory_settings": "put_memory_settings",
    "memory.api_privacy.person_export": "export_person",
    "memory.api_privacy.person_erase": "erase_person",
    "memory.companion.api_tools.tool_schemas": "list_tool_schemas",
    "memory.companion.api_tools.call_tool": "call_tool",
    "memory.companion.api_turns.turn_message": "submit_turn_message",
    "memory.companion.api_turns.turn_next": "next_turn",
    "memory.companion.api_turns.turn_complete": "complete_turn",
    "memory.companion.api_turns.person_persona": "put_person_persona",
    "memory.companion.api_turns.persona_policy": "put_persona_policy",
    "memory.companion.api_checkins.outbox": "list_outbox",
    "memory.companion.api_checkins.outbox_delivered": "mark_outbox_delivered",
    "memory.companion.api_checkins.get_check_in_settings": "get_check_in_settings",
    "memory.companion.api_checkins.put_check_in_settings": "put_check_in_settings",
    "memory.webhooks.api.create_webhook": "create_webhook",
    "memory.webhooks.api.list_webhooks": "list_webhooks",
    "memory.webhooks.api.delete_webhook": "delete_webhook",
    "memory.webhooks.api.rotate_webhook_secret": "rotate_webhook_secret",
    "dashboard.fhir.api.person_fhir": "export_person_fhir",
}


def operation_id(view_func) -> str:
    """The operation's published id; a new view gets its function name until it is listed."""
    return OPERATION_IDS.get(f"{view_func.__module__}.{view_func.__name__}", view_func.__name__)


TAGS = [
    {
        "name": "sessions",
        "description": "A conversation: resolve or create it, the per-turn memory read and "
        "context, storing each exchange once, its messages, closing it.",
    },
    {
        "name": "turns and companions",
        "description": "The turn queue (messages gathered into one turn, answered once) and the "
        "persona each person talks with.",
    },
    {
        "name": "memories",
        "description": "Long-term memory: facts in namespaces, searched by meaning and words, "
        "kept with their history, forgotten on request.",
    },
    {
        "name": "privacy",
        "description": "A person as a whole: everything stored about them (JSON or CSV), and "
        "erasure. Audited.",
    },
    {
        "name": "check-ins",
        "description": "Messages the companion starts itself: when they may go, and the outbox "
        "the bot collects them from.",
    },
    {
        "name": "agent tools",
        "description": "The memory tools for an LLM agent: their schemas (OpenAI or Anthropic "
        "format) and calling one.",
    },
    {
        "name": "webhooks",
        "description": "An organisation's receivers of alert events (docs/webhooks.md).",
    },
]

# The project publishes no licence, so its terms are the default: all rights reserved (an SPDX
# LicenseRef, as OpenAPI 3.1 allows). No contact address is invented: whoever runs a deployment
# answers for it.
INFO = {
    "contact": {"name": "Clara Memory, the team operating this server"},
    "license": {
        "name": "Proprietary (all rights reserved)",
        "identifier": "LicenseRef-Proprietary",
    },
}

# A client is pointed at the server's root: every path starts with /api/v1 (a base URL that ends
# in /api/v1 would call /api/v1/api/v1/...).
SERVERS = [{"url": "/", "description": "This server; every path includes /api/v1."}]

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again.",
        "schema": {"type": "integer", "minimum": 1},
    }
}

# Answered before the view runs, so possible on every operation.
COMMON_ERRORS: dict[str, dict[str, Any]] = {
    "400": {
        "description": "Malformed request framing (a Content-Length that is not a number).",
    },
    "401": {
        "description": "No usable API key. `code` says why: missing_api_key, "
        "unsupported_auth_scheme (another scheme, or an X-API-Key header), malformed_api_key, "
        "unknown_api_key, revoked_api_key, expired_api_key.",
        "headers": {
            "WWW-Authenticate": {
                "description": 'RFC 6750: `Bearer realm="clara"`, with `error="invalid_token"` '
                "when a key was given but is not good.",
                "schema": {"type": "string"},
            }
        },
    },
    "403": {
        "description": "The key lacks the scope this operation needs (`insufficient_scope`; "
        "`field` names the scope).",
    },
    "404": {"description": "Not found, or not this organisation's (answered alike)."},
    "409": {"description": "Conflicts with what is stored (`field` names what)."},
    "413": {"description": "The body is over the server's limit (`too_large`)."},
    "422": {
        "description": "Invalid input: `field` names the first problem, `errors` lists each.",
    },
    "429": {
        "description": "Too many requests for this API key (`rate_limited`).",
        "headers": _RETRY_AFTER,
    },
    "503": {
        "description": "The memory store is busy or unavailable; retry (`unavailable`).",
        "headers": _RETRY_AFTER,
    },
}


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[1])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _prune_unused_schemas(schema: dict) -> None:
    """Drop component schemas nothing refers to (ninja registers `Query[...]` models there)."""
    components = schema.get("components", {}).get("schemas", {})
    used: set[str] = set()
    _refs(schema.get("paths", {}), used)
    pending = list(used)
    while pending:
        name = pending.pop()
        found: set[str] = set()
        _refs(components.get(name, {}), found)
        pending.extend(found - used)
        used |= found
    for name in list(components):
        if name not in used:
            del components[name]


def _optional_body(operation: dict) -> None:
    """An optional body is the schema itself with `required: false`, never `X | null`.

    `anyOf [X, null]` makes openapi-python-client send its UNSET marker as JSON and crash.
    """
    body = operation.get("requestBody")
    if not body or body.get("required"):
        return
    for media in body.get("content", {}).values():
        options = media.get("schema", {}).get("anyOf", [])
        real = [option for option in options if option != {"type": "null"}]
        if len(options) == 2 and len(real) == 1:
            media["schema"] = real[0]


def _text_first(responses: dict) -> None:
    """A response that may be CSV lists text/csv first.

    openapi-python-client reads only the first media type: with JSON first it parsed the CSV
    export as JSON and crashed; with text first it returns the text, which is both.
    """
    for response in responses.values():
        content = response.get("content", {})
        if "text/csv" in content:
            response["content"] = {"text/csv": content.pop("text/csv"), **content}


def finish(schema: dict) -> dict:
    """The document as published: ninja's, with what every operation shares (module docstring)."""
    schema["servers"] = SERVERS
    schema["tags"] = TAGS
    schema["info"].update(INFO)
    for methods in schema.get("paths", {}).values():
        for operation in methods.values():
            _optional_body(operation)
            # Ninja keys responses by int; JSON has only strings.
            responses = {str(status): value for status, value in operation["responses"].items()}
            for status, common in COMMON_ERRORS.items():
                response = responses.setdefault(status, {})
                response.update(common)
                response["content"] = _ERROR
            _text_first(responses)
            operation["responses"] = dict(sorted(responses.items()))
    _prune_unused_schemas(schema)
    return schema
