"""The typed client, against the real app in-process (httpx.WSGITransport), retries included."""

import json
import uuid
from datetime import UTC, datetime, timedelta, timezone

import httpx
import pytest

from clara.wsgi import application
from memory.companion.client import ClaraApiError, ClaraClient, Emotion
from memory.models import ChatMessage, Session

pytestmark = pytest.mark.django_db(transaction=True)

BASE_URL = "http://testserver"


class Recorder(httpx.BaseTransport):
    """Sends every request to the app in-process, after `faults` (one per call) have had a go.

    A fault is None (pass through), an `httpx.Response` (answered instead of the app), or an
    exception class (raised instead of calling the app; `after=True` raises after the app ran,
    as when the answer is lost on the way back).
    """

    def __init__(self, faults=()):
        self.app = httpx.WSGITransport(app=application)
        self.faults = list(faults)
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        fault = self.faults.pop(0) if self.faults else None
        if isinstance(fault, httpx.Response):
            return fault
        if isinstance(fault, tuple):  # (exception, "after")
            response = self.app.handle_request(request)
            response.read()
            raise fault[0]("the answer was lost", request=request)
        if fault is not None:
            raise fault("no connection", request=request)
        return self.app.handle_request(request)

    def bodies(self, path_end: str) -> list[dict]:
        return [json.loads(r.content) for r in self.requests if r.url.path.endswith(path_end)]


def _client(api_key, transport=None, **kwargs) -> ClaraClient:
    kwargs.setdefault("backoff", 0)
    return ClaraClient(BASE_URL, api_key, transport=transport or Recorder(), **kwargs)


def test_session_exchange_messages_close_round_trip(api_key):
    client = _client(api_key)
    person = uuid.uuid4()
    session = client.resolve_session(user_id=person, display_name="Nana")
    assert session.user_id == person
    assert session.status == "active"
    assert session.message_count == 0

    stored = client.store_exchange(
        session.session_id,
        "Where am I?",
        "You're somewhere safe, and I'm right here with you.",
        emotion=Emotion("confused", 0.8, 0.5, "stable"),
        intent="location",
        processing_time_ms=12,
    )
    assert stored.created and not stored.pending
    assert stored.assistant_sequence_number == stored.user_sequence_number + 1
    assert stored.idempotency_key  # the client always sends one

    messages = client.messages(session.session_id, limit=10)
    assert [(m.role, m.content) for m in messages] == [
        ("user", "Where am I?"),
        ("assistant", "You're somewhere safe, and I'm right here with you."),
    ]
    assert [m.message_id for m in messages] == [stored.user_message_id, stored.assistant_message_id]
    assert client.get_session(session.session_id).message_count == 2

    closed = client.close_session(session.session_id)
    assert closed.status == "closed"
    assert closed.ended_at is not None
    assert closed.dominant_emotion == "confused"

    # Resuming by id gives the same session back, for the same person.
    resumed = client.resolve_session(session_id=session.session_id, user_id=person)
    assert (resumed.session_id, resumed.status) == (session.session_id, "active")


def test_times_are_sent_with_their_offset_only_when_given(api_key):
    transport = Recorder()
    client = _client(api_key, transport)
    began = datetime.now(UTC).replace(microsecond=0) - timedelta(days=3, hours=2)
    local = timezone(timedelta(hours=2))
    session = client.resolve_session(display_name="Nana", started_at=began.astimezone(local))
    assert session.created_at == began
    client.store_exchange(
        session.session_id, "Hello", "Hello, lovely.", occurred_at=began + timedelta(minutes=1)
    )
    client.store_exchange(session.session_id, "Who are you?", "I'm Clara.")
    closed = client.close_session(session.session_id, ended_at=began + timedelta(minutes=5))
    assert closed.ended_at == began + timedelta(minutes=5)

    assert transport.bodies("/sessions")[0]["started_at"] == began.astimezone(local).isoformat()
    sent = transport.bodies("/exchanges")
    assert sent[0]["occurred_at"] == (began + timedelta(minutes=1)).isoformat()
    assert "occurred_at" not in sent[1]
    assert transport.bodies("/close") == [{"ended_at": (began + timedelta(minutes=5)).isoformat()}]
    first, second = ChatMessage.objects.filter(role="user").order_by("sequence_number")
    assert first.timestamp == began + timedelta(minutes=1)
    assert second.timestamp > began + timedelta(days=3)  # now

    with pytest.raises(ValueError, match="time zone"):
        client.close_session(session.session_id, ended_at=datetime(2025, 1, 1, 12, 0))


def test_a_close_without_a_time_sends_no_body(api_key):
    transport = Recorder()
    client = _client(api_key, transport)
    session = client.resolve_session()
    assert "started_at" not in transport.bodies("/sessions")[0]
    client.close_session(session.session_id)
    assert transport.requests[-1].content == b""


