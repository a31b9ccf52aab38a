"""Dementia-safe context assembly: the rules hold for any conversation, at every repeat tier."""

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.companion import prompt as context
from memory.conversations import escalation, meaning, repeats, services
from memory.conversations.emotion import EmotionReading

# Words and shapes that would tell the LLM (and so the person) that something was repeated,
# compare with other days, or stamp the person's messages with a time.
FORBIDDEN = [
    r"\bagain\b",
    r"\balready\b",
    r"\bbefore\b",
    r"\bearlier\b",
    r"\blast time\b",
    r"\byou asked\b",
    r"\brepeat",
    r"\btimes\b",
    r"\byesterday\b",
    r"\blast week\b",
    r"\bremember\b",
    r"\b\d{1,2}:\d{2}\b",
    r"\b\d{4}-\d{2}-\d{2}\b",
    r"#\d+",
]

# What a person and Clara say, free of the forbidden words themselves (the person's own words
# are theirs to choose; this checks what the memory layer adds).
PERSON_LINES = [
    "Where am I?",
    "What is this place?",
    "When is my daughter coming?",
    "Where is Tom?",
    "What day is it?",
    "Who are you?",
    "I want to go home.",
    "I like the garden.",
    "Is the cat here?",
    "I feel a bit lost.",
    "That sounds lovely.",
    "What should I do now?",
    "I miss my husband.",
    "Can we have tea?",
]
# The same things in other words (repeats by meaning, not by the fingerprint rule), and one
# opposite, which is never a repeat.
PARAPHRASES = [
    "Take me home, please.",
    "Can I go home now?",
    "Is my daughter on her way?",
    "Could I have a cup of tea?",
    "Which day is it today?",
    "Have you seen Tom?",
    "What's your name?",
    "What am I supposed to do?",
    "The garden is lovely.",
    "Where is the cat?",
    "I don't want to go home.",
]
SAID = PERSON_LINES + PARAPHRASES
_MEANINGS: dict[str, meaning.MessageMeaning] = {}


def meaning_of(text: str) -> meaning.MessageMeaning:
    """The meaning of a line, analysed once for the whole module (MiniLM, as in the product)."""
    if text not in _MEANINGS:
        _MEANINGS[text] = meaning.analyse(text)
    return _MEANINGS[text]


def person_turn(text: str) -> context.Turn:
    return context.Turn("user", text, meaning_of(text))


def stored_meaning_of(text: str) -> meaning.MessageMeaning:
    """The meaning as the product reads it back from the database (quantised)."""
    return meaning.from_stored(meaning.to_stored(meaning_of(text)))


def repeats_in(questions: list[str], of=meaning_of) -> list[tuple[str, str]]:
    """Pairs (earlier, later) where the later question repeats the earlier, by words or meaning."""
    return [
        (earlier, later)
        for index, later in enumerate(questions)
        for earlier in questions[:index]
        if repeats.says_again(earlier, later, of(earlier), of(later))
    ]


CLARA_LINES = [
    "You're somewhere safe, and I'm right here with you.",
    "Your daughter loves you very much.",
    "It's a lovely calm day.",
    "I'm Clara, a friend who likes talking with you.",
    "The garden is full of roses.",
    "Shall we listen to some music?",
]
EMOTIONS = ["anxious", "confused", "fearful", "lonely", "sad", "neutral", "calm"]
TRAJECTORIES = ["escalating", "stable", "de-escalating"]


def llm_visible(rendered: context.RenderedContext) -> str:
    return rendered.system_prompt + "\n" + "\n".join(m["content"] for m in rendered.messages)


def forbidden_in(text: str) -> list[str]:
    return [pattern for pattern in FORBIDDEN if re.search(pattern, text, re.IGNORECASE)]


turns = st.lists(st.tuples(st.sampled_from(SAID), st.sampled_from(CLARA_LINES)), max_size=10).map(
    lambda pairs: [
        turn for p, c in pairs for turn in (person_turn(p), context.Turn("assistant", c))
    ]
)
feelings = st.lists(
    st.builds(
        context.Feeling,
        st.sampled_from(EMOTIONS),
        st.floats(0, 1, allow_nan=False),
        st.sampled_from(TRAJECTORIES),
    ),
    max_size=10,
)
inputs = st.builds(
    context.ContextInputs,
    name=st.sampled_from(["Nana", "Dad", "Rose", ""]),
    message=st.sampled_from(SAID),
    window=turns,
    repeat_count=st.integers(0, 12),
    feelings=feelings,
    narrative=st.none()
    | st.builds(context.NarrativeSeed, st.sampled_from(CLARA_LINES), st.just(("garden",))),
    told_themes=st.lists(st.sampled_from(["garden", "sea", "music", "birds"]), max_size=3),
    anchors=st.lists(st.sampled_from(["Tom", "cat", "garden", "tea"]), max_size=4),
    known_topics=st.lists(st.sampled_from(["baking", "dancing", "cricket"]), max_size=3),
    avoid_topics=st.lists(st.sampled_from(["hospital", "money"]), max_size=2),
    escalate=st.booleans(),
    reassurance=st.none() | st.sampled_from(CLARA_LINES),
    agreed_answer=st.none() | st.just("You live at Rosewood House with Tom."),
)


