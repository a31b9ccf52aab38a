"""The reference companion: offline and LLM replies, the turn, and `manage.py chat` end to end."""

import io
import itertools
import re
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from memory.companion.bot import (
    Companion,
    LLMReplier,
    OfflineReplier,
    replier_from_settings,
)
from memory.companion.client import Analysis, Context, Narrative, NarrativeRef, StoredExchange
from memory.core.llm import ChatModel
from memory.management.commands.chat import person_id_for
from memory.models import ApiKey, ChatMessage, Session

# The memory never lets Clara tell the person they are repeating themselves, or test them.
FORBIDDEN = re.compile(
    r"\b(again|already|before|earlier|last time|you asked|remember|told you)\b", re.IGNORECASE
)
QUESTION_TYPES = ["location", "identity", "time", "activity", "person", "general", "unknown"]
EMOTIONS = ["anxious", "confused", "fearful", "lonely", "sad", "neutral", "calm"]
MESSAGES = [
    "Where am I?",
    "Where am I",
    "Who are you?",
    "What day is it?",
    "When is Sarah coming?",
    "What should I do now?",
    "I want to go home",
    "I'm scared",
    "Hello",
]
STORY = Narrative(
    id="garden-roses",
    mode="seed",
    text="Your roses were the talk of the street. Every June the whole garden was pink and red.",
    category="calming",
    theme_tags=["garden"],
)


def _context(
    message="Where am I?",
    *,
    question_type="location",
    emotion="neutral",
    escalate=False,
    narrative=None,
    max_tokens=200,
    history=0,
) -> Context:
    earlier = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"line {i}"}
        for i in range(history)
    ]
    return Context(
        system_prompt="You are Clara, a warm companion. The person likes to be called Nana.",
        messages=[*earlier, {"role": "user", "content": message}],
        max_tokens=max_tokens,
        narrative=narrative,
        analysis=Analysis(
            is_repeat=history > 0,
            repeat_count=history // 2,
            question_type=question_type,
            cross_session_repeat_count=3,
            emotion=emotion,
            distress_score=0.9 if escalate else 0.3,
            trajectory="escalating" if escalate else "stable",
            window_size=history + 1,
            escalate=escalate,
            escalation_reason="sustained distress" if escalate else None,
        ),
    )


# --- OfflineReplier ---------------------------------------------------------------------------


def test_offline_replies_never_mention_repetition_or_quiz_the_person():
    seen = set()
    for name, qtype, emotion, escalate, story, max_tokens, history in itertools.product(
        [None, "Nana"],
        QUESTION_TYPES,
        EMOTIONS,
        [False, True],
        [None, STORY],
        [40, 80, 300],
        [0, 1, 4, 9],
    ):
        replier = OfflineReplier(display_name=name)
        for message in MESSAGES[:3] if history else MESSAGES:
            context = _context(
                message,
                question_type=qtype,
                emotion=emotion,
                escalate=escalate,
                narrative=story,
                max_tokens=max_tokens,
                history=history,
            )
            reply = replier.reply("s-1", message, context)
            assert reply.strip(), context
            assert not FORBIDDEN.search(reply), reply
            assert "{" not in reply and "None" not in reply, reply
            seen.add(reply)
    assert len(seen) > 40  # a real variety, not one canned line


def test_a_repeated_question_gets_varied_but_reproducible_replies():
    replier = OfflineReplier("Nana")
    replies = [replier.reply("s-1", "Where am I?", _context(history=h)) for h in range(0, 12, 2)]
    assert len(set(replies)) >= 3
    assert replies == [
        replier.reply("s-1", "Where am I?", _context(history=h)) for h in range(0, 12, 2)
    ]


def test_a_location_question_is_answered_with_reassurance():
    reply = OfflineReplier().reply("s-1", "Where am I?", _context())
    assert "safe" in reply or "right where" in reply


def test_a_chosen_story_is_told_with_a_lead_in_using_the_name():
    reply = OfflineReplier("Nana").reply("s-1", "I'm bored", _context(narrative=STORY))
    assert reply.endswith(STORY.text)
    assert "Nana" in reply.removesuffix(STORY.text)
    nameless = OfflineReplier().reply("s-1", "I'm bored", _context(narrative=STORY))
    assert nameless == STORY.text


