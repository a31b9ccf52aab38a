"""The turn queue: a burst of messages becomes one turn, in arrival order, exactly once."""

import threading
import time

import pytest
from django.db import connection
from django.utils import timezone

from memory.companion import turns
from memory.conversations import services
from memory.core.errors import Conflict
from memory.models import ChatMessage, PendingMessage, Person

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_gathering_wait(settings):
    """Tests that are not about bursts need no wait for the rest of one."""
    settings.CLARA_TURN_GATHER_SECONDS = 0


@pytest.fixture
def session(db):
    now = timezone.now()
    person = Person.objects.create(display_name="Ann", created_at=now, last_active_at=now)
    session, _ = services.session_resolve(user_id=person.id)
    return session


def test_a_lone_message_is_its_own_turn(session):
    turn = turns.message_submit(session_id=session.id, message="Hello", client_key="m1")
    assert isinstance(turn, turns.Turn)
    assert turn.message == "Hello"
    stored, waiting = turns.turn_complete(
        session_id=session.id, turn_id=turn.turn_id, assistant_message="Hello Ann!"
    )
    assert stored.created and waiting == 0
    # Completing twice (a retry) stores it once.
    again, _ = turns.turn_complete(
        session_id=session.id, turn_id=turn.turn_id, assistant_message="Hello Ann!"
    )
    assert not again.created
    assert ChatMessage.objects.filter(session=session).count() == 2


def test_messages_during_a_turn_wait_for_the_next_one(session):
    first = turns.message_submit(session_id=session.id, message="hello", client_key="a")
    queued = turns.message_submit(session_id=session.id, message="are you there", client_key="b")
    also = turns.message_submit(session_id=session.id, message="it's Ann", client_key="c")
    assert isinstance(queued, turns.Queued) and isinstance(also, turns.Queued)
    # A retried POST of one message is the same message.
    turns.message_submit(session_id=session.id, message="it's Ann", client_key="c")
    with pytest.raises(Conflict):
        turns.turn_next(session_id=session.id)
    _, waiting = turns.turn_complete(
        session_id=session.id, turn_id=first.turn_id, assistant_message="Hello!"
    )
    assert waiting == 2
    nxt = turns.turn_next(session_id=session.id)
    assert nxt.parts == ["are you there", "it's Ann"]
    assert nxt.message == "are you there\nit's Ann"
    turns.turn_complete(session_id=session.id, turn_id=nxt.turn_id, assistant_message="I'm here.")
    assert turns.turn_next(session_id=session.id) is None
    said = list(
        ChatMessage.objects.filter(session=session, role="user")
        .order_by("sequence_number")
        .values_list("content", flat=True)
    )
    assert said == ["hello", "are you there\nit's Ann"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_a_burst_from_concurrent_clients_becomes_one_turn_in_arrival_order(session, settings):
    settings.CLARA_TURN_GATHER_SECONDS = 0.5
    results = {}
    errors = []
    start = threading.Barrier(5)

    def send(i: int) -> None:
        try:
            start.wait()
            time.sleep(i * 0.05)
            results[i] = turns.message_submit(
                session_id=session.id, message=f"part {i}", client_key=f"k{i}"
            )
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(i,)) for i in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    led = [r for r in results.values() if isinstance(r, turns.Turn)]
    assert len(led) == 1
    # Every message of the burst is in the one turn, in the order the queue numbered them.
    arrivals = list(PendingMessage.objects.order_by("arrival").values_list("content", flat=True))
    assert sorted(arrivals) == [f"part {i}" for i in range(5)]
    assert led[0].parts == arrivals
    assert PendingMessage.objects.filter(turn_id__isnull=True).count() == 0
