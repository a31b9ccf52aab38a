"""Same-frame statements (issue 31, item 8): two statements that share their frame and differ in
its slot (another object, person, place, time, number or quality) are not repeats; a statement
said again with more words ("really", "so much", "you know") still is."""

import pytest

from memory.conversations import meaning
from memory.conversations.meaning import (
    MessageMeaning,
    analyse,
    compare,
    compare_many,
    count_repeats,
    from_stored,
    is_repeat,
    same_meaning,
    to_stored,
)
from memory.core.embeddings import MiniLMEmbedder

OTHER_SLOT = [
    ("My grandson lives in Cardiff.", "My grandson lives in Dublin."),  # place
    ("I used to work at the biscuit factory.", "I used to work at the bus depot."),  # place
    ("My sister made this quilt.", "My auntie made this quilt."),  # person
    ("I've left my umbrella in the car.", "I've left my scarf in the car."),  # object
    ("The physio comes on Thursdays.", "The physio comes on Mondays."),  # time
    ("We had our honeymoon in 1961.", "We had our honeymoon in 1965."),  # number
    ("This porridge is too lumpy.", "This porridge is too runny."),  # quality
]

SAID_AGAIN = [
    ("My grandson lives in Cardiff.", "My grandson, he lives in Cardiff, you know."),
    ("This porridge is too lumpy.", "Oh this porridge, it's far too lumpy, really lumpy."),
    ("I've left my umbrella in the car.", "I've left my umbrella in the car, I really have."),
    ("The physio comes on Thursdays.", "The physio always comes on a Thursday."),
]


@pytest.fixture(scope="module")
def minilm():
    model = MiniLMEmbedder(adapter=meaning.repeat_adapter())
    model.load()
    return model


@pytest.fixture
def meaning_of(minilm):
    cache: dict[str, MessageMeaning] = {}

    def of(text: str) -> MessageMeaning:
        if text not in cache:
            cache[text] = analyse(text, embedder=minilm)
        return cache[text]

    return of


@pytest.mark.parametrize(("earlier", "current"), OTHER_SLOT)
def test_the_same_frame_with_something_else_in_its_slot_is_not_a_repeat(
    meaning_of, earlier, current
):
    assert not same_meaning(meaning_of(earlier), meaning_of(current))
    assert not is_repeat(meaning_of(earlier), meaning_of(current), fingerprint_match=False)


@pytest.mark.parametrize(("earlier", "current"), SAID_AGAIN)
def test_the_same_statement_said_again_with_more_words_is_still_a_repeat(
    meaning_of, earlier, current
):
    assert is_repeat(meaning_of(earlier), meaning_of(current), fingerprint_match=False)


def test_a_synonym_in_the_slot_is_still_a_repeat(meaning_of):
    # The slot's words alike enough (SLOT_LIKENESS): "scared" / "frightened" say one thing.
    assert is_repeat(
        meaning_of("I'm scared of the dark."),
        meaning_of("I'm frightened of the dark."),
        fingerprint_match=False,
    )


def test_counting_leaves_out_the_other_slot_and_keeps_the_repeat(meaning_of):
    current = meaning_of("My grandson lives in Dublin.")
    earlier = [
        (meaning_of("My grandson lives in Cardiff."), False),
        (meaning_of("My grandson, he lives in Dublin, you know."), False),
    ]
    assert count_repeats(current, earlier) == 1


def test_all_at_once_gives_one_by_one_s_slot_verdicts(meaning_of):
    texts = [e for e, _ in OTHER_SLOT] + [c for _, c in SAID_AGAIN]
    for current in {c for _, c in OTHER_SLOT}:
        many = compare_many([meaning_of(t) for t in texts], meaning_of(current))
        one = [compare(meaning_of(t), meaning_of(current)) for t in texts]
        assert [c.other_slot for c in many] == [c.other_slot for c in one]
        assert [c.same_meaning() for c in many] == [c.same_meaning() for c in one]


def test_the_word_sequence_is_stored_and_read_back(meaning_of):
    earlier = meaning_of("My grandson lives in Cardiff.")
    current = meaning_of("My grandson lives in Dublin.")
    assert earlier.sequence and from_stored(to_stored(earlier)).sequence == earlier.sequence
    assert not same_meaning(from_stored(to_stored(earlier)), current)


def test_a_row_stored_before_the_sequence_is_read_without_a_frame(meaning_of):
    earlier = meaning_of("We had our honeymoon in 1961.")
    back = from_stored(meaning.to_stored_v4(earlier))
    assert back.sequence == ()
    assert [w.token for w in back.words] == [w.token for w in earlier.words]
    # No frame known: the slot is not compared (what the memory did before version 5).
    assert not compare(back, meaning_of("We had our honeymoon in 1965.")).other_slot


def test_questions_keep_their_own_rules(meaning_of):
    # The slot check is for statements; a question asked again in the same frame is judged as
    # before ("Is the window open?" / "Is the shop open?" by the detector's own features).
    comparison = compare(
        meaning_of("Is my grandson in Cardiff?"), meaning_of("Is my grandson in Dublin?")
    )
    assert not comparison.other_slot


def test_the_sequence_holds_no_readable_words(meaning_of):
    data = to_stored(meaning_of("My grandson lives in Cardiff."))
    assert b"Cardiff" not in data and b"grandson" not in data


def test_a_fingerprint_match_in_one_frame_with_another_slot_is_not_a_repeat(meaning_of):
    from memory.conversations import repetition

    earlier, current = (
        "I left my blue coat at the church hall.",
        "I left my blue coat at the village hall.",
    )
    words = repetition.jaccard(repetition.fingerprint(earlier), repetition.fingerprint(current))
    assert words > repetition.SIMILARITY_THRESHOLD  # the fingerprint rule alone says "repeat"
    assert not is_repeat(meaning_of(earlier), meaning_of(current), fingerprint_match=True)
    assert count_repeats(meaning_of(current), [(meaning_of(earlier), True)]) == 0
    # Said again in one frame, the fingerprint match stands.
    again = "I left my blue coat at the church hall, I really did."
    assert is_repeat(meaning_of(earlier), meaning_of(again), fingerprint_match=True)
