"""Proactive check-ins: the scheduler's decisions, every suppression rule, DST, the outbox API."""

import re
import threading
import uuid
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.db import connection
from django.urls import reverse

from clara.api import api as project_api
from memory import tasks
from memory.companion import checkins
from memory.companion.api_checkins import router as companion_router
from memory.companion.context import context_build
from memory.conversations import services
from memory.core.errors import Invalid, NotFound
from memory.insights import summaries
from memory.models import ChatMessage, CheckIn, CheckInSettings, Person, Session, TurnLock

pytestmark = pytest.mark.django_db

LONDON = ZoneInfo("Europe/London")
NEW_YORK = ZoneInfo("America/New_York")
SETUP_AT = datetime(2026, 1, 1, tzinfo=UTC)
# Words a check-in must never use: they point at earlier conversations, repetition or a test.
NOT_DEMENTIA_SAFE = re.compile(
    r"\b(again|remember|last time|before|yesterday|earlier|still|told you|you said|asked|"
    r"do you know|what day)\b|\d",
    re.IGNORECASE,
)


def _local(*args, zone=LONDON) -> datetime:
    return datetime(*args, tzinfo=zone).astimezone(UTC)


def _person(*, zone: str = "Europe/London", name: str | None = "Margaret") -> Person:
    context = {"timezone": zone}
    if name:
        context["preferredName"] = name
    return Person.objects.create(
        display_name="Mrs M. Jones",
        created_at=SETUP_AT,
        last_active_at=SETUP_AT,
        caregiver_context=context,
    )


def _enable(person: Person, times=("09:00",), **fields) -> CheckInSettings:
    """Check-ins on, set long ago (so today's slots count)."""
    checkins.checkin_settings_update(
        person_id=person.id,
        enabled=True,
        times=list(times),
        night_start=fields.get("night_start", 21),
        night_end=fields.get("night_end", 8),
        max_unanswered=fields.get("max_unanswered"),
    )
    CheckInSettings.objects.filter(person=person).update(updated_at=SETUP_AT)
    return CheckInSettings.objects.get(person=person)


def _talk(person: Person, at: datetime, *, close: bool = False) -> Session:
    session, _ = services.session_resolve(user_id=person.id, at=at)
    services.exchange_record(
        session_id=session.id,
        user_message="Hello, is that you?",
        assistant_message="Yes, it's me. It's lovely to hear from you.",
        at=at,
    )
    if close:
        services.session_close(session_id=session.id, at=at + timedelta(minutes=1))
    return session


def _decide(person: Person, at: datetime) -> list[CheckIn]:
    return checkins.check_ins_decide(person_id=person.id, now=at)


def _deliver(decided: list[CheckIn]) -> list[CheckIn]:
    """The bot collected and said these (the sent ones)."""
    for check_in in decided:
        if check_in.outcome == CheckIn.Outcome.SENT:
            checkins.check_in_mark_delivered(person_id=check_in.person_id, check_in_id=check_in.id)
    return decided


# --- Sending ------------------------------------------------------------------------------------


def test_a_due_slot_is_sent_as_an_assistant_message_in_a_new_session():
    person = _person()
    _enable(person)
    at = _local(2026, 11, 23, 9, 5)

    [check_in] = _decide(person, at)

    assert (check_in.outcome, check_in.reason) == ("sent", "awaiting_delivery")
    assert check_in.slot == "2026-11-23T09:00"
    assert check_in.persona == person.persona
    message = check_in.message
    assert message.role == ChatMessage.Role.ASSISTANT
    assert message.sequence_number == 1
    assert message.person_id == person.id
    assert message.intent == "check_in"
    assert message.content.startswith("Good morning, Margaret. ")
    session = Session.objects.get(id=message.session_id)
    assert (session.status, session.message_count, session.person_id) == ("active", 1, person.id)
    person.refresh_from_db()
    assert person.last_active_at == SETUP_AT  # the person said nothing


def test_nothing_is_decided_before_the_time_or_when_switched_off():
    person = _person()
    _enable(person, times=["09:00"])
    assert _decide(person, _local(2026, 11, 23, 8, 59)) == []

    checkins.checkin_settings_update(
        person_id=person.id, enabled=False, times=["09:00"], night_start=21, night_end=8
    )
    CheckInSettings.objects.filter(person=person).update(updated_at=SETUP_AT)
    assert _decide(person, _local(2026, 11, 23, 9, 5)) == []
    assert not CheckIn.objects.exists()


