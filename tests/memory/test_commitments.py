"""Commitments: promises and plans read from exchanges, due dates, closing, summaries."""

import uuid
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memory import tasks
from memory.companion.context import context_build
from memory.conversations import services
from memory.core.errors import Invalid, NotFound
from memory.facts import commitments
from memory.insights import summaries
from memory.models import ChatMessage, Commitment, Person, Persona

pytestmark = pytest.mark.django_db

LONDON = ZoneInfo("Europe/London")
# Thursday 26 March 2026, 10:00 in London (GMT; the clocks go forward on Sunday the 29th).
THURSDAY = datetime(2026, 3, 26, 10, 0, tzinfo=UTC)


def _found(text: str, role: str = "user", *, said_at: datetime = THURSDAY, zone=LONDON):
    return [
        (found.kind, found.text, found.due_at)
        for found in commitments.extract(
            text, role=role, said_at=said_at, zone=zone, pronoun="she", companion="Clara"
        )
    ]


def _london(*args) -> datetime:
    return datetime(*args, tzinfo=LONDON).astimezone(UTC)


# --- Extraction ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm going to call Ann on Sunday.", [("call Ann on Sunday", _london(2026, 3, 29, 12))]),
        (
            "Tomorrow I'll bake a cake for my grandson.",
            [("bake a cake for her grandson", _london(2026, 3, 27, 12))],
        ),
        ("I am going to visit my mother.", [("visit her mother", None)]),
        (
            "I'm going to the shops this afternoon",
            [("go to the shops this afternoon", _london(2026, 3, 26, 15))],
        ),
        (
            "We're going to Brighton next week.",
            [("go to Brighton next week", _london(2026, 3, 30, 12))],
        ),
        ("I'll ring her tonight.", [("ring her tonight", _london(2026, 3, 26, 19))]),
        ("I'll meet Joan at 3 tomorrow", [("meet Joan at 3 tomorrow", _london(2026, 3, 27, 15))]),
        (
            "I will phone the surgery at 9:30am.",
            [("phone the surgery at 9:30am", _london(2026, 3, 27, 9, 30))],
        ),
        ("I plan to write to Peter, but not today.", [("write to Peter", None)]),
        (
            "I spoke to her last Sunday. I'll see Ann at 3 Elm Street",
            [("see Ann at 3 Elm Street", None)],
        ),
    ],
)
def test_the_persons_plans_with_their_due_times(text, expected):
    assert _found(text) == [("plan", what, due) for what, due in expected]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "The weather is lovely today.",
        "Am I going to see Ann?",
        "I'm going to cry.",
        "I'll be fine. We'll see.",
        "I'll try.",
        "I'm not going to do that.",
        "I went to the shops yesterday.",
    ],
)
def test_nothing_to_extract_from_what_is_not_a_plan(text):
    assert _found(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I'll remind you about the doctor's visit on Tuesday.",
            [("remind her about the doctor's visit on Tuesday", _london(2026, 3, 31, 12))],
        ),
        (
            "I will ask Sarah to ring you this evening.",
            [("ask Sarah to ring her this evening", _london(2026, 3, 26, 19))],
        ),
        ("I'll let Sarah know you called.", [("let Sarah know she called", None)]),
        ("Of course. I promise to remind you.", [("remind her", None)]),
    ],
)
def test_the_companions_promises(text, expected):
    assert _found(text, role="assistant") == [("promise", what, due) for what, due in expected]


@pytest.mark.parametrize(
    "text",
    [
        "I'll tell you a story about the garden.",
        "I'll be right here with you.",
        "I'll let you rest now.",
        "Shall I remind you later?",
        "You are safe at home.",
    ],
)
def test_companion_words_that_are_not_promises(text):
    assert _found(text, role="assistant") == []


def test_a_persons_plan_is_not_read_from_the_companions_words_and_back():
    assert _found("You're going to call Ann on Sunday.", role="assistant") == []
    assert _found("I'll remind you about the doctor.", role="user") == [
        ("plan", "remind you about the doctor", None)
    ]


def test_a_weekday_said_on_that_day_means_the_next_one_unless_this():
    sunday = _london(2026, 3, 22, 10)
    assert _found("I'll call Ann on Sunday.", said_at=sunday)[0][2] == _london(2026, 3, 29, 12)
    assert _found("I'll call Ann this Sunday.", said_at=sunday)[0][2] == _london(2026, 3, 22, 12)


def test_a_time_already_past_today_means_tomorrow():
    evening = _london(2026, 3, 26, 18)
    assert _found("I'll water the plants at 9am.", said_at=evening)[0][2] == _london(2026, 3, 27, 9)