def test_a_small_token_budget_gives_a_short_reply_that_still_carries_the_story():
    context = _context(emotion="fearful", escalate=True, narrative=STORY, max_tokens=20)
    reply = OfflineReplier("Nana").reply("s-1", "Help me", context)
    assert "Your roses were the talk of the street." in reply
    assert "Nana" not in reply  # no lead-in when the budget is small
    assert len(reply) <= 100
    for qtype in QUESTION_TYPES:
        short = OfflineReplier("Nana").reply(
            "s-1", "Hm", _context(question_type=qtype, emotion="anxious", max_tokens=60)
        )
        assert len(short) <= 240


def test_distress_is_met_with_comfort_first():
    reply = OfflineReplier().reply("s-1", "I'm scared", _context(emotion="fearful", escalate=True))
    assert "safe" in reply.split(".")[0] or "here" in reply.split(".")[0]


# --- LLMReplier -------------------------------------------------------------------------------


def test_llm_replier_sends_the_context_as_it_is(http_receiver):
    http_receiver.answers = [(200, {"choices": [{"message": {"content": " Hello Nana. "}}]})]

    replier = LLMReplier(ChatModel(http_receiver.url + "/v1/", "clara-small", "sk-test"))
    context = _context(history=2, max_tokens=120)
    assert replier.reply("s-1", "Where am I?", context) == "Hello Nana."
    (request,) = http_receiver.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.json == {
        "model": "clara-small",
        "messages": [{"role": "system", "content": context.system_prompt}, *context.messages],
        "max_tokens": 120,
        "temperature": 0.7,
    }


@pytest.mark.parametrize(
    "answer",
    [
        (500, "boom"),
        (200, {"choices": []}),
        (200, {"choices": [{"message": {"content": "  "}}]}),
        (200, "not json"),
        "close",
    ],
)
def test_llm_replier_falls_back_to_the_offline_reply(answer, http_receiver, caplog):
    http_receiver.answers = [answer]

    replier = LLMReplier(ChatModel(http_receiver.url + "/v1", "m"), display_name="Nana")
    context = _context()
    assert replier.reply("s-1", "Where am I?", context) == OfflineReplier("Nana").reply(
        "s-1", "Where am I?", context
    )
    assert "offline reply" in caplog.text


def test_llm_replier_falls_back_when_nothing_listens(caplog):
    replier = LLMReplier(ChatModel("http://127.0.0.1:9/v1", "m", timeout=2), display_name="Nana")
    context = _context()
    assert replier.reply("s-1", "Where am I?", context) == OfflineReplier("Nana").reply(
        "s-1", "Where am I?", context
    )


def test_replier_from_settings(settings):
    settings.CLARA_LLM_URL = ""
    assert isinstance(replier_from_settings(), OfflineReplier)
    settings.CLARA_LLM_URL = "http://llm.test/v1"
    settings.CLARA_LLM_MODEL = "clara-small"
    replier = replier_from_settings(display_name="Nana")
    assert isinstance(replier, LLMReplier)
    assert (replier.model.url, replier.model.model) == (
        "http://llm.test/v1/chat/completions",
        "clara-small",
    )


# --- Companion.turn ---------------------------------------------------------------------------


class FakeClient:
    def __init__(self, context: Context):
        self._context = context
        self.stored: list[dict] = []
        self.context_times: list = []

    def context(self, session_id, message, emotion=None, occurred_at=None):
        self.context_times.append(occurred_at)
        return self._context

    def store_exchange(self, session_id, user_message, assistant_message, **fields):
        self.stored.append(
            {"user_message": user_message, "assistant_message": assistant_message, **fields}
        )
        return StoredExchange(
            idempotency_key=fields["idempotency_key"], pending=False, created=True
        )