def test_an_archived_person_is_never_checked_on():
    person = _person()
    _enable(person)
    Person.objects.filter(id=person.id).update(status=Person.Status.ARCHIVED)
    assert _decide(person, _local(2026, 11, 23, 9, 5)) == []
    assert checkins.people_due_for_check_ins(now=_local(2026, 11, 23, 9, 5)) == []


def test_check_in_words_are_warm_named_and_dementia_safe_on_every_variant():
    person = _person()
    seen = set()
    for day in range(1, 29):
        for hhmm in ("08:30", "13:00", "19:15"):
            slot = checkins.slot_for(datetime(2026, 2, day).date(), hhmm, LONDON)
            text = checkins.check_in_text(person=person, slot=slot)
            seen.add(text.split(". ", 1)[1])
            assert ", Margaret. " in text
            assert text.count("?") == 1
            assert not NOT_DEMENTIA_SAFE.search(text), text
    assert len(seen) == len(checkins._OPENINGS)  # days vary the words


def test_greeting_follows_the_local_time_and_falls_back_to_the_display_name():
    person = _person(name=None)
    afternoon = checkins.slot_for(datetime(2026, 2, 2).date(), "15:00", LONDON)
    evening = checkins.slot_for(datetime(2026, 2, 2).date(), "19:00", LONDON)
    assert checkins.check_in_text(person=person, slot=afternoon).startswith(
        "Good afternoon, Mrs M. Jones. "
    )
    assert checkins.check_in_text(person=person, slot=evening).startswith("Good evening, ")
    person.display_name = ""
    text = checkins.check_in_text(person=person, slot=evening)
    assert text.startswith("Good evening. ")


def test_several_due_slots_send_at_most_one_as_the_companion_has_just_spoken():
    person = _person()
    _enable(person, times=["09:00", "09:30"])
    CheckInSettings.objects.filter(person=person).update(updated_at=SETUP_AT)

    decided = _decide(person, _local(2026, 11, 23, 9, 40))

    assert [(c.slot[-5:], c.outcome, c.reason) for c in decided] == [
        ("09:00", "sent", "awaiting_delivery"),
        ("09:30", "suppressed", "conversation_active"),
    ]


# --- Suppression rules --------------------------------------------------------------------------


def test_suppressed_at_night_in_the_persons_time_zone():
    person = _person()
    _enable(person, times=["20:45"])
    [check_in] = _decide(person, _local(2026, 11, 23, 21, 5))
    assert (check_in.outcome, check_in.reason, check_in.message) == ("suppressed", "night", None)
    assert not ChatMessage.objects.exists()


def test_night_hours_may_lie_within_one_day():
    assert checkins.is_night(3, night_start=1, night_end=6)
    assert not checkins.is_night(6, night_start=1, night_end=6)
    assert checkins.is_night(23, night_start=21, night_end=8)
    assert checkins.is_night(7, night_start=21, night_end=8)
    assert not checkins.is_night(8, night_start=21, night_end=8)
    assert not checkins.is_night(3, night_start=0, night_end=0)  # no night at all


def test_suppressed_while_a_conversation_is_active(settings):
    settings.CLARA_SESSION_IDLE_MINUTES = 30
    person = _person()
    _enable(person)
    _talk(person, _local(2026, 11, 23, 8, 40))

    [check_in] = _decide(person, _local(2026, 11, 23, 9, 5))

    assert (check_in.outcome, check_in.reason) == ("suppressed", "conversation_active")
    assert ChatMessage.objects.filter(role="assistant").count() == 1  # only the exchange's


def test_a_turn_in_flight_counts_as_a_conversation():
    person = _person()
    _enable(person)
    at = _local(2026, 11, 23, 9, 5)
    TurnLock.objects.create(person=person, turn_id=uuid.uuid4(), held_until=at + timedelta(1))
    [check_in] = _decide(person, at)
    assert check_in.reason == "conversation_active"


def test_suppressed_when_the_companion_spoke_recently(settings):
    settings.CLARA_CHECKIN_QUIET_MINUTES = 120
    person = _person()
    _enable(person, times=["09:00", "11:00"])
    # Closed an hour and a half before: no active conversation, but the companion spoke.
    _talk(person, _local(2026, 11, 23, 7, 30), close=True)

    [first] = _decide(person, _local(2026, 11, 23, 9, 5))
    [second] = _decide(person, _local(2026, 11, 23, 11, 5))

    assert (first.outcome, first.reason) == ("suppressed", "companion_spoke_recently")
    assert (second.outcome, second.reason) == ("sent", "awaiting_delivery")