def test_due_times_are_local_across_the_clock_change():
    # Said on Saturday 28 March (GMT) for Sunday the 29th (BST): 09:00 local is 08:00 UTC.
    saturday = _london(2026, 3, 28, 18)
    [(_, _, due)] = _found("I'm going to call Ann tomorrow at 9am.", said_at=saturday)
    assert due == datetime(2026, 3, 29, 8, 0, tzinfo=UTC)
    new_york = ZoneInfo("America/New_York")
    [(_, _, due)] = _found("I'll call Ann tomorrow at 9am.", said_at=saturday, zone=new_york)
    assert due == datetime(2026, 3, 29, 13, 0, tzinfo=UTC)  # EDT


def test_the_same_plan_twice_in_a_message_is_one():
    assert len(_found("I'm going to call Ann. Yes, I'm going to call Ann.")) == 1


# --- Storage ------------------------------------------------------------------------------------


def _person(**context) -> Person:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return Person.objects.create(
        display_name="Nana",
        created_at=at,
        last_active_at=at,
        caregiver_context={"timezone": "Europe/London", "pronouns": "she/her", **context},
    )


def _exchange(person: Person, user: str, assistant: str, *, at=THURSDAY, session_id=None):
    if session_id is None:
        session, _ = services.session_resolve(user_id=person.id, at=at)
        session_id = session.id
    stored = services.exchange_record(
        session_id=session_id, user_message=user, assistant_message=assistant, at=at
    )
    return session_id, stored


def test_an_exchange_stores_the_persons_plan_and_the_companions_promise():
    person = _person()
    session_id, stored = _exchange(
        person,
        "I'm going to call Ann on Sunday.",
        "That sounds lovely. I'll remind you on Sunday morning.",
    )

    created = commitments.commitments_extract(message_id=stored.user_message_id)

    assert [(c.kind, c.text) for c in created] == [
        ("plan", "call Ann on Sunday"),
        ("promise", "remind her on Sunday morning"),
    ]
    plan, promise = created
    assert plan.source_message_id == stored.user_message_id
    assert promise.source_message_id == stored.assistant_message_id
    assert {plan.session_id, promise.session_id} == {session_id}
    assert plan.persona == promise.persona == "clara"
    assert plan.due_at == _london(2026, 3, 29, 12)
    assert promise.due_at == _london(2026, 3, 29, 9)  # BST: 08:00 UTC
    assert plan.created_at == THURSDAY  # when it was said
    assert plan.status == "open"


def test_the_task_is_idempotent():
    person = _person()
    _, stored = _exchange(person, "Tomorrow I'll bake a cake.", "What a treat.")
    assert tasks.extract_commitments(str(stored.user_message_id)) == 1
    assert tasks.extract_commitments(str(stored.user_message_id)) == 0
    assert Commitment.objects.count() == 1


def test_the_task_for_an_unknown_message_does_nothing():
    assert tasks.extract_commitments(str(uuid.uuid4())) == 0
    with pytest.raises(NotFound):
        commitments.commitments_extract(message_id=uuid.uuid4())


def test_an_exchange_with_nothing_to_keep_stores_nothing():
    person = _person()
    _, stored = _exchange(person, "Where am I?", "You're at home, safe and warm.")
    assert commitments.commitments_extract(message_id=stored.user_message_id) == []
    assert not Commitment.objects.exists()


def test_a_plan_said_again_while_open_is_kept_once():
    person = _person()
    session_id, first = _exchange(person, "I'm going to call Ann.", "Lovely.")
    _, second = _exchange(
        person,
        "I'm going to call Ann.",
        "That will be nice.",
        at=THURSDAY + timedelta(minutes=2),
        session_id=session_id,
    )
    commitments.commitments_extract(message_id=first.user_message_id)
    assert commitments.commitments_extract(message_id=second.user_message_id) == []
    [plan] = Commitment.objects.all()
    commitments.commitment_close(commitment_id=plan.id, status="done")
    # Once done, saying it again is a new plan.
    _, third = _exchange(person, "I'm going to call Ann.", "Good.", at=THURSDAY + timedelta(days=3))
    assert len(commitments.commitments_extract(message_id=third.user_message_id)) == 1


def test_nothing_is_kept_for_a_person_whose_memory_is_off():
    person = _person()
    Person.objects.filter(id=person.id).update(memory_enabled=False)
    _, stored = _exchange(person, "I'm going to call Ann on Sunday.", "Lovely.")
    assert commitments.commitments_extract(message_id=stored.user_message_id) == []
    assert not Commitment.objects.exists()


def test_an_anonymous_session_keeps_nothing():
    session_id = uuid.uuid4()
    stored = services.exchange_record(
        session_id=session_id, user_message="I'm going to call Ann.", assistant_message="Good."
    )
    assert commitments.commitments_extract(message_id=stored.user_message_id) == []


