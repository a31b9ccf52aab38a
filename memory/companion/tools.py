"""Memory tools an LLM agent can call: search_memory, upsert_memory, forget_memory, update_status.

One definition per tool (a pydantic model for its arguments, a description, a function) gives
the JSON schemas in OpenAI's and Anthropic's function formats, the REST endpoint
(/api/v1/tools/<name>) and the MCP server the same behaviour and the same checks.

Every call of these tools leaves one audit row (memory.conversations.audit), with the channel
it came through (REST or MCP); get_context, the MCP form of the per-turn /context, does not.

Dementia-safe by construction: for a person whose persona keeps Clara's rules (the default),
search hands out caregiver-confirmed facts only, as the per-turn prompt does; under a continuous
companion's policy facts come back with whether a caregiver confirmed them, and an unconfirmed
one carries a note not to state it as true or ask the person about it. Conversation search only
looks inside the session in progress and returns what was said, never when or how often.

Behind the same firewall as the prompt (memory.core.screening, memory/companion/prompt.py): a
stored fact, entity card or note that the prompt would hold back is not handed to the LLM. A
fact or note comes back as a marker with no text ("withheld for staff review", its id and the
reasons as codes), so the LLM and the bot's developer know something is there and where staff
review it, and a search still returns as many results as asked; a card, a summary built from
facts, is left out. Staff approvals (dashboard, "Kept from Clara for your review") let a text
through here as in the prompt.
"""

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memory.companion import context, continuity
from memory.companion import prompt as firewall_rules
from memory.conversations import audit, tenancy
from memory.conversations.models import (
    AccessAction,
    AccessChannel,
    ChatMessage,
    MemoryPolicy,
    Person,
    Scope,
    Session,
)
from memory.conversations.schemas import EmotionIn, MessageText, PastTime, emotion_reading
from memory.conversations.tenancy import Caller
from memory.core import strict_json
from memory.core.errors import Invalid, NotFound
from memory.core.screening import Approvals
from memory.facts import notes as person_notes
from memory.facts import ranking as retrieval
from memory.facts import search, store, usage
from memory.facts.models import Memory, MemoryType

UNCONFIRMED_NOTE = (
    "Mentioned in conversation, not confirmed by the family: do not state it as fact, and never "
    "ask the person about it."
)
# What a held-back item says in place of its text.
WITHHELD = "Withheld for staff review."
# Sources as the prompt has them: a caregiver-confirmed fact may carry sad news staff stand
# behind; an unconfirmed one or a note may not (instructions, links and requests never pass).
_UNCONFIRMED = firewall_rules.Source("not confirmed")
_NOTE = firewall_rules.Source("your note")
MemoryTypeName = Literal[tuple(MemoryType.values)]  # type: ignore[valid-type]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchMemoryArgs(_Args):
    person_id: uuid.UUID = Field(description="The person the companion is talking with.")
    query: str = Field(min_length=1, max_length=2000, description="What to look for.")
    scope: Literal["facts", "conversations", "both"] = Field(
        default="facts",
        description="facts: what is remembered about the person; conversations: what was said "
        "earlier in the current session; both.",
    )
    session_id: uuid.UUID | None = Field(
        default=None, description="The current session; needed to search conversations."
    )
    types: list[MemoryTypeName] = Field(default=[], description="Only these kinds of facts.")
    limit: int = Field(default=5, ge=1, le=20)


class UpsertMemoryArgs(_Args):
    person_id: uuid.UUID
    content: str = Field(
        min_length=1,
        max_length=store.MAX_CONTENT_TOKENS * store.CHARS_PER_TOKEN,
        description="The fact, short and in the third person ('Her daughter is Sarah').",
    )
    type: MemoryTypeName = Field(default=MemoryType.OTHER)
    key: str | None = Field(default=None, min_length=1, max_length=store.MAX_KEY)
    memory_key: str = Field(
        default="",
        max_length=300,
        description="Stable identity of the fact (e.g. 'people|person|sarah|relationship'); the "
        "same identity with a new value replaces the old one.",
    )
    entity_refs: list[str] = Field(default=[], max_length=store.MAX_ENTITY_REFS)
    entity_labels: dict[str, str] = {}
    importance: int | None = Field(default=None, ge=0, le=3)


