"""Narrative library and per-turn narrative choice (seed §4.4, §6)."""

import importlib
import json
import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.apps import apps as global_apps
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.companion.narratives import (
    CHRONIC_REPEAT_AT,
    CROSS_SESSION_LOOP_AT,
    Heard,
    _person_stories,
    mentions_topic,
    narrative_choose,
    rank_narratives,
)
from memory.conversations import services
from memory.conversations.emotion import EmotionReading
from memory.models import Emotion, Narrative, Person, QuestionType


def person_heard(*, person_id, now):
    """What this person heard lately, as the turn's story read gives it."""
    return _person_stories(person_id, now)[2]


MIGRATION_NAME = "0003_load_starter_narratives"
starter_migration = importlib.import_module(f"memory.migrations.{MIGRATION_NAME}")
LIBRARY_FILE = Path(starter_migration.STARTER_LIBRARY)
STARTER = json.loads(LIBRARY_FILE.read_text(encoding="utf-8"))
STARTER_IDS = [item["id"] for item in STARTER]
NOW = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.get_fixed_timezone(0))


@dataclass(frozen=True)
class Story:
    """A narrative as plain data, for ranking without a database."""

    id: str
    title: str = "A quiet story"
    category: str = Narrative.Category.CALMING_STORY
    target_emotions: tuple[str, ...] = ()
    question_types: tuple[str, ...] = ()
    theme_tags: tuple[str, ...] = ()
    length: str = Narrative.Length.MEDIUM
    text: str = "Everything is quiet and soft."
    person_id: uuid.UUID | None = None


STARTER_STORIES = [
    Story(**{key: tuple(v) if isinstance(v, list) else v for key, v in item.items()})
    for item in STARTER
]


def rank(candidates, **overrides):
    """rank_narratives with calm, neutral inputs unless a test says otherwise."""
    inputs = {
        "person_id": None,
        "question_type": QuestionType.GENERAL,
        "emotion": Emotion.NEUTRAL,
        "distress": 0.2,
        "repeat_count": 0,
        "avoid_topics": (),
        "used_in_session": (),
        "heard": None,
        "now": NOW,
    }
    inputs.update(overrides)
    return [item.narrative.id for item in rank_narratives(candidates, **inputs)]


# --- The starter library ------------------------------------------------------------------------


@pytest.fixture
def library(db):
    """The starter library as the migration loads it.

    Tests that run in real transactions elsewhere in the suite flush every table, migration data
    included; loading is idempotent, so it is simply run again here.
    """
    starter_migration.load_starter_narratives(global_apps, None)


def historical_apps():
    """The model state the data migration runs against."""
    loader = MigrationLoader(connection)
    return loader.project_state(("memory", MIGRATION_NAME), at_end=True).apps


@pytest.mark.django_db
def test_starter_library_migration_is_applied_right_after_the_narrative_table():
    applied = MigrationRecorder(connection).applied_migrations()
    assert ("memory", MIGRATION_NAME) in applied
    assert ("memory", "0002_narrative_library") in starter_migration.Migration.dependencies


@pytest.mark.django_db
def test_starter_library_migration_loads_at_least_40_narratives_in_all_five_categories():
    Narrative.objects.all().delete()
    starter_migration.load_starter_narratives(historical_apps(), None)

    assert Narrative.objects.filter(person__isnull=True, active=True).count() >= 40
    assert set(Narrative.objects.values_list("category", flat=True)) == set(
        Narrative.Category.values
    )


@pytest.mark.django_db
def test_starter_library_migration_can_run_twice_and_keeps_an_operators_deactivation():
    apps = historical_apps()
    starter_migration.load_starter_narratives(apps, None)
    Narrative.objects.filter(id=STARTER_IDS[0]).update(active=False)

    starter_migration.load_starter_narratives(apps, None)

    assert Narrative.objects.filter(id__in=STARTER_IDS).count() == len(STARTER_IDS)
    assert Narrative.objects.get(id=STARTER_IDS[0]).active is False