@given(inputs)
def test_llm_visible_text_never_reveals_repetition_at_any_tier(data):
    rendered = context.render(data)

    assert forbidden_in(llm_visible(rendered)) == []


@given(inputs)
def test_rendering_is_a_pure_function(data):
    assert context.render(data) == context.render(data)


@given(inputs)
def test_messages_are_the_window_then_the_current_message_with_nothing_added(data):
    rendered = context.render(data)

    window_texts = {(t.role, t.content) for t in data.window}
    *history, current = rendered.messages
    assert current == {"role": "user", "content": data.message}
    assert all((m["role"], m["content"]) in window_texts for m in history)
    assert all(set(m) == {"role", "content"} for m in rendered.messages)


@given(inputs.filter(lambda d: d.repeat_count >= context.DEDUPLICATE_AT))
def test_from_three_repeats_no_question_appears_twice_in_the_history(data):
    *history, _current = context.render(data).messages

    questions = [m["content"] for m in history if m["role"] == "user"]
    # Not in the same words, and not in other words either.
    assert repeats_in(questions) == []


def test_deduplication_keeps_one_telling_of_a_question_put_in_other_words():
    window = [
        person_turn("I want to go home."),
        context.Turn("assistant", "You're safe here with me."),
        person_turn("I like the garden."),
        context.Turn("assistant", "The roses are out."),
        person_turn("Take me home, please."),
        context.Turn("assistant", "Let's sit together a while."),
    ]

    kept = context.deduplicate(window)

    assert [t.content for t in kept] == [
        "I like the garden.",
        "The roses are out.",
        "Take me home, please.",
        "Let's sit together a while.",
    ]


def test_deduplication_keeps_an_opposite_apart():
    window = [
        person_turn("I want to go home."),
        context.Turn("assistant", "You're safe here with me."),
        person_turn("I don't want to go home."),
        context.Turn("assistant", "Then let's stay right here."),
    ]

    assert context.deduplicate(window) == window


@given(inputs.filter(lambda d: d.repeat_count < context.DEDUPLICATE_AT))
def test_below_three_repeats_the_window_is_shown_whole(data):
    *history, _current = context.render(data).messages

    assert [(m["role"], m["content"]) for m in history] == [
        (t.role, t.content) for t in data.window
    ]


def test_deduplication_keeps_the_newest_telling_and_its_reply():
    window = [
        context.Turn("user", "Where am I?"),
        context.Turn("assistant", "You're at home."),
        context.Turn("user", "I like the garden."),
        context.Turn("assistant", "The roses are out."),
        context.Turn("user", "What is this place?"),
        context.Turn("assistant", "Somewhere safe, with me."),
    ]

    kept = context.deduplicate(window)

    assert [t.content for t in kept] == [
        "I like the garden.",
        "The roses are out.",
        "What is this place?",
        "Somewhere safe, with me.",
    ]


@pytest.mark.parametrize(("lower", "higher"), [(0, 1), (2, 3), (4, 5)])
def test_warmth_is_strictly_stronger_at_each_tier(lower, higher):
    weaker = context.warmth_directive(lower, "Nana")
    stronger = context.warmth_directive(higher, "Nana")

    assert stronger.startswith(weaker)
    assert len(stronger) > len(weaker)


@pytest.mark.parametrize(("a", "b"), [(1, 2), (3, 4), (5, 9)])
def test_warmth_is_the_same_within_a_tier(a, b):
    assert context.warmth_directive(a, "Nana") == context.warmth_directive(b, "Nana")


@pytest.mark.parametrize("count", range(0, 12))
def test_replies_are_never_asked_to_be_curt(count):
    directive = context.warmth_directive(count, "Nana").lower()

    assert "warm" in directive
    assert not re.search(r"\b(curt|terse|blunt|brusque|firm)\b", directive)


@pytest.mark.parametrize(
    ("count", "brief"), [(0, False), (2, False), (3, True), (4, True), (6, True)]
)
def test_brevity_directive_starts_at_three_repeats(count, brief):
    assert ("short and simple" in context.warmth_directive(count, "Nana")) is brief