def test_suppressed_after_max_unanswered_until_the_person_talks_again():
    person = _person()
    _enable(person, times=["10:00"], max_unanswered=2)

    monday = _deliver(_decide(person, _local(2026, 11, 23, 10, 5)))
    tuesday = _deliver(_decide(person, _local(2026, 11, 24, 10, 5)))
    wednesday = _decide(person, _local(2026, 11, 25, 10, 5))
    assert [c.outcome for c in monday + tuesday] == ["sent", "sent"]
    assert (wednesday[0].outcome, wednesday[0].reason) == ("suppressed", "unanswered")

    _talk(person, _local(2026, 11, 25, 15, 0), close=True)  # the person talks again
    [thursday] = _decide(person, _local(2026, 11, 26, 10, 5))
    assert thursday.outcome == "sent"
    assert set(CheckIn.objects.filter(outcome="sent").values_list("slot", "answered")) == {
        ("2026-11-23T10:00", True),
        ("2026-11-24T10:00", True),
        ("2026-11-26T10:00", False),
    }


def test_a_reply_in_the_check_in_session_marks_it_answered():
    person = _person()
    _enable(person, times=["10:00"], max_unanswered=1)
    [check_in] = _deliver(_decide(person, _local(2026, 11, 23, 10, 5)))
    services.exchange_record(
        session_id=check_in.message.session_id,
        user_message="Oh hello dear, I'm fine.",
        assistant_message="I'm so glad to hear it.",
        at=_local(2026, 11, 23, 10, 7),
    )
    [next_day] = _decide(person, _local(2026, 11, 24, 10, 5))
    check_in.refresh_from_db()
    assert check_in.answered is True
    assert next_day.outcome == "sent"  # max_unanswered=1 would have stopped it otherwise


def test_undelivered_check_ins_neither_count_as_unanswered_nor_get_answered(settings):
    settings.CLARA_CHECKIN_DELIVERY_MINUTES = 60
    person = _person()
    _enable(person, times=["10:00"], max_unanswered=1)
    [monday] = _decide(person, _local(2026, 11, 23, 10, 5))
    _talk(person, _local(2026, 11, 23, 16, 0), close=True)
    # The bot never collected Monday's; Tuesday's decision retires it first.
    [tuesday] = _decide(person, _local(2026, 11, 24, 10, 5))
    monday.refresh_from_db()
    assert (monday.reason, monday.answered) == ("undelivered", False)
    assert tuesday.outcome == "sent"


def test_a_slot_reached_long_after_its_time_is_suppressed_as_late(settings):
    settings.CLARA_CHECKIN_LATE_MINUTES = 60
    person = _person()
    _enable(person, times=["09:00"])
    [check_in] = _decide(person, _local(2026, 11, 23, 10, 30))
    assert (check_in.outcome, check_in.reason) == ("suppressed", "late")


def test_slots_that_passed_before_the_settings_changed_are_not_sent():
    person = _person()
    with time_machine.travel(_local(2026, 11, 23, 9, 30), tick=False):
        checkins.checkin_settings_update(
            person_id=person.id, enabled=True, times=["09:00", "12:00"], night_start=21, night_end=8
        )
        assert _decide(person, _local(2026, 11, 23, 9, 35)) == []
    [noon] = _decide(person, _local(2026, 11, 23, 12, 1))
    assert noon.slot == "2026-11-23T12:00"


# --- Scheduler and idempotence ------------------------------------------------------------------


def test_scheduler_tasks_run_twice_decide_each_slot_once():
    person, other = _person(), _person(zone="America/New_York")
    _enable(person)
    _enable(other)
    with time_machine.travel(_local(2026, 11, 23, 9, 5), tick=False):
        # London's 09:00 has passed; New York's is five hours away.
        assert checkins.people_due_for_check_ins() == [person.id]
        assert tasks.schedule_check_ins() == 1
        first = tasks.decide_check_ins(str(person.id))
        second = tasks.decide_check_ins(str(person.id))
        assert tasks.schedule_check_ins() == 0
        assert tasks.decide_check_ins(str(other.id)) == []

    assert first == ["2026-11-23T09:00 sent awaiting_delivery"]
    assert second == []
    assert CheckIn.objects.count() == 1
    assert ChatMessage.objects.count() == 1


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True)
def test_concurrent_deciders_send_one_check_in():
    person = _person()
    _enable(person)
    at = _local(2026, 11, 23, 9, 5)
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def decide() -> None:
        try:
            barrier.wait()
            checkins.check_ins_decide(person_id=person.id, now=at)
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=decide) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert CheckIn.objects.count() == 1
    assert ChatMessage.objects.count() == 1
    assert Session.objects.get().message_count == 1