@pytest.mark.django_db
def test_starter_library_migration_reverse_deletes_only_the_starter_narratives():
    apps = historical_apps()
    starter_migration.load_starter_narratives(apps, None)
    person = make_person()
    Narrative.objects.create(
        id="own-garden-01",
        title="Their garden",
        category="reminiscence",
        text="Roses.",
        person=person,
    )

    starter_migration.unload_starter_narratives(apps, None)

    assert list(Narrative.objects.values_list("id", flat=True)) == ["own-garden-01"]


def test_starter_library_ids_are_unique():
    assert len(STARTER_IDS) == len(set(STARTER_IDS))


def _sentences(text: str) -> int:
    return len([part for part in re.split(r"[.!?]+(?:\s+|$)", text.strip()) if part])


@pytest.mark.parametrize("item", STARTER, ids=STARTER_IDS)
def test_starter_narrative_has_valid_field_values(item):
    Narrative(**item).full_clean(validate_unique=False)  # id slug, category and length choices
    assert re.fullmatch(r"[a-z]+(?:-[a-z]+)*-\d{2}", item["id"])
    assert item["target_emotions"]
    assert set(item["target_emotions"]) <= set(Emotion.values)
    assert set(item["question_types"]) <= set(QuestionType.values)
    assert item["theme_tags"]
    assert all(re.fullmatch(r"[a-z]+", tag) for tag in item["theme_tags"])


@pytest.mark.parametrize("item", STARTER, ids=STARTER_IDS)
def test_starter_narrative_length_label_matches_its_sentence_count(item):
    sentences = _sentences(item["text"])
    expected = {"short": range(1, 3), "medium": range(3, 6), "long": range(6, 20)}
    assert sentences in expected[item["length"]]
    if item["category"] == Narrative.Category.MEMORY_LOOP:
        assert 1 <= sentences <= 3


# Quizzing, correcting and anything that shows Clara noticed a repeat or time passing (seed §6).
FORBIDDEN = [
    r"remember",
    r"recall",
    r"again",
    r"already",
    r"before",
    r"last time",
    r"you asked",
    r"you said",
    r"you told",
    r"earlier",
    r"tests?",
    r"testing",
    r"quiz",
    r"years? ago",
    r"long ago",
    r"yesterday",
    r"used to",
    r"can you tell me",
    r"do you know",
    r"actually",
    # No personal facts Clara cannot know: nobody's relatives are named or placed.
    r"your (?:husband|wife|son|daughter|mother|mum|father|dad|children|family|grandchildren)",
]
FORBIDDEN_PATTERN = re.compile(r"\b(?:" + "|".join(FORBIDDEN) + r")\b", re.IGNORECASE)


@pytest.mark.parametrize("item", STARTER, ids=STARTER_IDS)
def test_starter_narrative_never_quizzes_corrects_or_reveals_repetition(item):
    assert FORBIDDEN_PATTERN.findall(f"{item['title']}\n{item['text']}") == []


@pytest.mark.parametrize("item", STARTER, ids=STARTER_IDS)
def test_starter_narrative_asks_no_questions(item):
    assert "?" not in item["text"]


# --- Ranking, pure --------------------------------------------------------------------------------


def test_ranking_prefers_an_exact_question_type_then_any_then_another_type():
    stories = [
        Story("a-other", question_types=("time",)),
        Story("b-any"),
        Story("c-location", question_types=("location", "person")),
    ]
    assert rank(stories, question_type="location") == ["c-location", "b-any", "a-other"]


def test_ranking_prefers_a_narrative_meant_for_the_current_emotion():
    stories = [
        Story("a-sad", target_emotions=("sad",)),
        Story("b-lonely", target_emotions=("lonely",)),
    ]
    assert rank(stories, emotion="lonely") == ["b-lonely", "a-sad"]