class ForgetMemoryArgs(_Args):
    person_id: uuid.UUID
    memory_id: uuid.UUID | None = None
    entity: str | None = Field(default=None, description="Forget everything about 'person:sarah'.")


class UpdateStatusArgs(_Args):
    person_id: uuid.UUID
    fields: dict[str, str | int | float | bool | None] = Field(
        description="Note fields to set (null removes one); each records when it was set."
    )
    persona: str | None = Field(default=None, max_length=32)


def _person(caller: Caller, person_id: uuid.UUID):
    """The caller's person; another organisation's is answered like an unknown one."""
    return tenancy.person_of(caller, person_id)


def _fact_out(memory: Memory, approvals: Approvals) -> dict[str, Any]:
    source = firewall_rules.CONFIRMED if memory.confirmed else _UNCONFIRMED
    reasons = source.withheld(memory.content, approvals)
    if reasons:
        return {
            "id": str(memory.id),
            "type": memory.type,
            "confirmed": memory.confirmed,
            "withheld": WITHHELD,
            "reasons": list(reasons),
        }
    out = {
        "id": str(memory.id),
        "key": memory.key,
        "type": memory.type,
        "content": memory.content,
        "confirmed": memory.confirmed,
    }
    if not memory.confirmed:
        out["note"] = UNCONFIRMED_NOTE
    return out


def search_memory(args: SearchMemoryArgs, caller: Caller) -> dict[str, Any]:
    """Facts about the person and/or what was said earlier in this session."""
    person = _person(caller, args.person_id)
    out: dict[str, Any] = {}
    if args.scope in ("facts", "both"):
        # Cards are built from confirmed facts only; in dementia-safe care so are the facts.
        confirmed = search.memory_search(
            prefix=store.person_namespace(args.person_id),
            query=args.query,
            types=args.types,
            limit=args.limit,
            confirmed=True,
            entity_cards=True,
        )
        result = confirmed
        if continuity.policy_of(args.person_id) != MemoryPolicy.DEMENTIA_SAFE:
            result = search.memory_search(
                prefix=store.person_namespace(args.person_id),
                query=args.query,
                types=args.types,
                limit=args.limit,
                entity_cards=False,
            )
        approvals = Approvals.of(person.id, person.approved_texts)
        out["facts"] = [_fact_out(hit.memory, approvals) for hit in result.hits]
        out["entity_cards"] = [
            card
            for card in confirmed.entity_cards
            if not firewall_rules.CONFIRMED.withheld(card, approvals)
        ]
        usage.note(hit.memory.id for hit in result.hits)
    if args.scope in ("conversations", "both"):
        out["conversation"] = _search_session(args, person)
    return out


def _search_session(args: SearchMemoryArgs, person) -> list[dict[str, str]]:
    """Keyword search of what was said. In dementia-safe care, inside the current session only
    (earlier sessions are never searched); a continuous companion searches its own persona's
    conversation across sessions, as far back as continuity.SEARCHABLE_MESSAGES."""
    if continuity.policy_of(person.id) == MemoryPolicy.CONTINUOUS:
        messages = continuity.searchable_stream(person)
    else:
        if args.session_id is None:
            raise Invalid(
                "Searching conversations needs the current session_id.", field="session_id"
            )
        session = Session.objects.filter(id=args.session_id).first()
        if session is None or session.person_id != args.person_id:
            raise NotFound("No such session for this person.", field="session_id")
        messages = list(
            ChatMessage.objects.filter(session_id=session.id)
            .order_by("sequence_number")
            .values_list("role", "content")
        )
    if not messages:
        return []
    index = retrieval.BM25Index([retrieval.tokenize(content) for _, content in messages])
    scores = index.scores(retrieval.tokenize(args.query))
    order = [i for i in scores.argsort()[::-1] if scores[i] > 0][: args.limit]
    # In the order they were said; no times, no counts.
    return [{"role": messages[i][0], "content": messages[i][1]} for i in sorted(order)]