@pytest.mark.parametrize(("count", "tokens"), [(0, 300), (4, 300), (5, 80), (11, 80)])
def test_token_limit_tightens_only_for_chronic_repetition(count, tokens):
    assert context.max_tokens_for(count) == tokens


def test_first_time_directive_appears_only_for_a_repeat():
    plain = context.render(context.ContextInputs(name="Nana", message="Hello", window=[]))
    repeated = context.render(
        context.ContextInputs(name="Nana", message="Where am I?", window=[], repeat_count=1)
    )

    assert "very first time" not in plain.system_prompt
    assert "very first time" in repeated.system_prompt


def test_from_five_repeats_the_story_is_the_heart_of_the_reply():
    story = context.NarrativeSeed("The roses are out and the kettle is on.")

    def render(count: int) -> str:
        return context.render(
            context.ContextInputs(
                name="Nana", message="Where am I?", window=[], repeat_count=count, narrative=story
            )
        ).system_prompt

    assert "may draw on" in render(4) and "heart of your reply" not in render(4)
    assert "heart of your reply" in render(5) and "may draw on" not in render(5)
    assert story.text in render(5)
    assert forbidden_in(render(5)) == [] and forbidden_in(render(9)) == []


def test_at_a_repeat_the_reassurance_that_helps_is_kept_in_warm_words():
    def render(**fields) -> str:
        inputs = {"name": "Nana", "message": "Where am I?", "window": [], "repeat_count": 1}
        return context.render(context.ContextInputs(**(inputs | fields))).system_prompt

    kept = render(reassurance="You're at home, safe and warm.")
    assert "A reassurance that comforts Nana here is marked [reassurance]" in kept
    assert '[reassurance] "You\'re at home, safe and warm."' in kept
    assert "same reassurance, in warm words" in kept
    assert forbidden_in(kept) == []
    # Not for a first question, and the family's agreed answer comes first.
    assert "reassurance" not in render(repeat_count=0, reassurance="You're at home.")
    family = render(reassurance="You're at home.", agreed_answer="You live at Rosewood House.")
    assert "Rosewood House" in family and "You're at home." not in family


def test_last_three_feelings_set_a_steady_tone():
    rendered = context.render(
        context.ContextInputs(
            name="Nana",
            message="Hello",
            window=[],
            feelings=[
                context.Feeling("calm", 0.1, "stable"),
                context.Feeling("anxious", 0.6, "escalating"),
                context.Feeling("anxious", 0.5, "stable"),
                context.Feeling("confused", 0.5, "stable"),
            ],
        )
    )

    assert "now: confused (distress 0.5)" in rendered.system_prompt
    assert "a little while ago: anxious (distress 0.6)" in rendered.system_prompt
    assert "calm" not in rendered.system_prompt.split("How Nana has been feeling")[1].split(".")[0]
    assert "Keep your tone steady" in rendered.system_prompt


def test_anchors_come_from_both_sides_newest_first():
    anchors = context.find_anchors(
        ["I miss my husband.", "Tell me about your garden, Nana.", "I saw Tom with the cat."]
    )

    assert anchors[:2] == ["Tom", "cat"]
    assert {"garden", "husband"} <= set(anchors)
    assert "Nana" in anchors  # a name mentioned mid-sentence
    assert "Tell" not in anchors


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("I've fallen and I can't get up", "fall"),
        ("My chest hurts so much", "pain"),
        ("I'm going out, where is the door?", "wants_to_leave"),
        ("I don't want to live anymore", "self_harm"),
        ("Help me please", "asks_for_help"),
        ("Help!", "asks_for_help"),
    ],
)
def test_escalation_detector_names_the_reason(message, reason):
    found = escalation.detect(message)
    assert (found.escalate, found.reason) == (True, reason)


@pytest.mark.parametrize("message", ["Where am I?", "I like the garden", "What day is it?"])
def test_ordinary_messages_do_not_escalate(message):
    assert not escalation.detect(message).escalate


def test_severe_fear_escalates_without_a_phrase():
    assert escalation.detect("Who is that?", emotion="fearful", distress=0.95).reason == (
        "severe_distress"
    )


# --- Through the API ---------------------------------------------------------------------


def _exchange(session_id, user, clara="I'm right here with you.", **extra):
    return services.exchange_record(
        session_id=session_id, user_message=user, assistant_message=clara, **extra
    )