def test_ranking_under_high_distress_prefers_short_grounding_over_long_reminiscence():
    stories = [
        Story("a-era", category="reminiscence", length="long", target_emotions=("anxious",)),
        Story("b-ground", category="grounding", length="short"),
    ]
    assert rank(stories, emotion="anxious", distress=0.2)[0] == "a-era"
    assert rank(stories, emotion="anxious", distress=0.9)[0] == "b-ground"


def test_ranking_under_chronic_repetition_prefers_a_short_memory_loop_answer():
    stories = [
        Story("a-story", category="calming_story", target_emotions=("confused",)),
        Story("b-loop", category="memory_loop", length="short"),
    ]
    assert rank(stories, emotion="confused", repeat_count=0)[0] == "a-story"
    assert rank(stories, emotion="confused", repeat_count=CHRONIC_REPEAT_AT)[0] == "b-loop"


def test_ranking_for_a_question_asked_across_sessions_prefers_a_memory_loop_answer():
    stories = [
        Story("a-story", category="calming_story", target_emotions=("confused",)),
        Story("b-loop", category="memory_loop", length="short"),
    ]
    asked_lately = CROSS_SESSION_LOOP_AT
    assert rank(stories, emotion="confused", cross_session_repeats=asked_lately - 1)[0] == "a-story"
    assert rank(stories, emotion="confused", cross_session_repeats=asked_lately)[0] == "b-loop"


def test_ranking_at_a_repeat_keeps_to_the_theme_of_an_answer_that_helps():
    stories = [Story("a-sea", theme_tags=("sea",)), Story("b-garden", theme_tags=("gardens",))]
    answer = "We could sit in the garden, it's lovely and quiet."
    assert rank(stories, repeat_count=1)[0] == "a-sea"
    assert rank(stories, repeat_count=1, last_answer=answer)[0] == "b-garden"


def test_ranking_at_a_repeat_moves_away_from_the_theme_of_an_answer_that_does_not_help():
    stories = [Story("a-garden", theme_tags=("garden",)), Story("b-sea", theme_tags=("sea",))]
    answer = "We could sit in the garden, it's lovely and quiet."
    assert rank(stories, repeat_count=1, last_answer=answer)[0] == "a-garden"
    assert rank(stories, repeat_count=1, last_answer=answer, answer_helped=False)[0] == "b-sea"


def test_ranking_ignores_the_last_answer_when_nothing_is_repeated():
    stories = [Story("a-sea", theme_tags=("sea",)), Story("b-garden", theme_tags=("garden",))]
    answer = "We could sit in the garden."
    assert rank(stories, repeat_count=0, last_answer=answer)[0] == "a-sea"


def test_ranking_breaks_ties_by_id_whatever_the_candidate_order():
    stories = [Story("c"), Story("a"), Story("b")]
    assert rank(stories) == ["a", "b", "c"]
    assert rank(list(reversed(stories))) == ["a", "b", "c"]


def test_ranking_drops_narratives_used_in_this_session():
    assert rank([Story("a"), Story("b")], used_in_session={"a"}) == ["b"]


def test_ranking_drops_another_persons_narrative_even_if_passed_in():
    me, other = uuid.uuid4(), uuid.uuid4()
    stories = [Story("a-mine", person_id=me), Story("b-theirs", person_id=other), Story("c")]
    assert rank(stories, person_id=me) == ["a-mine", "c"]
    assert rank(stories, person_id=None) == ["c"]


def test_ranking_prefers_the_persons_own_narrative_when_it_fits():
    me = uuid.uuid4()
    stories = [Story("a-library"), Story("b-mine", person_id=me)]
    assert rank(stories, person_id=me)[0] == "b-mine"


def test_ranking_does_not_prefer_the_persons_own_narrative_for_another_question_type():
    me = uuid.uuid4()
    stories = [Story("a-library"), Story("b-mine", person_id=me, question_types=("time",))]
    assert rank(stories, person_id=me, question_type="location")[0] == "a-library"


def test_ranking_prefers_a_narrative_not_heard_recently():
    heard = {"a": Heard(times=1, last_heard=NOW - timedelta(days=1))}
    assert rank([Story("a"), Story("b")], heard=heard) == ["b", "a"]