def test_a_new_session_is_resumed_when_its_creation_is_retried(api_key):
    # The first answer is lost after the session was created; the retry must not make another.
    transport = Recorder([(httpx.ReadTimeout, "after")])
    session = _client(api_key, transport).resolve_session(display_name="Nana")
    ids = {body["session_id"] for body in transport.bodies("/sessions")}
    assert ids == {str(session.session_id)}
    assert Session.objects.count() == 1


def test_a_retried_store_with_the_same_key_returns_the_same_ids_and_stores_once(api_key):
    client = _client(api_key)
    session = client.resolve_session()
    first = client.store_exchange(
        session.session_id, "Hello", "Hello, lovely.", idempotency_key="t1"
    )
    again = client.store_exchange(
        session.session_id, "Hello", "Hello, lovely.", idempotency_key="t1"
    )
    assert first.created and not again.created
    assert (again.user_message_id, again.assistant_message_id) == (
        first.user_message_id,
        first.assistant_message_id,
    )
    assert ChatMessage.objects.filter(session_id=session.session_id).count() == 2


def test_a_lost_answer_is_retried_with_the_same_key_and_stored_once(api_key):
    transport = Recorder([None, (httpx.ReadTimeout, "after")])
    client = _client(api_key, transport)
    session = client.resolve_session()
    stored = client.store_exchange(session.session_id, "Who are you?", "I'm Clara.")
    keys = [body["idempotency_key"] for body in transport.bodies("/exchanges")]
    assert keys == [stored.idempotency_key] * 2
    assert not stored.created  # the retry found the exchange the first attempt stored
    assert ChatMessage.objects.filter(session_id=session.session_id).count() == 2


def test_503_is_retried_honouring_retry_after_and_stored_exactly_once(api_key):
    busy = httpx.Response(
        503,
        headers={"Retry-After": "0"},
        json={"detail": "busy", "code": "unavailable", "field": None},
    )
    transport = Recorder([None, busy])  # the session call passes; the first store is refused
    client = _client(api_key, transport, backoff=30)  # Retry-After: 0 wins over the backoff
    session = client.resolve_session()
    stored = client.store_exchange(session.session_id, "Where am I?", "You're safe at home.")
    keys = [body["idempotency_key"] for body in transport.bodies("/exchanges")]
    assert len(keys) == 2 and len(set(keys)) == 1
    assert stored.created
    assert ChatMessage.objects.filter(session_id=session.session_id).count() == 2


def test_connection_errors_are_retried_then_reported(api_key):
    transport = Recorder([httpx.ConnectError] * 3)
    client = _client(api_key, transport, retries=2)
    with pytest.raises(ClaraApiError) as error:
        client.get_session(uuid.uuid4())
    assert error.value.status == 0
    assert len(transport.requests) == 3


def test_422_raises_with_the_field_and_is_not_retried(api_key):
    transport = Recorder()
    client = _client(api_key, transport)
    session = client.resolve_session()
    with pytest.raises(ClaraApiError) as error:
        client.store_exchange(session.session_id, "   ", "I'm here.")
    assert (error.value.status, error.value.code, error.value.field) == (
        422,
        "invalid",
        "user_message",
    )
    assert len(transport.bodies("/exchanges")) == 1
    assert ChatMessage.objects.count() == 0


def test_a_bad_key_gets_401_without_retries():
    transport = Recorder()
    client = _client("clara_nope_nope", transport)
    with pytest.raises(ClaraApiError) as error:
        client.resolve_session()
    assert error.value.status == 401
    assert len(transport.requests) == 1


def test_an_unknown_session_is_404(api_key):
    with pytest.raises(ClaraApiError) as error:
        _client(api_key).get_session(uuid.uuid4())
    assert (error.value.status, error.value.code) == (404, "not_found")


def test_query_returns_typed_repetition_data(api_key):
    client = _client(api_key)
    session = client.resolve_session(display_name="Nana")
    client.store_exchange(session.session_id, "Where am I?", "You're safe at home.")
    result = client.query(session.session_id, "Where am I?")
    assert result.is_repeat
    assert result.question_type == "location"
    assert result.display_name == "Nana"
    assert [m["content"] for m in result.conversation_window] == [
        "Where am I?",
        "You're safe at home.",
    ]


def test_retry_after_is_capped():
    client = ClaraClient(BASE_URL, "k", backoff=0.2)
    assert client._delay(0, "1") == 1.0
    assert client._delay(0, "3600") == 5.0
    assert client._delay(2, None) == pytest.approx(0.8)
    assert client._delay(0, "Wed, 21 Oct 2015 07:28:00 GMT") == pytest.approx(0.2)