def upsert_memory(args: UpsertMemoryArgs, caller: Caller) -> dict[str, Any]:
    """Remember a fact about the person; it stays unconfirmed until a caregiver confirms it."""
    person = _person(caller, args.person_id)
    result = store.memory_upsert(
        namespace=store.person_namespace(args.person_id, args.type),
        key=args.key,
        content=args.content,
        type=args.type,
        memory_key=args.memory_key,
        entity_refs=args.entity_refs,
        entity_labels=args.entity_labels,
        importance=args.importance,
        source=Memory.Source.TOOL,
        confirmed=False,
    )
    approvals = Approvals.of(person.id, person.approved_texts)
    return {"action": result.action, "memory": _fact_out(result.memory, approvals)}


def forget_memory(args: ForgetMemoryArgs, caller: Caller) -> dict[str, Any]:
    """Forget one memory (by id) or everything about an entity."""
    if (args.memory_id is None) == (args.entity is None):
        raise Invalid("Give either memory_id or entity.", field="memory_id")
    _person(caller, args.person_id)
    if args.memory_id is not None:
        memory = Memory.objects.filter(id=args.memory_id, person_id=args.person_id).first()
        if memory is None:
            raise NotFound("No such memory for this person.", field="memory_id")
        return {"deleted": store.memory_forget(memory.id)}
    return {"deleted": store.memories_forget(person_id=args.person_id, entity=args.entity)}


def update_status(args: UpdateStatusArgs, caller: Caller) -> dict[str, Any]:
    """Set fields of the companion's notes about the person; each field keeps its update time."""
    notes = person_notes.notes_update(
        person_id=args.person_id,
        fields=args.fields,
        persona=args.persona,
        organisation_id=caller.organisation_id,
    )
    approved = Person.objects.filter(id=args.person_id).values_list("approved_texts", flat=True)
    approvals = Approvals.of(args.person_id, approved.first())
    return {"fields": {key: _note_out(value, approvals) for key, value in notes.fields.items()}}


def _note_out(value: Any, approvals: Approvals) -> Any:
    """A note field as the LLM may see it: held back like the prompt's notes."""
    if not isinstance(value, dict):
        return value
    reasons = _NOTE.withheld(str(value.get("value") or ""), approvals)
    if not reasons:
        return value
    return {"withheld": WITHHELD, "reasons": list(reasons), "updated_at": value.get("updated_at")}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args: type[_Args]
    # Runs with the validated arguments and the caller (their organisation and scopes).
    run: Callable[[Any, Caller], dict[str, Any]]
    # The API key scope a caller needs to run it.
    scope: str
    # False only for the per-turn path (get_context), which must stay fast.
    audited: bool = True


TOOLS = {
    tool.name: tool
    for tool in (
        Tool(
            "search_memory",
            "Look up what is remembered about the person, or what was said earlier in this "
            "conversation. Use it to choose warm, familiar topics; never to test or correct the "
            "person.",
            SearchMemoryArgs,
            search_memory,
            Scope.MEMORIES_READ,
        ),
        Tool(
            "upsert_memory",
            "Remember something the person shared about their life (people, routines, likes). "
            "The same fact again is merged, a changed fact replaces the old one.",
            UpsertMemoryArgs,
            upsert_memory,
            Scope.MEMORIES_WRITE,
        ),
        Tool(
            "forget_memory",
            "Forget a memory, or everything about one person or place, when asked to.",
            ForgetMemoryArgs,
            forget_memory,
            Scope.MEMORIES_WRITE,
        ),
        Tool(
            "update_status",
            "Keep short notes about how the person is doing (mood today, plans); each note "
            "records when it was written.",
            UpdateStatusArgs,
            update_status,
            Scope.MEMORIES_WRITE,
        ),
    )
}