def test_ranking_penalises_a_recent_hearing_more_than_an_older_one():
    heard = {
        "a": Heard(times=1, last_heard=NOW - timedelta(hours=3)),
        "b": Heard(times=1, last_heard=NOW - timedelta(days=12)),
    }
    assert rank([Story("a"), Story("b")], heard=heard) == ["b", "a"]


def test_ranking_penalises_frequent_hearings_more_than_a_single_one():
    heard = {
        "a": Heard(times=3, last_heard=NOW - timedelta(days=5)),
        "b": Heard(times=1, last_heard=NOW - timedelta(days=5)),
    }
    assert rank([Story("a"), Story("b")], heard=heard) == ["b", "a"]


def test_ranking_ignores_hearings_older_than_14_days():
    heard = {"a": Heard(times=4, last_heard=NOW - timedelta(days=15))}
    assert rank([Story("a"), Story("b")], heard=heard) == ["a", "b"]


def test_ranking_prefers_a_narrative_after_which_this_persons_distress_fell():
    heard = {
        "a": Heard(times=1, last_heard=NOW - timedelta(days=13), distress_drop=0.0),
        "b": Heard(times=1, last_heard=NOW - timedelta(days=13), distress_drop=0.6),
    }
    assert rank([Story("a"), Story("b")], heard=heard) == ["b", "a"]


def test_ranking_avoids_a_narrative_after_which_this_persons_distress_rose():
    heard = {
        "a": Heard(times=1, last_heard=NOW - timedelta(days=13), distress_drop=-0.6),
        "b": Heard(times=1, last_heard=NOW - timedelta(days=13)),
    }
    assert rank([Story("a"), Story("b")], heard=heard) == ["b", "a"]


def test_ranking_ignores_avoided_topics_that_are_not_text():
    stories = [Story("a", text="A dog naps."), Story("b")]
    assert rank(stories, avoid_topics=[None, 3, "dog"]) == ["b"]


def test_ranking_returns_nothing_when_every_candidate_is_ruled_out():
    assert rank([Story("a")], used_in_session={"a"}) == []


# --- Avoided topics ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topic", "story", "expected"),
    [
        ("dog", Story("x", text="A dog sleeps."), True),
        ("dog", Story("x", text="Two dogs sleep."), True),
        ("dogs", Story("x", text="A dog sleeps."), True),
        ("dog", Story("x", text="The dog's bowl."), True),
        ("Dog", Story("x", text="A DOG sleeps."), True),
        ("dog", Story("x", theme_tags=("dog",)), True),
        ("dog", Story("x", title="My old dog"), True),
        ("butterfly", Story("x", text="Butterflies float."), True),
        ("ice cream", Story("x", text="An ice-cream van."), True),
        ("  sea  ", Story("x", text="The sea sparkles."), True),
        ("cat", Story("x", text="We catch the bus."), False),
        ("sea", Story("x", text="A quiet garden."), False),
        ("ice cream", Story("x", theme_tags=("ice", "cream")), False),
        ("", Story("x", text="Anything at all."), False),
        ("!!", Story("x", text="Anything at all!!"), False),
    ],
)
def test_mentions_topic_matches_whole_words_and_simple_plurals(topic, story, expected):
    assert mentions_topic(story, topic) is expected


LIBRARY_WORDS = sorted(
    {word for item in STARTER for word in re.findall(r"[a-z]+", item["text"].lower())}
    | {tag for item in STARTER for tag in item["theme_tags"]}
)
LIBRARY_PHRASES = sorted(
    {
        " ".join(pair)
        for item in STARTER
        for words in [re.findall(r"[a-z]+", item["text"].lower())]
        for pair in zip(words, words[1:], strict=False)
    }
)


def _cased(word_strategy):
    return st.tuples(word_strategy, st.sampled_from(["", "s", "es"]), st.booleans()).map(
        lambda parts: (parts[0] + parts[1]).upper() if parts[2] else parts[0] + parts[1]
    )