# --- Time zones and DST -------------------------------------------------------------------------


def test_local_times_follow_the_clock_change_in_spring():
    person = _person()
    _enable(person, times=["09:00"])
    # Saturday 28 March 2026, GMT: 09:00 local is 09:00 UTC.
    with time_machine.travel(datetime(2026, 3, 28, 8, 30, tzinfo=UTC), tick=False):
        assert tasks.decide_check_ins(str(person.id)) == []
    with time_machine.travel(datetime(2026, 3, 28, 9, 1, tzinfo=UTC), tick=False):
        assert tasks.decide_check_ins(str(person.id)) == ["2026-03-28T09:00 sent awaiting_delivery"]
    # Sunday 29 March, BST: 09:00 local is 08:00 UTC, an hour earlier than the day before.
    with time_machine.travel(datetime(2026, 3, 29, 7, 59, tzinfo=UTC), tick=False):
        assert tasks.decide_check_ins(str(person.id)) == []
    with time_machine.travel(datetime(2026, 3, 29, 8, 1, tzinfo=UTC), tick=False):
        assert tasks.decide_check_ins(str(person.id)) == ["2026-03-29T09:00 sent awaiting_delivery"]


def test_local_times_follow_the_clock_change_in_autumn_in_new_york():
    person = _person(zone="America/New_York")
    _enable(person, times=["09:00"])
    # Sunday 1 November 2026, EST from 02:00: 09:00 local is 14:00 UTC (13:00 the day before).
    with time_machine.travel(datetime(2026, 10, 31, 13, 1, tzinfo=UTC), tick=False):
        assert tasks.decide_check_ins(str(person.id)) == ["2026-10-31T09:00 sent awaiting_delivery"]
    with time_machine.travel(datetime(2026, 11, 1, 13, 30, tzinfo=UTC), tick=False):
        assert tasks.decide_check_ins(str(person.id)) == []
    with time_machine.travel(datetime(2026, 11, 1, 14, 1, tzinfo=UTC), tick=False):
        assert tasks.decide_check_ins(str(person.id)) == ["2026-11-01T09:00 sent awaiting_delivery"]


def test_a_time_that_happens_twice_on_the_autumn_change_is_decided_once():
    person = _person()
    _enable(person, times=["01:30"], night_start=0, night_end=0)
    # 25 October 2026: 01:30 London happens at 00:30 UTC (BST) and again at 01:30 UTC (GMT).
    with time_machine.travel(datetime(2026, 10, 25, 0, 35, tzinfo=UTC), tick=False):
        assert tasks.decide_check_ins(str(person.id)) == ["2026-10-25T01:30 sent awaiting_delivery"]
    with time_machine.travel(datetime(2026, 10, 25, 1, 35, tzinfo=UTC), tick=False):
        assert tasks.decide_check_ins(str(person.id)) == []
    assert CheckIn.objects.count() == 1


def test_a_time_skipped_by_the_spring_change_goes_out_an_hour_later():
    slot = checkins.slot_for(datetime(2026, 3, 29).date(), "01:30", LONDON)
    assert slot.key == "2026-03-29T01:30"
    assert slot.at == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    assert (slot.local.hour, slot.local.minute) == (2, 30)


# --- Settings -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"times": ["9:00"]}, "times"),
        ({"times": ["25:00"]}, "times"),
        ({"times": ["09:00", "noon"]}, "times"),
        ({"times": [900]}, "times"),
        ({"times": "09:00"}, "times"),
        ({"times": []}, "times"),
        ({"times": ["22:00"]}, "times"),  # in the night hours
        ({"night_start": 24}, "night_start"),
        ({"night_end": -1}, "night_end"),
        ({"enabled": "yes"}, "enabled"),
        ({"max_unanswered": 0}, "max_unanswered"),
        ({"max_unanswered": 11}, "max_unanswered"),
    ],
)
def test_bad_settings_are_refused_naming_the_field_and_nothing_changes(fields, field):
    person = _person()
    _enable(person, times=["09:00"])
    values = {"enabled": True, "times": ["10:00"], "night_start": 21, "night_end": 8} | fields
    with pytest.raises(Invalid) as caught:
        checkins.checkin_settings_update(person_id=person.id, **values)
    assert caught.value.field == field
    assert CheckInSettings.objects.get(person=person).times == ["09:00"]


