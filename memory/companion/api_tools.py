"""Agent tools over REST: the tool definitions an LLM is given, and calling one."""

from typing import Any, Literal

from ninja import Body, Router

from memory.companion import tools as agent_tools
from memory.conversations import tenancy
from memory.conversations.models import Scope
from memory.core.schemas import ERRORS

router = Router(tags=["agent tools"])


@router.get("/tools/schemas", response={200: list[dict[str, Any]], **ERRORS})
def tool_schemas(request, format: Literal["openai", "anthropic"] = "openai"):
    """The memory tools as function-calling schemas for an LLM (OpenAI or Anthropic format)."""
    tenancy.request_caller(request, Scope.MEMORIES_READ)
    return agent_tools.schemas(format)


@router.post("/tools/{name}", response={200: dict[str, Any], **ERRORS})
def call_tool(request, name: str, arguments: Body[dict[str, Any]]):
    """Run one memory tool with the arguments an LLM produced; bad arguments are a 422."""
    return agent_tools.call(name, arguments, caller=tenancy.caller_for_key(request.auth))