topics = st.one_of(
    _cased(st.sampled_from(LIBRARY_WORDS)),
    st.sampled_from(LIBRARY_PHRASES),
    _cased(st.from_regex(r"[a-z]{1,9}", fullmatch=True)),
)


def _forms(word: str) -> set[str]:
    """What a topic word must never appear as: itself, with -s or -es, or its plain singular."""
    forms = {word, word + "s", word + "es"}
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        forms.add(word[:-1])
    if len(word) > 4 and word.endswith("es"):
        forms.add(word[:-2])
    return forms


def appears(topic: str, story) -> bool:
    """An independent check, word by word, of whether `topic` shows in the story."""
    wanted = re.findall(r"[a-z]+", topic.lower())
    if not wanted:
        return False
    for field in (*story.theme_tags, story.title, story.text):
        words = re.findall(r"[a-z]+", field.lower())
        for start in range(len(words) - len(wanted) + 1):
            window = words[start : start + len(wanted)]
            if all(word in _forms(want) for word, want in zip(window, wanted, strict=True)):
                return True
    return False


@settings(max_examples=400, deadline=None)
@given(avoid=st.lists(topics, min_size=1, max_size=3), emotion=st.sampled_from(Emotion.values))
def test_property_no_ranked_narrative_mentions_an_avoided_topic(avoid, emotion):
    ranked = rank_narratives(
        STARTER_STORIES,
        person_id=None,
        question_type="general",
        emotion=emotion,
        distress=0.5,
        repeat_count=0,
        avoid_topics=avoid,
        now=NOW,
    )
    for item in ranked:
        assert not any(appears(topic, item.narrative) for topic in avoid), (
            item.narrative.id,
            avoid,
        )


@pytest.mark.django_db
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    avoid=st.lists(topics, min_size=1, max_size=3),
    question_type=st.sampled_from(QuestionType.values),
    emotion=st.sampled_from(Emotion.values),
)
def test_property_chosen_narrative_never_mentions_an_avoided_topic(
    library, avoid, question_type, emotion
):
    chosen = narrative_choose(
        person_id=None,
        session_id=uuid.uuid4(),
        question_type=question_type,
        emotion=emotion,
        distress=0.5,
        repeat_count=0,
        avoid_topics=avoid,
    )
    assert chosen is None or not any(appears(topic, chosen) for topic in avoid), (chosen, avoid)


@pytest.mark.django_db
def test_choose_skips_every_narrative_about_an_avoided_topic(library):
    about_tea = {story.id for story in STARTER_STORIES if appears("tea", story)}
    assert about_tea  # the library does talk about tea, so this test can fail
    session_id = make_session(make_person())
    chosen = exhaust(session_id=session_id, person_id=None, avoid_topics=["Tea"])
    assert chosen and not (set(chosen) & about_tea)


# --- Choosing, with the database -------------------------------------------------------------------


def make_person() -> Person:
    return Person.objects.create(created_at=NOW, last_active_at=NOW)


def make_session(person: Person | None, *, at: datetime = NOW) -> uuid.UUID:
    session, _ = services.session_resolve(
        session_id=uuid.uuid4(), user_id=person.id if person else None, at=at
    )
    return session.id


def reading(distress: float, emotion: str = Emotion.ANXIOUS) -> EmotionReading:
    return EmotionReading(
        emotion=emotion, confidence=0.8, distress_score=distress, trajectory="stable"
    )


def tell(session_id: uuid.UUID, narrative: Narrative | None, *, at=NOW, distress=0.6) -> None:
    """Store an exchange whose reply carried `narrative` (None: an exchange without one)."""
    ref = (
        services.NarrativeRef(id=narrative.id, mode="seed", category=narrative.category)
        if narrative
        else None
    )
    services.exchange_record(
        session_id=session_id,
        user_message="Where am I?",
        assistant_message=narrative.text if narrative else "I'm here with you.",
        narrative=ref,
        emotion=reading(distress),
        at=at,
    )