@pytest.mark.django_db
def test_context_endpoint_returns_the_contract_shape(api):
    session_id = uuid.uuid4()
    _exchange(session_id, "Hello")

    response = api.post(f"/api/v1/sessions/{session_id}/context", {"message": "Where am I?"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"system_prompt", "messages", "max_tokens", "narrative", "analysis"}
    assert body["messages"][-1] == {"role": "user", "content": "Where am I?"}
    assert body["analysis"]["question_type"] == "location"
    assert set(body["analysis"]) >= {
        "is_repeat",
        "repeat_count",
        "question_type",
        "cross_session_repeat_count",
        "emotion",
        "distress_score",
        "trajectory",
        "window_size",
        "escalate",
    }


@pytest.mark.django_db
def test_context_stores_nothing(api):
    session_id = uuid.uuid4()
    _exchange(session_id, "Hello")
    from memory.models import ChatMessage, RepetitionRecord

    before = (ChatMessage.objects.count(), RepetitionRecord.objects.count())
    api.post(f"/api/v1/sessions/{session_id}/context", {"message": "Where am I?"})

    assert (ChatMessage.objects.count(), RepetitionRecord.objects.count()) == before


@pytest.mark.django_db
def test_context_for_unknown_session_is_404(api):
    response = api.post(f"/api/v1/sessions/{uuid.uuid4()}/context", {"message": "Hi"})

    assert response.status_code == 404


@pytest.mark.django_db
def test_other_sessions_never_reach_the_prompt(api):
    user_id = uuid.uuid4()
    yesterday, _ = services.session_resolve(user_id=user_id)
    _exchange(yesterday.id, "Where is Margaret-from-yesterday?", "Margaret-from-yesterday is well.")
    today, _ = services.session_resolve(user_id=user_id)
    _exchange(today.id, "Where am I?", "You're home.")

    body = api.post(f"/api/v1/sessions/{today.id}/context", {"message": "Where am I?"}).json()

    text = body["system_prompt"] + " ".join(m["content"] for m in body["messages"])
    assert "Margaret-from-yesterday" not in text
    assert body["analysis"]["cross_session_repeat_count"] == 0


@pytest.mark.django_db
def test_chronic_repetition_is_flagged_for_the_bot_but_not_the_prompt(api):
    session_id = uuid.uuid4()
    for _ in range(5):
        _exchange(session_id, "Where am I?", "You're somewhere safe, with me.")

    body = api.post(f"/api/v1/sessions/{session_id}/context", {"message": "Where am I?"}).json()

    assert body["analysis"]["repeat_count"] == 5
    assert body["analysis"]["chronic_repetition_pattern"] is True
    assert body["max_tokens"] == 80
    assert forbidden_in(body["system_prompt"]) == []
    # One earlier telling of the question is left in the history, not five.
    history = [m["content"] for m in body["messages"][:-1] if m["role"] == "user"]
    assert history == ["Where am I?"]


@pytest.mark.django_db
def test_preferred_name_and_topics_come_from_the_caregiver_context(api):
    session, _ = services.session_resolve(user_id=uuid.uuid4(), display_name="Margaret")
    session.person.caregiver_context = {
        "preferredName": "Peggy",
        "knownTopics": ["baking", "the seaside"],
        "avoidTopics": ["hospital"],
    }
    session.person.save()

    body = api.post(f"/api/v1/sessions/{session.id}/context", {"message": "Hello"}).json()

    assert "talking with Peggy" in body["system_prompt"]
    assert '[enjoys] "baking"\n[enjoys] "the seaside"' in body["system_prompt"]
    assert "away from the topics marked [avoid]" in body["system_prompt"]
    assert '[avoid] "hospital"' in body["system_prompt"]


@pytest.mark.django_db
def test_escalation_is_reported_in_the_analysis(api):
    session_id = uuid.uuid4()
    _exchange(session_id, "Hello")

    body = api.post(
        f"/api/v1/sessions/{session_id}/context", {"message": "I've fallen over"}
    ).json()

    assert (body["analysis"]["escalate"], body["analysis"]["escalation_reason"]) == (True, "fall")
    assert "need a person's help" in body["system_prompt"]


@pytest.mark.django_db
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    script=st.lists(st.sampled_from(SAID), min_size=1, max_size=12),
    message=st.sampled_from(SAID),
)
def test_endpoint_text_is_safe_for_any_stored_conversation(api, script, message):
    session_id = uuid.uuid4()
    for index, line in enumerate(script):
        _exchange(
            session_id,
            line,
            CLARA_LINES[index % len(CLARA_LINES)],
            emotion=EmotionReading("anxious", 0.7, 0.1 * (index % 10), "stable"),
        )

    body = api.post(f"/api/v1/sessions/{session_id}/context", {"message": message}).json()

    text = body["system_prompt"] + "\n" + "\n".join(m["content"] for m in body["messages"])
    assert forbidden_in(text) == []
    assert body["messages"][-1]["content"] == message
    # Repeats by meaning are counted (paraphrases are in the script), and still, from three
    # repeats on, no question is in the history twice, whatever its wording.
    if body["analysis"]["repeat_count"] >= context.DEDUPLICATE_AT:
        history = [m["content"] for m in body["messages"][:-1] if m["role"] == "user"]
        assert repeats_in(history, of=stored_meaning_of) == []


