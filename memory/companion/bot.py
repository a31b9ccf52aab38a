"""The reference companion turn: ask the memory for context, reply, store the exchange.

    companion = Companion(client, replier_from_settings(display_name="Nana"))
    result = companion.turn(session_id, "Where am I?")
    print(result.reply)

A replier turns a `Context` into Clara's words. `OfflineReplier` needs no network: warm,
deterministic replies for demos and tests. `LLMReplier` asks an OpenAI-compatible server and falls
back to `OfflineReplier` whenever that fails, so a turn always has a kind answer.

The dementia-safe rules for every reply: never mention that something was said or asked before,
never quiz the person or correct them; reassure, and follow their feelings.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol
from uuid import UUID

import httpx

from memory.companion.client import ClaraClient, Context, Emotion, StoredExchange
from memory.core import llm

logger = logging.getLogger(__name__)

DISTRESSED = {"anxious", "fearful", "sad", "lonely", "confused"}
SHORT_REPLY_TOKENS = 80  # at or below this budget, a story is told without the name lead-in


class Replier(Protocol):
    def reply(self, session_id: UUID | str, message: str, context: Context) -> str:
        """Clara's reply to `message`, the last of `context.messages`."""
        ...


@dataclass(frozen=True)
class TurnResult:
    reply: str
    context: Context
    stored: StoredExchange
    intent: str
    processing_time_ms: int

    @property
    def escalate(self) -> bool:
        return self.context.analysis.escalate


class Companion:
    def __init__(self, client: ClaraClient, replier: Replier | None = None) -> None:
        self.client = client
        self.replier = replier or OfflineReplier()

    def turn(
        self,
        session_id: UUID | str,
        person_message: str,
        emotion: Emotion | None = None,
        *,
        occurred_at: datetime | None = None,
    ) -> TurnResult:
        """One turn: context → reply → store. Raises `ClaraApiError` if the memory refuses.

        `occurred_at` dates the turn (one replayed from an offline buffer): the context is
        built as of then, and the exchange is stored with that time.
        """
        started = time.monotonic()
        context = self.client.context(
            session_id, person_message, emotion=emotion, occurred_at=occurred_at
        )
        reply = self.replier.reply(session_id, person_message, context)
        intent = intent_for(context)
        elapsed_ms = int((time.monotonic() - started) * 1000)
        stored = self.client.store_exchange(
            session_id,
            person_message,
            reply,
            idempotency_key=str(uuid.uuid4()),
            emotion=emotion,
            intent=intent,
            narrative=context.narrative.ref() if context.narrative else None,
            processing_time_ms=elapsed_ms,
            escalation=context.analysis.escalate,
            occurred_at=occurred_at,
        )
        return TurnResult(
            reply=reply,
            context=context,
            stored=stored,
            intent=intent,
            processing_time_ms=elapsed_ms,
        )


def intent_for(context: Context) -> str:
    """What Clara's reply was for: comfort in a crisis, a story, or the kind of question."""
    if context.analysis.escalate:
        return "comfort"
    if context.narrative is not None:
        return "story"
    return context.analysis.question_type or "general"


# --- Offline replies --------------------------------------------------------------------------

# None of these may say or hint that the person has asked before, quiz them, or correct them.
_ANSWERS = {
    "location": [
        "You're somewhere safe, and I'm right here with you.",
        "You're in a safe, comfortable place, and you're not on your own.",
        "You're right where you need to be, safe and sound.",
        "This is a safe place, and I'm staying right here with you.",
    ],
    "identity": [
        "I'm Clara, a friend who loves keeping you company.",
        "I'm Clara. I'm here to chat with you and keep you company.",
        "My name is Clara, and I'm so glad to be talking with you.",
    ],
    "time": [
        "There's no rush at all today; we have all the time we need.",
        "It's a quiet part of the day, and there's nowhere you need to be just now.",
        "Everything is taken care of, so we can simply enjoy a chat.",
    ],
    "activity": [
        "How about we have a nice chat together? I'd love to hear about your favourite things.",
        "We could simply sit and talk for a while. What would you enjoy?",
        "Nothing needs doing right now. Shall we talk about something you love?",
    ],
    "person": [
        "You care about them so much. Tell me about them?",
        "They sound very dear to you. What are they like?",
        "It's lovely how much they mean to you. Would you like to tell me about them?",
    ],
    "general": [
        "That's lovely to hear. Tell me more?",
        "I'm enjoying our chat. What else is on your mind?",
        "Thank you for telling me. How are you feeling just now?",
        "I'm right here and listening.",
    ],
}
_COMFORT = {
    "anxious": [
        "It's alright to feel a bit unsettled.",
        "There's nothing to worry about right now.",
    ],
    "fearful": [
        "You're safe, and I'm right here with you.",
        "It's alright. You're safe, and I'm here.",
    ],
    "sad": [
        "I'm sorry you're feeling low.",
        "It's alright to feel sad sometimes.",
    ],
    "lonely": [
        "You're not on your own; I'm here with you.",
        "I'm so glad we're together right now.",
    ],
    "confused": [
        "That's alright, there's no need to figure anything out.",
        "It's alright, everything is taken care of.",
    ],
}
# Neutral enough for any story the memory picks: a calming story, grounding, reminiscence.
_STORY_LEADS = ["Oh, {name}.", "{name}, dear.", "Alright, {name}."]
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class OfflineReplier:
    """Warm, deterministic replies chosen from the context alone; no network."""

    def __init__(self, display_name: str | None = None) -> None:
        self.display_name = display_name

    def reply(self, session_id: UUID | str, message: str, context: Context) -> str:
        seed = f"{session_id}|{message}|{len(context.messages)}"
        analysis = context.analysis
        opening: list[str] = []
        story = context.narrative
        if analysis.escalate or (story is None and analysis.emotion in DISTRESSED):
            # A chosen story already speaks to the feeling; a crisis is met with comfort first.
            comfort = _COMFORT.get(analysis.emotion, _COMFORT["fearful"])
            opening.append(_pick(comfort, seed, "comfort"))
        elif story is not None and self.display_name and context.max_tokens > SHORT_REPLY_TOKENS:
            opening.append(_pick(_STORY_LEADS, seed, "lead").format(name=self.display_name))
        if story is not None:
            # The story the memory chose is always told: the exchange records that it was.
            body = story.text.strip()
        else:
            body = _pick(_ANSWERS.get(analysis.question_type, _ANSWERS["general"]), seed, "answer")
        return _fit(opening, body, context.max_tokens)