TURN = {
    "question_type": QuestionType.LOCATION,
    "emotion": Emotion.ANXIOUS,
    "distress": 0.6,
    "repeat_count": 0,
    "avoid_topics": [],
}


def choose(*, session_id, person_id, now=NOW, **overrides):
    return narrative_choose(
        person_id=person_id, session_id=session_id, now=now, **{**TURN, **overrides}
    )


def exhaust(*, session_id, person_id, **overrides) -> list[str]:
    """Choose and tell, turn after turn in one session, until nothing is left; the ids told."""
    told = []
    for _ in range(len(STARTER) + 10):
        narrative = choose(session_id=session_id, person_id=person_id, **overrides)
        if narrative is None:
            return told
        tell(session_id, narrative)
        told.append(narrative.id)
    pytest.fail(f"the pool never ran out: {told}")


@pytest.mark.django_db
def test_choose_never_repeats_a_narrative_in_a_session_until_the_pool_runs_out(library):
    person = make_person()
    own = Narrative.objects.create(
        id="own-allotment-01",
        title="The allotment",
        category="reminiscence",
        text="Beans.",
        person=person,
    )
    session_id = make_session(person)

    told = exhaust(session_id=session_id, person_id=person.id)

    assert len(told) == len(set(told))
    assert set(told) == set(STARTER_IDS) | {own.id}


@pytest.mark.django_db
def test_choose_never_picks_another_persons_narrative(library):
    me, other = make_person(), make_person()
    Narrative.objects.create(
        id="theirs-safe-room-01",
        title="Their safe room",
        category="memory_loop",
        target_emotions=["anxious"],
        question_types=["location"],
        length="short",
        text="You're safe in the blue room.",
        person=other,
    )
    Narrative.objects.create(
        id="mine-garden-01", title="My garden", category="reminiscence", text="Roses.", person=me
    )

    told = exhaust(session_id=make_session(me), person_id=me.id)

    assert "mine-garden-01" in told
    assert "theirs-safe-room-01" not in told


@pytest.mark.django_db
def test_choose_in_an_anonymous_session_never_picks_a_persons_narrative(library):
    someone = make_person()
    Narrative.objects.create(
        id="theirs-01", title="Theirs", category="memory_loop", text="Safe.", person=someone
    )
    told = exhaust(session_id=make_session(None), person_id=None)
    assert "theirs-01" not in told
    assert set(told) == set(STARTER_IDS)


@pytest.mark.django_db
def test_choose_never_picks_an_inactive_narrative(library):
    session_id = make_session(None)
    first = choose(session_id=session_id, person_id=None)
    Narrative.objects.filter(id=first.id).update(active=False)
    assert choose(session_id=session_id, person_id=None).id != first.id


@pytest.mark.django_db
def test_choose_returns_none_when_the_library_is_empty():
    Narrative.objects.all().delete()
    assert choose(session_id=make_session(None), person_id=None) is None


@pytest.mark.django_db
def test_choose_under_chronic_repetition_prefers_a_short_memory_loop_answer(library):
    session_id = make_session(None)
    calm_turn = {"question_type": "general", "emotion": "neutral", "distress": 0.2}

    first_time = choose(session_id=session_id, person_id=None, repeat_count=0, **calm_turn)
    chronic = choose(session_id=session_id, person_id=None, repeat_count=4, **calm_turn)

    assert first_time.category != Narrative.Category.MEMORY_LOOP
    assert (chronic.category, chronic.length) == (Narrative.Category.MEMORY_LOOP, "short")


@pytest.mark.django_db
@pytest.mark.parametrize("emotion", [Emotion.NEUTRAL, Emotion.ANXIOUS, Emotion.CONFUSED])
def test_choose_for_a_location_question_picks_a_narrative_about_where_the_person_is(
    library, emotion
):
    chosen = choose(
        session_id=make_session(None), person_id=None, question_type="location", emotion=emotion
    )
    assert QuestionType.LOCATION in chosen.question_types


