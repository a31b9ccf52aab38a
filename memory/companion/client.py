"""A small typed client for the Clara Memory bot API (`/api/v1/`).

    client = ClaraClient("http://127.0.0.1:8000", api_key)
    session = client.resolve_session(user_id=person_id, display_name="Nana")
    context = client.context(session.session_id, "Where am I?")
    ...  # ask the LLM with context.system_prompt + context.messages
    client.store_exchange(session.session_id, "Where am I?", reply)

Every call is retried on connection errors, timeouts and 502/503/504 (honouring `Retry-After`);
other errors raise `ClaraApiError` at once. `store_exchange` always sends an idempotency key and
reuses it on every retry, so an exchange is stored once however often it is sent. Pass
`transport=httpx.WSGITransport(app=...)` to talk to the app in-process, without a server.

This module does not import Django: a bot can use it as it is.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, is_dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import httpx

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({502, 503, 504})
MAX_RETRY_AFTER = 5.0  # seconds: a server asking for longer still gets retried this soon


class ClaraApiError(Exception):
    """The API refused the request (or could not be reached after every retry: status 0)."""

    def __init__(
        self, status: int, detail: str, code: str | None = None, field: str | None = None
    ) -> None:
        super().__init__(f"{status} {code or 'error'}: {detail}")
        self.status = status
        self.detail = detail
        self.code = code
        self.field = field


# --- What the bot sends -----------------------------------------------------------------------


@dataclass(frozen=True)
class Emotion:
    """The bot's own reading of the person's message (optional everywhere)."""

    emotion: str
    confidence: float
    distress_score: float
    trajectory: str


@dataclass(frozen=True)
class NarrativeRef:
    """The story Clara's reply carried: from `Context.narrative` (id, mode, category)."""

    id: str
    mode: str
    category: str


# --- What the API answers ---------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    session_id: UUID
    user_id: UUID | None
    status: str
    created_at: datetime
    last_activity_at: datetime
    message_count: int
    ended_at: datetime | None
    dominant_emotion: str | None
    escalation_triggered: bool

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Session:
        return cls(
            session_id=UUID(data["session_id"]),
            user_id=_uuid(data.get("user_id")),
            status=data["status"],
            created_at=_datetime(data["created_at"]),
            last_activity_at=_datetime(data["last_activity_at"]),
            message_count=data["message_count"],
            ended_at=_datetime(data.get("ended_at")),
            dominant_emotion=data.get("dominant_emotion"),
            escalation_triggered=data["escalation_triggered"],
        )


@dataclass(frozen=True)
class Message:
    message_id: UUID
    role: str
    content: str
    sequence_number: int
    timestamp: datetime

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        return cls(
            message_id=UUID(data["message_id"]),
            role=data["role"],
            content=data["content"],
            sequence_number=data["sequence_number"],
            timestamp=_datetime(data["timestamp"]),
        )


@dataclass(frozen=True)
class Narrative:
    id: str
    mode: str
    text: str
    category: str
    theme_tags: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Narrative:
        return cls(
            id=data["id"],
            mode=data["mode"],
            text=data["text"],
            category=data["category"],
            theme_tags=list(data.get("theme_tags") or []),
        )

    def ref(self) -> NarrativeRef:
        """What `store_exchange(narrative=...)` needs to record that this story was told."""
        return NarrativeRef(id=self.id, mode=self.mode, category=self.category)


@dataclass(frozen=True)
class Analysis:
    """For the bot's own logic only: none of this belongs in a prompt or a reply."""

    is_repeat: bool
    repeat_count: int
    question_type: str
    cross_session_repeat_count: int
    emotion: str
    distress_score: float
    trajectory: str
    window_size: int
    escalate: bool
    escalation_reason: str | None
    chronic_repetition_pattern: bool = False  # for caregivers; sent by newer servers

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Analysis:
        return cls(
            is_repeat=data["is_repeat"],
            repeat_count=data["repeat_count"],
            question_type=data["question_type"],
            cross_session_repeat_count=data["cross_session_repeat_count"],
            emotion=data["emotion"],
            distress_score=data["distress_score"],
            trajectory=data["trajectory"],
            window_size=data["window_size"],
            escalate=data["escalate"],
            escalation_reason=data.get("escalation_reason"),
            chronic_repetition_pattern=bool(data.get("chronic_repetition_pattern", False)),
        )