def test_commitments_are_kept_per_persona_with_its_companions_name():
    Persona.objects.create(slug="sunny", display_name="Sunny")
    person = _person()
    Person.objects.filter(id=person.id).update(persona="sunny")
    _, stored = _exchange(person, "Hello.", "I'll ask Sarah to bring the photos.")
    [promise] = commitments.commitments_extract(message_id=stored.user_message_id)
    assert promise.persona == "sunny"
    assert commitments.describe(promise) == "was told Sunny would ask Sarah to bring the photos"
    assert commitments.commitments_for_person(person_id=person.id, persona="clara") == []
    assert commitments.commitments_for_person(person_id=person.id, persona="sunny") == [promise]


def test_an_assistant_message_alone_is_read_for_promises():
    person = _person()
    _, stored = _exchange(person, "I feel a bit low.", "I'm here with you.")
    check_in_like = ChatMessage.objects.get(id=stored.assistant_message_id)
    check_in_like.content = "Good morning. I'll ask Sarah to call you this afternoon."
    check_in_like.save(update_fields=["content"])
    [promise] = commitments.commitments_extract(message_id=check_in_like.id)
    assert promise.text == "ask Sarah to call her this afternoon"


# --- Closing and listing ------------------------------------------------------------------------


def _one_plan() -> Commitment:
    person = _person()
    _, stored = _exchange(person, "I'm going to call Ann on Sunday.", "Lovely.")
    [plan] = commitments.commitments_extract(message_id=stored.user_message_id)
    return plan


def test_close_as_done_or_dropped_and_listing_by_status():
    plan = _one_plan()
    person_id = plan.person_id
    assert commitments.commitments_for_person(person_id=person_id) == [plan]

    at = THURSDAY + timedelta(days=4)
    closed = commitments.commitment_close(commitment_id=plan.id, status="dropped", at=at)
    assert (closed.status, closed.closed_at) == ("dropped", at)
    assert commitments.commitments_for_person(person_id=person_id) == []
    # A caregiver corrects it: the status changes, the time it was closed stays.
    again = commitments.commitment_close(commitment_id=plan.id, status="done")
    assert (again.status, again.closed_at) == ("done", at)
    assert commitments.commitments_for_person(person_id=person_id, status="done") == [plan]
    assert commitments.commitments_for_person(person_id=person_id, status=None) == [plan]


@pytest.mark.parametrize("status", ["open", "finished", ""])
def test_closing_needs_done_or_dropped(status):
    plan = _one_plan()
    with pytest.raises(Invalid) as caught:
        commitments.commitment_close(commitment_id=plan.id, status=status)
    assert caught.value.field == "status"
    plan.refresh_from_db()
    assert plan.status == "open"


def test_closing_an_unknown_commitment_is_not_found():
    with pytest.raises(NotFound):
        commitments.commitment_close(commitment_id=uuid.uuid4(), status="done")


def test_listing_with_an_unknown_status_is_invalid():
    with pytest.raises(Invalid):
        commitments.commitments_for_person(person_id=uuid.uuid4(), status="later")


# --- Summaries and the prompt -------------------------------------------------------------------


def test_the_sessions_open_commitments_are_open_loops_in_its_summary():
    person = _person()
    session_id, first = _exchange(
        person, "I'm going to call Ann on Sunday.", "I'll remind you on Sunday morning."
    )
    _, second = _exchange(
        person,
        "Tomorrow I'll bake a cake.",
        "How lovely.",
        at=THURSDAY + timedelta(minutes=1),
        session_id=session_id,
    )
    commitments.commitments_extract(message_id=first.user_message_id)
    [cake] = commitments.commitments_extract(message_id=second.user_message_id)
    commitments.commitment_close(commitment_id=cake.id, status="done")
    services.session_close(session_id=session_id, at=THURSDAY + timedelta(minutes=5))

    summary = summaries.session_summary_compute(session_id=session_id)

    assert summary["open_loops"][:2] == [
        "plans to call Ann on Sunday (Sun 29 Mar)",
        "was told Clara would remind her on Sunday morning (Sun 29 Mar)",
    ]
    assert not any("cake" in loop for loop in summary["open_loops"])


def test_commitments_never_reach_a_later_sessions_prompt():
    person = _person()
    _, stored = _exchange(person, "I'm going to visit my mother on Sunday.", "That sounds nice.")
    commitments.commitments_extract(message_id=stored.user_message_id)
    assert [c.text for c in Commitment.objects.all()] == ["visit her mother on Sunday"]

    later, _ = services.session_resolve(user_id=person.id, at=THURSDAY + timedelta(days=1))
    result = context_build(
        session_id=later.id, message="Hello dear.", now=THURSDAY + timedelta(days=1)
    )
    prompt = result.rendered.system_prompt + " ".join(
        message["content"] for message in result.rendered.messages
    )
    assert "mother" not in prompt
    assert "visit" not in prompt