@pytest.mark.django_db
def test_choose_prefers_a_narrative_the_person_has_not_heard_in_recent_sessions(library):
    person, stranger = make_person(), make_person()
    usual = choose(session_id=make_session(stranger), person_id=stranger.id)
    yesterday = make_session(person, at=NOW - timedelta(days=1))
    tell(yesterday, usual, at=NOW - timedelta(days=1))

    today = choose(session_id=make_session(person), person_id=person.id)

    assert today.id != usual.id


@pytest.mark.django_db
def test_choose_tells_a_narrative_heard_over_14_days_ago_as_if_new(library):
    person, stranger = make_person(), make_person()
    usual = choose(session_id=make_session(stranger), person_id=stranger.id)
    long_ago = make_session(person, at=NOW - timedelta(days=20))
    tell(long_ago, usual, at=NOW - timedelta(days=20))

    assert choose(session_id=make_session(person), person_id=person.id).id == usual.id


@pytest.mark.django_db
def test_choose_gives_the_same_narrative_for_the_same_inputs(library):
    person = make_person()
    session_id = make_session(person)
    choices = {choose(session_id=session_id, person_id=person.id).id for _ in range(5)}
    assert len(choices) == 1


@pytest.mark.django_db
def test_choose_makes_at_most_four_queries(library, django_assert_max_num_queries):
    person = make_person()
    session_id = make_session(person)
    tell(session_id, Narrative.objects.get(id=STARTER_IDS[0]))
    choose(session_id=session_id, person_id=person.id)  # the shared library is now in memory
    # Library fingerprint, the person's own stories, this session's stories, their history.
    with django_assert_max_num_queries(4):
        choose(session_id=session_id, person_id=person.id)


@pytest.mark.django_db
def test_an_edited_library_story_is_seen_on_the_next_turn(library):
    person = make_person()
    session_id = make_session(person)
    choose(session_id=session_id, person_id=person.id)
    Narrative.objects.exclude(id=STARTER_IDS[0]).filter(person__isnull=True).update(active=False)
    only = Narrative.objects.get(id=STARTER_IDS[0])
    only.text = only.text + " The kettle sings softly."
    only.save()

    chosen = choose(session_id=session_id, person_id=person.id)

    assert chosen.id == STARTER_IDS[0]
    assert chosen.text.endswith("The kettle sings softly.")


@pytest.mark.django_db
def test_heard_counts_the_persons_hearings_and_keeps_the_latest_time(library):
    person = make_person()
    narrative = Narrative.objects.get(id=STARTER_IDS[0])
    for days in (3, 2):
        tell(make_session(person), narrative, at=NOW - timedelta(days=days))

    heard = person_heard(person_id=person.id, now=NOW)

    assert (heard[narrative.id].times, heard[narrative.id].last_heard) == (
        2,
        NOW - timedelta(days=2),
    )


@pytest.mark.django_db
def test_heard_leaves_out_other_people_and_hearings_over_14_days_ago(library):
    person, other = make_person(), make_person()
    narrative = Narrative.objects.get(id=STARTER_IDS[0])
    tell(make_session(person), narrative, at=NOW - timedelta(days=15))
    tell(make_session(other), narrative, at=NOW - timedelta(days=1))

    assert person_heard(person_id=person.id, now=NOW) == {}


@pytest.mark.django_db
def test_heard_measures_the_fall_in_distress_from_the_persons_message_to_their_next(library):
    person = make_person()
    session_id = make_session(person)
    narrative = Narrative.objects.get(id=STARTER_IDS[0])
    tell(session_id, narrative, at=NOW - timedelta(minutes=2), distress=0.8)
    tell(session_id, None, at=NOW - timedelta(minutes=1), distress=0.3)

    heard = person_heard(person_id=person.id, now=NOW)

    assert heard[narrative.id].distress_drop == pytest.approx(0.5)