@dataclass(frozen=True)
class Context:
    """Exactly what the LLM sees (`system_prompt` + `messages`), plus the bot-only `analysis`."""

    system_prompt: str
    messages: list[dict[str, str]]  # {role, content}, ending with the person's message
    max_tokens: int
    narrative: Narrative | None
    analysis: Analysis

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Context:
        narrative = data.get("narrative")
        return cls(
            system_prompt=data["system_prompt"],
            messages=[{"role": m["role"], "content": m["content"]} for m in data["messages"]],
            max_tokens=data["max_tokens"],
            narrative=Narrative.from_json(narrative) if narrative else None,
            analysis=Analysis.from_json(data["analysis"]),
        )


@dataclass(frozen=True)
class QueryResult:
    """The older per-turn read (`/query`): repetition data and the raw conversation window."""

    is_repeat: bool
    repeat_count: int
    question_type: str
    cross_session_repeat_count: int
    window_size: int
    conversation_window: list[dict[str, Any]]
    emotion_history: list[dict[str, Any]]
    used_narrative_ids: list[str]
    caregiver_context: dict[str, Any]
    display_name: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QueryResult:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class StoredExchange:
    """The stored exchange; `pending` when it is in the server's recovery log (202) instead."""

    idempotency_key: str
    pending: bool
    created: bool  # False when this was a retry of an exchange already stored (200)
    user_message_id: UUID | None = None
    user_sequence_number: int | None = None
    assistant_message_id: UUID | None = None
    assistant_sequence_number: int | None = None


# --- The client -------------------------------------------------------------------------------