def test_settings_are_normalised_and_switching_off_keeps_the_times():
    person = _person()
    row = checkins.checkin_settings_update(
        person_id=person.id,
        enabled=True,
        times=["15:00", " 09:30", "15:00"],
        night_start=22,
        night_end=7,
        max_unanswered=3,
    )
    assert (row.times, row.night_start, row.night_end, row.max_unanswered) == (
        ["09:30", "15:00"],
        22,
        7,
        3,
    )
    row = checkins.checkin_settings_update(
        person_id=person.id, enabled=False, times=row.times, night_start=22, night_end=7
    )
    assert (row.enabled, row.times, row.max_unanswered) == (False, ["09:30", "15:00"], 3)
    assert CheckInSettings.objects.count() == 1


def test_settings_for_an_unknown_person_are_not_found():
    with pytest.raises(NotFound):
        checkins.checkin_settings_update(
            person_id=uuid.uuid4(), enabled=False, times=[], night_start=21, night_end=8
        )


# --- The outbox through the API -----------------------------------------------------------------


@pytest.fixture
def companion_api(api):
    """The bot API, which mounts the check-in endpoints."""
    assert any(router is companion_router for _, router in project_api._routers)
    return api


def test_outbox_flow_collect_confirm_and_reply(companion_api):
    person = _person()
    _enable(person)
    [check_in] = _decide(person, _local(2026, 11, 23, 9, 5))
    url = f"/api/v1/people/{person.id}/outbox"

    with time_machine.travel(_local(2026, 11, 23, 9, 6), tick=False):
        response = companion_api.get(url)
        assert response.status_code == 200
        [item] = response.json()["check_ins"]
        assert item["check_in_id"] == str(check_in.id)
        assert item["session_id"] == str(check_in.message.session_id)
        assert item["content"] == check_in.message.content
        assert (item["slot"], item["sequence_number"], item["delivered"]) == (
            "2026-11-23T09:00",
            1,
            False,
        )

        confirm = companion_api.post(f"{url}/{check_in.id}/delivered")
        assert confirm.status_code == 200
        assert confirm.json()["delivered"] is True
        assert companion_api.post(f"{url}/{check_in.id}/delivered").json() == confirm.json()
        assert companion_api.get(url).json() == {"check_ins": []}

    with time_machine.travel(_local(2026, 11, 23, 9, 8), tick=False):
        # The person's answer goes into the check-in's session like any exchange.
        reply = companion_api.post(
            f"/api/v1/sessions/{item['session_id']}/exchanges",
            {"user_message": "Hello love, I'm all right.", "assistant_message": "I'm so glad."},
        )
        assert reply.status_code == 201
        assert reply.json()["user_message"]["sequence_number"] == 2
        history = companion_api.get(f"/api/v1/sessions/{item['session_id']}/messages").json()
    assert [m["role"] for m in history["messages"]] == ["assistant", "user", "assistant"]
    checkins.check_ins_mark_answered(person_id=person.id)
    check_in.refresh_from_db()
    assert (check_in.reason, check_in.answered) == ("delivered", True)


def test_the_check_in_is_in_the_next_turns_context():
    person = _person()
    _enable(person)
    [check_in] = _decide(person, _local(2026, 11, 23, 9, 5))
    result = context_build(
        session_id=check_in.message.session_id,
        message="Hello dear.",
        now=_local(2026, 11, 23, 9, 7),
    )
    assert result.rendered.messages[0] == {
        "role": "assistant",
        "content": check_in.message.content,
    }


def test_outbox_stops_offering_a_check_in_after_the_delivery_window(companion_api, settings):
    settings.CLARA_CHECKIN_DELIVERY_MINUTES = 60
    person = _person()
    _enable(person)
    _decide(person, _local(2026, 11, 23, 9, 5))
    url = f"/api/v1/people/{person.id}/outbox"
    with time_machine.travel(_local(2026, 11, 23, 10, 4), tick=False):
        assert len(companion_api.get(url).json()["check_ins"]) == 1
    with time_machine.travel(_local(2026, 11, 23, 10, 6), tick=False):
        assert companion_api.get(url).json()["check_ins"] == []