@pytest.mark.django_db
def test_heard_has_no_distress_fall_when_the_person_said_nothing_more(library):
    person = make_person()
    narrative = Narrative.objects.get(id=STARTER_IDS[0])
    tell(make_session(person), narrative, at=NOW - timedelta(minutes=2), distress=0.8)

    heard = person_heard(person_id=person.id, now=NOW)

    assert heard[narrative.id].distress_drop is None


@pytest.mark.django_db
def test_choose_prefers_what_calmed_this_person_over_an_equally_fitting_narrative(library):
    person, stranger = make_person(), make_person()
    turn = {"question_type": "time", "emotion": "confused", "distress": 0.3}
    first, second = (
        Narrative.objects.get(id="what-day-01"),
        Narrative.objects.get(id="what-time-01"),
    )
    assert choose(session_id=make_session(stranger), person_id=stranger.id, **turn) == first
    # Both heard once, equally long ago; only after `second` did the person's distress fall.
    for narrative, after in ((first, 0.7), (second, 0.2)):
        earlier_session = make_session(person, at=NOW - timedelta(days=10))
        tell(earlier_session, narrative, at=NOW - timedelta(days=10), distress=0.7)
        tell(
            earlier_session,
            None,
            at=NOW - timedelta(days=10) + timedelta(minutes=1),
            distress=after,
        )

    assert choose(session_id=make_session(person), person_id=person.id, **turn) == second


@pytest.mark.django_db
def test_choose_returns_the_stored_narrative_with_its_fields(library):
    chosen = choose(session_id=make_session(None), person_id=None)
    stored = Narrative.objects.get(id=chosen.id)
    assert (chosen.title, chosen.text, chosen.theme_tags, chosen.person_id) == (
        stored.title,
        stored.text,
        stored.theme_tags,
        stored.person_id,
    )


# --- Admin ----------------------------------------------------------------------------------------


def _admin_url(view, *args):
    return reverse(f"admin:memory_narrative_{view}", args=args)


@pytest.mark.django_db
def test_admin_lists_filters_and_searches_narratives(admin_client, library):
    person = make_person()
    Narrative.objects.create(
        id="own-allotment-01",
        title="The allotment",
        category="reminiscence",
        text="Beans.",
        person=person,
    )
    for params in (
        {},
        {"category": "memory_loop"},
        {"length": "short", "active__exact": "1"},
        {"person__id__exact": str(person.id)},
        {"q": "seaside"},
    ):
        assert admin_client.get(_admin_url("changelist"), params).status_code == 200
    page = admin_client.get(_admin_url("changelist"), {"q": "allotment"}).content.decode()
    assert "own-allotment-01" in page and "garden-morning-01" not in page


@pytest.mark.django_db
def test_admin_edits_a_narrative(admin_client, library):
    narrative = Narrative.objects.get(id="garden-morning-01")
    form = {
        "title": "A morning in the garden",
        "category": narrative.category,
        "length": narrative.length,
        "text": "The garden is quiet and green.",
        "target_emotions": json.dumps(["calm"]),
        "question_types": json.dumps([]),
        "theme_tags": json.dumps(["Garden", " roses "]),
        "person": "",
        "active": "on",
    }
    response = admin_client.post(_admin_url("change", narrative.id), form)
    assert response.status_code == 302
    narrative.refresh_from_db()
    assert (narrative.text, narrative.theme_tags) == (
        "The garden is quiet and green.",
        ["garden", "roses"],
    )


@pytest.mark.django_db
def test_admin_refuses_an_unknown_emotion(admin_client, library):
    narrative = Narrative.objects.get(id="garden-morning-01")
    form = {
        "title": narrative.title,
        "category": narrative.category,
        "length": narrative.length,
        "text": narrative.text,
        "target_emotions": json.dumps(["grumpy"]),
        "question_types": json.dumps([]),
        "theme_tags": json.dumps(["garden"]),
        "person": "",
        "active": "on",
    }
    response = admin_client.post(_admin_url("change", narrative.id), form)
    assert response.status_code == 200
    assert "Unknown emotions: grumpy" in response.content.decode()
    narrative.refresh_from_db()
    assert narrative.target_emotions != ["grumpy"]