class ClaraClient:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 5.0,
        retries: int = 3,
        backoff: float = 0.2,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """`retries` is how many times a failed call is tried again (so 1 + retries attempts)."""
        self.retries = retries
        self.backoff = backoff
        self._http = httpx.Client(
            base_url=base_url.rstrip("/") + "/api/v1",
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ClaraClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # Sessions

    def resolve_session(
        self,
        session_id: UUID | str | None = None,
        user_id: UUID | str | None = None,
        display_name: str | None = None,
        started_at: datetime | None = None,
    ) -> Session:
        """Resume or create a session. A new session's id is chosen here, so a retry resumes it.

        `started_at` (aware, not in the future) dates a conversation that began offline.
        """
        body = {
            "session_id": str(session_id or uuid.uuid4()),
            "user_id": str(user_id) if user_id else None,
            "display_name": display_name,
            "started_at": _iso(started_at),
        }
        return Session.from_json(self._request("POST", "/sessions", json=body).json())

    def get_session(self, session_id: UUID | str) -> Session:
        return Session.from_json(self._request("GET", f"/sessions/{session_id}").json())

    def close_session(self, session_id: UUID | str, ended_at: datetime | None = None) -> Session:
        """Close a session; `ended_at` (aware, not in the future) for one closed late."""
        body = {"ended_at": _iso(ended_at)} if ended_at is not None else None
        response = self._request("POST", f"/sessions/{session_id}/close", json=body)
        return Session.from_json(response.json())

    def messages(self, session_id: UUID | str, limit: int = 50) -> list[Message]:
        response = self._request("GET", f"/sessions/{session_id}/messages", params={"limit": limit})
        return [Message.from_json(row) for row in response.json()["messages"]]

    # Each turn

    def context(
        self,
        session_id: UUID | str,
        message: str,
        emotion: Emotion | Mapping | None = None,
        *,
        occurred_at: datetime | None = None,
    ) -> Context:
        """Before answering: the prompt, messages and token budget for the LLM. Stores nothing."""
        body = {"message": message, "emotion": _plain(emotion)}
        if occurred_at is not None:
            body["occurred_at"] = _iso(occurred_at)
        return Context.from_json(
            self._request("POST", f"/sessions/{session_id}/context", json=body).json()
        )

    def query(
        self, session_id: UUID | str, message: str, emotion: Emotion | Mapping | None = None
    ) -> QueryResult:
        body = {"message": message, "emotion": _plain(emotion)}
        return QueryResult.from_json(
            self._request("POST", f"/sessions/{session_id}/query", json=body).json()
        )

    def store_exchange(
        self,
        session_id: UUID | str,
        user_message: str,
        assistant_message: str,
        *,
        idempotency_key: str | None = None,
        emotion: Emotion | Mapping | None = None,
        intent: str | None = None,
        narrative: NarrativeRef | Narrative | Mapping | None = None,
        processing_time_ms: int | None = None,
        escalation: bool = False,
        occurred_at: datetime | None = None,
    ) -> StoredExchange:
        """After answering: store the exchange exactly once (the key is reused on every retry).

        `occurred_at` (aware, not in the future) dates an exchange buffered offline; send a
        session's exchanges in the order they happened.
        """
        key = idempotency_key or str(uuid.uuid4())
        if isinstance(narrative, Narrative):
            narrative = narrative.ref()
        body = {
            "user_message": user_message,
            "assistant_message": assistant_message,
            "idempotency_key": key,
            "emotion": _plain(emotion),
            "intent": intent,
            "narrative": _plain(narrative),
            "processing_time_ms": processing_time_ms,
            "escalation": escalation,
            "occurred_at": _iso(occurred_at),
        }
        response = self._request("POST", f"/sessions/{session_id}/exchanges", json=body)
        data = response.json()
        if response.status_code == 202:
            return StoredExchange(
                idempotency_key=data.get("idempotency_key", key), pending=True, created=False
            )
        return StoredExchange(
            idempotency_key=key,
            pending=False,
            created=response.status_code == 201,
            user_message_id=UUID(data["user_message"]["message_id"]),
            user_sequence_number=data["user_message"]["sequence_number"],
            assistant_message_id=UUID(data["assistant_message"]["message_id"]),
            assistant_sequence_number=data["assistant_message"]["sequence_number"],
        )

    # The one place requests are sent

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        if kwargs.get("json") is not None:
            kwargs["json"] = {k: v for k, v in kwargs["json"].items() if v is not None}
        for attempt in range(self.retries + 1):
            last_try = attempt == self.retries
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:  # connection errors and timeouts
                if last_try:
                    raise ClaraApiError(
                        0, f"{method} {path} failed: {exc!r}", "unreachable"
                    ) from exc
                delay = self._delay(attempt, None)
                logger.warning("%s %s failed (%r); retrying in %.2fs", method, path, exc, delay)
            else:
                if response.status_code < 400:
                    return response
                if response.status_code not in RETRY_STATUSES or last_try:
                    raise _error(response)
                delay = self._delay(attempt, response.headers.get("Retry-After"))
                logger.warning(
                    "%s %s answered %s; retrying in %.2fs",
                    method,
                    path,
                    response.status_code,
                    delay,
                )
            time.sleep(delay)
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), MAX_RETRY_AFTER)
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
        return min(self.backoff * 2**attempt, MAX_RETRY_AFTER)


def _error(response: httpx.Response) -> ClaraApiError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return ClaraApiError(response.status_code, response.text[:200] or response.reason_phrase)
    return ClaraApiError(
        response.status_code,
        str(body.get("detail", response.reason_phrase)),
        body.get("code"),
        body.get("field"),
    )


def _plain(value: Any) -> Any:
    if value is None:
        return None
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return dict(value)


def _uuid(value: str | None) -> UUID | None:
    return UUID(value) if value else None


def _iso(value: datetime | None) -> str | None:
    """ISO 8601 with its offset; the API refuses a time without one."""
    if value is None:
        return None
    if value.utcoffset() is None:
        raise ValueError("a naive datetime: give it a time zone")
    return value.isoformat()


def _datetime(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
