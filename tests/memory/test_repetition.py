"""Repeated-question detection (seed §4): fingerprints, question types, Jaccard similarity."""

import pytest

from memory.conversations.repetition import (
    count_repeats,
    fingerprint,
    is_repeat_of,
    jaccard,
    matcher,
    question_type,
)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Where am I?", ""),
        ("What is this place?", "place"),
        ("I don't know where I am", ""),
        ("I don\u2019t know where I am", ""),
        ("Hello", ""),
        ("Where is Tom?", "tom"),
        ("WHERE is TOM???", "tom"),
        ("I want my blue cardigan", "blue cardigan want"),
        ("tea, tea and more tea", "more tea"),
        ("  Where   is\tmy   husband?  ", "husband"),
    ],
)
def test_fingerprint_keeps_sorted_content_words_only(message, expected):
    assert fingerprint(message) == expected


def test_fingerprint_ignores_word_order_and_punctuation():
    assert fingerprint("Blue cardigan, where?") == fingerprint("where... cardigan BLUE")


@pytest.mark.parametrize(
    ("contracted", "spelled_out"),
    [("Where's Tom?", "Where is Tom?"), ("Who's that man?", "Who is that man?")],
)
def test_fingerprint_treats_a_contraction_like_its_spelled_out_words(contracted, spelled_out):
    assert fingerprint(contracted) == fingerprint(spelled_out)


QUESTION_TYPES = {
    "location": [
        "Where am I?",
        "WHERE AM I?",
        "What is this place?",
        "I don't know where I am",
        "Where are we?",
        "I'm lost",
        "I don't recognise this room",
        "Where is this?",
        "Tom, where am I?",
    ],
    "identity": [
        "Who are you?",
        "Who am I?",
        "What is my name?",
        "What's my name?",
        "Are you my daughter?",
        "Who is this?",
    ],
    "person": [
        "Where is Tom?",
        "Where's Tom?",
        "Where is my husband?",
        "Where\u2019s my husband?",
        "When is my daughter coming?",
        "When is John coming?",
        "Have you seen my dog?",
        "Have you seen Mary?",
        "I miss my wife",
        "I miss Ann",
    ],
    "time": [
        "What day is it?",
        "What time is it?",
        "What year is it?",
        "What month is it?",
        "When is lunch?",
        "How long have I been here?",
        "Is it morning?",
    ],
    "activity": [
        "What should I do?",
        "What do I do now?",
        "What's happening?",
        "What happens now?",
        "What am I supposed to do?",
    ],
    "general": ["I like tea", "Hello", "The garden looks lovely", "Tell me about the war"],
}


@pytest.mark.parametrize(
    ("message", "expected"),
    [(message, qtype) for qtype, messages in QUESTION_TYPES.items() for message in messages],
)
def test_question_type_recognises_the_phrasing(message, expected):
    assert question_type(message) == expected


def test_question_type_reads_a_curly_apostrophe_before_a_name():
    assert question_type("Where\u2019s Tom?") == "person"


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        ("place", "place", 1.0),
        ("blue cardigan", "red hat", 0.0),
        ("a b c", "a b c d e", 0.6),
        ("a b", "a b c", 2 / 3),
        ("", "place", 0.0),
        ("", "", 0.0),
    ],
)
def test_jaccard_is_shared_words_over_all_words(left, right, expected):
    assert jaccard(left, right) == pytest.approx(expected)


def _repeat(fp: str, earlier_fp: str, qtype="general", earlier_type="general") -> bool:
    return is_repeat_of(
        fingerprint_=fp,
        question_type_=qtype,
        earlier_fingerprint=earlier_fp,
        earlier_type=earlier_type,
    )


def test_similarity_of_exactly_0_6_is_not_a_repeat():
    assert _repeat("a b c", "a b c d e") is False


def test_similarity_just_above_0_6_is_a_repeat():
    assert _repeat("a b", "a b c") is True


def test_identical_wording_is_a_repeat():
    assert _repeat("blue cardigan want", "blue cardigan want") is True


@pytest.mark.parametrize("qtype", ["location", "identity", "time", "activity", "person"])
def test_same_specific_question_type_is_a_repeat_without_shared_words(qtype):
    assert _repeat("", "place", qtype, qtype) is True


def test_two_general_messages_are_not_repeats_by_type_alone():
    assert _repeat("like tea", "garden lovely looks") is False


def test_two_empty_general_fingerprints_are_not_repeats():
    assert _repeat("", "") is False


@pytest.mark.parametrize(("qtype", "earlier_type"), [("location", "time"), ("person", "general")])
def test_different_question_types_without_shared_words_are_not_repeats(qtype, earlier_type):
    assert _repeat("tom", "day", qtype, earlier_type) is False


def test_where_am_i_and_what_is_this_place_are_repeats():
    assert _repeat(
        fingerprint("What is this place?"),
        fingerprint("Where am I?"),
        question_type("What is this place?"),
        question_type("Where am I?"),
    )


def test_count_repeats_counts_every_earlier_match():
    earlier = [("", "location"), ("like tea", "general"), ("place", "location"), ("day", "time")]
    assert count_repeats(fingerprint_="", question_type_="location", earlier=earlier) == 2


def test_count_repeats_of_a_first_message_is_zero():
    assert count_repeats(fingerprint_="", question_type_="location", earlier=[]) == 0


def test_the_matcher_answers_as_is_repeat_of_for_every_variant():
    # repeat_flags checks a turn's message against every earlier row with `matcher` (issue 20):
    # the same answers as is_repeat_of over each of the message's variants (a key rotation
    # gives two), for matching and unmatching words and types, empty fingerprints included.
    texts = [
        "Where am I?",
        "What is this place?",
        "Where is Tom?",
        "Is Tom coming?",
        "I want my blue cardigan",
        "my blue cardigan, I want it",
        "blue hat",
        "What day is it?",
        "Hello",
        "tea, tea and more tea",
        "more tea please and a biscuit",
    ]
    rows = [(fingerprint(t), question_type(t)) for t in texts]
    for text in texts:
        for variants in ([fingerprint(text)], [fingerprint(text), "tom"], ["", fingerprint(text)]):
            qtype = question_type(text)
            matches = matcher(variants, qtype)
            for earlier_fp, earlier_type in rows:
                expected = any(
                    is_repeat_of(
                        fingerprint_=variant,
                        question_type_=qtype,
                        earlier_fingerprint=earlier_fp,
                        earlier_type=earlier_type,
                    )
                    for variant in variants
                )
                assert matches(earlier_fp, earlier_type) is expected, (text, earlier_fp)