def _pick(options: list[str], seed: str, salt: str) -> str:
    digest = hashlib.sha256(f"{salt}|{seed}".encode()).digest()
    return options[int.from_bytes(digest[:8], "big") % len(options)]


def _fit(opening: list[str], body: str, max_tokens: int) -> str:
    """Roughly `max_tokens` (about 4 characters a token) of whole sentences.

    The body's first sentence is always kept; then the opening sentences that fit; then as much
    more of the body as fits.
    """
    budget = max(max_tokens, 1) * 4
    sentences = _SENTENCE_END.split(body)
    head, kept = [], sentences[:1]
    for sentence in opening:
        if len(" ".join([*head, sentence, *kept])) <= budget:
            head.append(sentence)
    for sentence in sentences[1:]:
        if len(" ".join([*head, *kept, sentence])) > budget:
            break
        kept.append(sentence)
    return " ".join(head + kept)


# --- LLM replies ------------------------------------------------------------------------------


class LLMReplier:
    """Asks an OpenAI-compatible chat model (memory/core/llm.py); offline reply on any failure."""

    def __init__(self, model: llm.ChatModel, *, display_name: str | None = None) -> None:
        self.model = model
        self.fallback = OfflineReplier(display_name)

    def reply(self, session_id: UUID | str, message: str, context: Context) -> str:
        try:
            return self.model.complete(
                [{"role": "system", "content": context.system_prompt}, *context.messages],
                temperature=0.7,
                max_tokens=context.max_tokens,
            )
        except llm.LLMError as exc:  # the person still gets a kind reply
            logger.warning("LLM reply failed (%s); using the offline reply", exc)
            return self.fallback.reply(session_id, message, context)


def replier_from_settings(display_name: str | None = None) -> Replier:
    """`LLMReplier` when CLARA_LLM_URL is set (with CLARA_LLM_MODEL, CLARA_LLM_API_KEY), else offline."""
    model = llm.chat_model()
    if model is None:
        return OfflineReplier(display_name)
    return LLMReplier(model, display_name=display_name)


# --- In-process -------------------------------------------------------------------------------


@contextmanager
def in_process_client(*, key_name: str, api_key: str | None = None) -> Iterator[ClaraClient]:
    """A client for this project's own bot API, called in-process through WSGI (no server).

    Needs Django set up. Without `api_key`, a temporary key named `key_name` is made and revoked
    afterwards. The requests share the caller's database connection, and so its transaction, as
    with Django's test client: otherwise Django would close it at the end of every request.
    """
    from django.conf import settings
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from clara.wsgi import application
    from memory.conversations import services

    temporary = None
    if api_key is None:
        temporary, api_key = services.api_key_create(name=key_name)
    # A host this project's own ALLOWED_HOSTS accepts, for requests that never leave it.
    host = next(
        (h for h in settings.ALLOWED_HOSTS if h and h != "*" and not h.startswith(".")),
        "localhost",
    )
    client = ClaraClient(f"http://{host}", api_key, transport=httpx.WSGITransport(app=application))
    # One INFO line per request would drown everything else.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    signals = (request_started, request_finished)
    disconnected = [signal for signal in signals if signal.disconnect(close_old_connections)]
    try:
        yield client
    finally:
        for signal in disconnected:
            signal.connect(close_old_connections)
        client.close()
        if temporary is not None:
            services.api_key_revoke(key=temporary)