def test_a_turn_stores_the_reply_with_the_story_escalation_and_intent():
    client = FakeClient(_context(emotion="fearful", escalate=True, narrative=STORY))
    result = Companion(client, OfflineReplier("Nana")).turn("s-1", "Help me")
    [stored] = client.stored
    assert stored["user_message"] == "Help me"
    assert stored["assistant_message"] == result.reply
    assert stored["narrative"] == NarrativeRef("garden-roses", "seed", "calming")
    assert stored["escalation"] is True and result.escalate
    assert stored["intent"] == result.intent == "comfort"
    assert stored["processing_time_ms"] == result.processing_time_ms >= 0
    assert stored["idempotency_key"]


def test_a_turn_dates_the_stored_exchange_only_when_asked():
    client = FakeClient(_context())
    companion = Companion(client)
    at = datetime(2025, 3, 3, 18, 30, tzinfo=UTC)
    companion.turn("s-1", "Where am I?", occurred_at=at)
    companion.turn("s-1", "Where am I?")
    assert [stored["occurred_at"] for stored in client.stored] == [at, None]
    assert client.context_times == [at, None]  # the context is built as of the turn, too


def test_a_plain_turn_has_no_story_and_the_question_type_as_intent():
    client = FakeClient(_context(question_type="identity"))
    Companion(client).turn("s-1", "Who are you?")
    [stored] = client.stored
    assert stored["narrative"] is None and stored["escalation"] is False
    assert stored["intent"] == "identity"


# --- manage.py chat, in-process through the real API ------------------------------------------


def _chat(person: str, lines: str, **options) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("chat", person=person, stdin=io.StringIO(lines), stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db(transaction=True)
def test_chat_stores_every_exchange_for_the_person_and_closes_the_session(monkeypatch):
    monkeypatch.delenv("CLARA_LLM_URL", raising=False)
    out, _ = _chat("Nana", "Where am I?\nWho are you?\nWhere am I?\n\nnot read\n")
    session = Session.objects.get(person_id=person_id_for("Nana"))
    assert session.status == Session.Status.CLOSED
    assert session.person.display_name == "Nana"
    rows = list(ChatMessage.objects.filter(session=session).order_by("sequence_number"))
    assert [r.content for r in rows if r.role == "user"] == [
        "Where am I?",
        "Who are you?",
        "Where am I?",
    ]
    replies = [r.content for r in rows if r.role == "assistant"]
    assert out.splitlines() == [f"Clara: {reply}" for reply in replies]
    assert all(not FORBIDDEN.search(reply) for reply in replies)
    # A repeat is answered in full, warmly (the same reassurance is allowed: issue 17).
    assert len(replies[2].split()) >= 10
    assert all(r.processing_time_ms is not None for r in rows if r.role == "assistant")
    # The temporary key made for the in-process chat does not outlive it.
    assert not ApiKey.objects.filter(revoked_at__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
def test_chat_the_same_name_is_the_same_person_and_bye_ends_it(monkeypatch):
    monkeypatch.delenv("CLARA_LLM_URL", raising=False)
    _chat("Nana", "Hello\n")  # EOF ends it
    out, _ = _chat("  nana ", "Hello there\nbye\nnot read\n")
    sessions = Session.objects.filter(person_id=person_id_for("Nana"))
    assert sessions.count() == 2
    assert {s.status for s in sessions} == {Session.Status.CLOSED}
    assert out.splitlines()[-1].startswith("Clara: Goodbye for now")
    assert ChatMessage.objects.filter(session__person_id=person_id_for("Nana")).count() == 6


@pytest.mark.django_db(transaction=True)
def test_chat_resumes_a_given_session(monkeypatch):
    monkeypatch.delenv("CLARA_LLM_URL", raising=False)
    _chat("Nana", "Hello\n")
    first = Session.objects.get()
    _chat("Nana", "Hello\n", session=first.id)
    first.refresh_from_db()
    assert first.message_count == 4
    assert first.status == Session.Status.CLOSED


@pytest.mark.django_db
def test_chat_with_a_url_needs_a_key(monkeypatch):
    monkeypatch.delenv("CLARA_API_KEY", raising=False)
    with pytest.raises(CommandError, match="CLARA_API_KEY"):
        _chat("Nana", "Hello\n", url="http://127.0.0.1:9")