@pytest.mark.parametrize(
    "message",
    [
        "Sarah used to help me bake scones.",
        "Can you help me find my glasses?",
        "I'm going out to the garden later with Ann",
    ],
)
def test_help_in_ordinary_talk_is_not_an_emergency(message):
    assert escalation.detect(message).reason != "asks_for_help"


@pytest.mark.django_db
def test_a_first_calm_question_gets_no_story_and_a_repeat_gets_one(api):
    session_id = uuid.uuid4()
    calm = {"emotion": "neutral", "confidence": 0.8, "distress_score": 0.2, "trajectory": "stable"}
    _exchange(session_id, "Hello", emotion=EmotionReading("neutral", 0.8, 0.2, "stable"))

    first = api.post(
        f"/api/v1/sessions/{session_id}/context", {"message": "Where am I?", "emotion": calm}
    ).json()
    _exchange(session_id, "Where am I?", emotion=EmotionReading("neutral", 0.8, 0.2, "stable"))
    repeat = api.post(
        f"/api/v1/sessions/{session_id}/context", {"message": "Where am I?", "emotion": calm}
    ).json()

    assert first["narrative"] is None
    assert repeat["narrative"] is not None
    assert repeat["narrative"]["text"] in repeat["system_prompt"]


@pytest.mark.django_db
def test_an_avoided_topic_never_reaches_the_chosen_story(api):
    session, _ = services.session_resolve(user_id=uuid.uuid4())
    session.person.caregiver_context = {"avoidTopics": ["garden", "sea", "home"]}
    session.person.save()
    for _ in range(6):
        body = api.post(
            f"/api/v1/sessions/{session.id}/context", {"message": "I'm scared, where am I?"}
        ).json()
        story = body["narrative"]
        assert story is not None
        assert not re.search(r"\b(garden|sea|home)s?\b", story["text"], re.IGNORECASE)
        _exchange(
            session.id,
            "I'm scared, where am I?",
            story["text"],
            narrative=services.NarrativeRef(story["id"], "seed", story["category"]),
        )


@pytest.mark.django_db
def test_a_replayed_turn_counts_other_sessions_as_of_its_own_time(api):
    user_id = uuid.uuid4()
    long_ago = datetime(2026, 10, 1, 18, 0, tzinfo=UTC)
    earlier, _ = services.session_resolve(user_id=user_id, at=long_ago)
    _exchange(earlier.id, "Where am I?", at=long_ago)
    later, _ = services.session_resolve(user_id=user_id, at=long_ago + timedelta(days=2))
    path = f"/api/v1/sessions/{later.id}/context"

    as_of_then = api.post(
        path, {"message": "Where am I?", "occurred_at": "2026-10-03T18:00:00+00:00"}
    ).json()
    as_of_now = api.post(path, {"message": "Where am I?"}).json()

    assert as_of_then["analysis"]["cross_session_repeat_count"] == 1
    assert as_of_now["analysis"]["cross_session_repeat_count"] == 0


@pytest.mark.django_db
def test_anchors_reach_back_forty_messages_and_no_further(api):
    # The turn looks for anchors in the session's latest 40 messages: the 16 the memory query
    # reads anyway, and the older ones read for the purpose.
    session_id = uuid.uuid4()
    _exchange(session_id, "My sister Agnes used to sing.")  # messages 1-2: beyond the 40
    _exchange(session_id, "Today Margaret brought flowers.")  # messages 3-4: within them
    for i in range(17):  # messages 5-38, all without a name in them
        _exchange(session_id, f"It is quiet now, number {i}.", "Yes, nice and quiet.")
    _exchange(session_id, "Shall we have a cup of tea?", "That would be lovely.")  # 39-40
    _exchange(session_id, "It is quiet now.", "Yes, nice and quiet.")  # 41-42

    prompt = api.post(
        f"/api/v1/sessions/{session_id}/context", {"message": "Is it still morning?"}
    ).json()["system_prompt"]

    assert "Margaret" in prompt
    assert "Agnes" not in prompt