def _parameters(model: type[_Args]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def schemas(format: str = "openai") -> list[dict[str, Any]]:
    """The tools in OpenAI's (`type: function`) or Anthropic's (`input_schema`) format."""
    out = []
    for tool in TOOLS.values():
        parameters = _parameters(tool.args)
        if format == "anthropic":
            out.append(
                {"name": tool.name, "description": tool.description, "input_schema": parameters}
            )
        else:
            out.append(
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": parameters,
                    },
                }
            )
    return out


def call(
    name: str,
    arguments: dict[str, Any],
    *,
    caller: Caller,
    tools: Mapping[str, Tool] = TOOLS,
    channel: str = AccessChannel.API,
) -> dict[str, Any]:
    """Validate an LLM's arguments for a tool and run it for `caller`; audits the call.

    Bad arguments raise Invalid naming the field; a caller without the tool's scope gets
    InsufficientScope; another organisation's person or session is NotFound. `channel` says
    where the call came from (REST or MCP), for the audit.
    """
    tool = tools.get(name)
    if tool is None:
        raise NotFound(f"No tool named {name!r}.", field="name")
    if not tool.audited:
        return _run(tool, arguments, caller)[0]
    person = arguments.get("person_id") if isinstance(arguments, dict) else None
    with audit.audited(
        caller, AccessAction.TOOL_CALL, channel=channel, object_id=tool.name, person=person
    ) as access:
        result, args = _run(tool, arguments, caller)
        # The tool has checked the person is the caller's.
        access.person_id = getattr(args, "person_id", None)
    return result


def _run(tool: Tool, arguments: dict[str, Any], caller: Caller) -> tuple[dict[str, Any], _Args]:
    caller.require(tool.scope)
    # The REST body was checked by the API's parser; MCP's arguments arrive parsed by the SDK.
    strict_json.check(arguments)
    try:
        args = tool.args.model_validate(arguments)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "arguments"
        raise Invalid(f"{field}: {error['msg']}", field=field) from None
    return tool.run(args, caller), args


# --- get_context: this turn's prompt, for MCP clients ---------------------------------------------


class GetContextArgs(_Args):
    # The same fields as the REST /sessions/{id}/context body (memory.conversations.schemas.QueryIn).
    session_id: uuid.UUID = Field(description="The conversation in progress.")
    message: MessageText = Field(description="What the person just said.")
    emotion: EmotionIn | None = Field(
        default=None,
        description="Your own reading of the message; without it the built-in reader is used.",
    )
    occurred_at: PastTime | None = Field(
        default=None, description="When the turn happened, for a replayed turn; default now."
    )


# What the REST flow hands to the LLM. The /context response's `analysis` (repeat counts, the
# window size) is for the bot's own logic only, and a tool's result goes to the LLM.
CONTEXT_FOR_LLM = ("system_prompt", "messages", "max_tokens", "narrative")


def get_context(args: GetContextArgs, caller: Caller) -> dict[str, Any]:
    """This turn's dementia-safe prompt: system prompt, this session's messages, story seed. Stores nothing."""
    body = context.context_for_bot(
        organisation_id=caller.organisation_id,
        session_id=args.session_id,
        message=args.message,
        emotion=emotion_reading(args.emotion),
        occurred_at=args.occurred_at,
    )
    return {key: body[key] for key in CONTEXT_FOR_LLM}


GET_CONTEXT = Tool(
    "get_context",
    "Before answering the person: what to know this turn, as a system prompt and this "
    "conversation's messages to answer from. Call it with what the person just said.",
    GetContextArgs,
    get_context,
    Scope.TURNS,
    audited=False,
)

# The MCP server's tools. get_context stays out of TOOLS (the REST /tools endpoints): a REST bot
# already builds each turn with POST /sessions/{id}/context, which also returns the analysis.
MCP_TOOLS: dict[str, Tool] = {**TOOLS, GET_CONTEXT.name: GET_CONTEXT}