def test_outbox_is_per_person_and_needs_a_key(companion_api, anonymous_api):
    person, other = _person(), _person()
    _enable(person)
    [check_in] = _decide(person, _local(2026, 11, 23, 9, 5))

    wrong_person = companion_api.post(f"/api/v1/people/{other.id}/outbox/{check_in.id}/delivered")
    assert wrong_person.status_code == 404
    assert wrong_person.json()["field"] == "check_in_id"
    unknown = companion_api.get(f"/api/v1/people/{uuid.uuid4()}/outbox")
    assert (unknown.status_code, unknown.json()["field"]) == (404, "person_id")
    assert anonymous_api.get(f"/api/v1/people/{person.id}/outbox").status_code == 401
    check_in.refresh_from_db()
    assert check_in.reason == "awaiting_delivery"


def test_suppressed_check_ins_cannot_be_confirmed(companion_api):
    person = _person()
    _enable(person, times=["20:45"])
    [check_in] = _decide(person, _local(2026, 11, 23, 21, 5))
    response = companion_api.post(f"/api/v1/people/{person.id}/outbox/{check_in.id}/delivered")
    assert response.status_code == 404


def test_settings_through_the_api(companion_api):
    person = _person()
    url = f"/api/v1/people/{person.id}/check-ins/settings"
    assert companion_api.get(url).json() == {
        "person_id": str(person.id),
        "enabled": False,
        "times": [],
        "night_start": 21,
        "night_end": 8,
        "max_unanswered": 2,
    }
    body = {"enabled": True, "times": ["16:00", "09:30"], "night_start": 22, "night_end": 7}
    response = companion_api.client.put(
        url, body, content_type="application/json", headers=companion_api.headers
    )
    assert response.status_code == 200
    assert response.json()["times"] == ["09:30", "16:00"]
    assert CheckInSettings.objects.get(person=person).enabled is True


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"times": ["24:00"]}, "times"),
        ({"times": ["07:00"]}, "times"),  # night
        ({"times": [9]}, "times.0"),
        ({"night_start": 25}, "night_start"),
        ({"night_end": "seven"}, "night_end"),
        ({"enabled": "sometimes"}, "enabled"),
        ({"max_unanswered": 0}, "max_unanswered"),
    ],
)
def test_bad_settings_through_the_api_get_422_naming_the_field(companion_api, body, field):
    person = _person()
    _enable(person, times=["09:00"])
    full = {"enabled": True, "times": ["10:00"], "night_start": 21, "night_end": 8} | body
    response = companion_api.client.put(
        f"/api/v1/people/{person.id}/check-ins/settings",
        full,
        content_type="application/json",
        headers=companion_api.headers,
    )
    assert response.status_code == 422
    assert response.json()["field"] == field
    assert CheckInSettings.objects.get(person=person).times == ["09:00"]


def test_openapi_documents_the_outbox(companion_api):
    schema = companion_api.get("/api/v1/openapi.json").json()
    assert "/api/v1/people/{person_id}/outbox" in schema["paths"]
    assert "post" in schema["paths"]["/api/v1/people/{person_id}/outbox/{check_in_id}/delivered"]
    assert "put" in schema["paths"]["/api/v1/people/{person_id}/check-ins/settings"]


# --- Summaries and admin ------------------------------------------------------------------------


def test_an_unanswered_check_in_session_expires_and_gets_a_summary(settings):
    settings.CLARA_SESSION_IDLE_MINUTES = 30
    person = _person()
    _enable(person)
    [check_in] = _decide(person, _local(2026, 11, 23, 9, 5))
    assert services.sessions_expire_idle(now=_local(2026, 11, 23, 10, 0)) == 1
    summary = summaries.session_summary_compute(session_id=check_in.message.session_id)
    assert summary["counts"]["person_messages"] == 0
    assert summary["open_loops"] == []


def test_admin_lists_check_ins_and_refuses_bad_times(admin_client):
    person = _person()
    _enable(person)
    _decide(person, _local(2026, 11, 23, 9, 5))
    for model in ("checkin", "checkinsettings", "commitment"):
        assert admin_client.get(reverse(f"admin:memory_{model}_changelist")).status_code == 200
    response = admin_client.post(
        reverse("admin:memory_checkinsettings_change", args=[person.id]),
        {
            "person": str(person.id),
            "enabled": "on",
            "times": '["27:00"]',
            "night_start": "21",
            "night_end": "8",
            "max_unanswered": "2",
        },
    )
    assert response.status_code == 200  # the form again, with the error
    assert "is not a time of day" in response.content.decode()
    assert CheckInSettings.objects.get(person=person).times == ["09:00"]
