"""The bench-only conversation search (bench/conversation_search.py) behind the LoCoMo benchmark."""

from collections import Counter
from datetime import date, datetime  # noqa: E402

import numpy as np
import pytest

from bench import conversation_search as retrieval
from bench.conversation_search import (  # noqa: E402
    ConversationSearch,
    ConversationWeights,
    DateMention,
    Turn,
    date_match,
    exchange_pairs,
    parse_date,
    propagate_to_neighbours,
    query_dates,
    session_best,
    session_codes,
    speakers_named,
    turn_text,
    with_exchanges,
)
from memory.core.embeddings import HashingEmbedder  # noqa: E402
from memory.facts.ranking import BM25Index, tokenize, weighted_fusion


def test_turn_text_is_the_locomo_document():
    assert turn_text(Turn("D1:1", "Rose", "Hello")) == 'Rose said, "Hello"'
    shared = Turn("D1:2", "Rose", "Look!", caption="a photo of a cat")
    assert turn_text(shared) == 'Rose said, "Look!" and shared a photo of a cat'


def test_sessions_and_exchanges_never_cross_a_session():
    turns = [
        Turn(str(i), "A", "x", session=s) for i, s in enumerate(["b", "b", "a", "a", "a", "c"])
    ]
    sessions = session_codes(turns)
    assert sessions.tolist() == [0, 0, 1, 1, 1, 2]
    assert exchange_pairs(sessions).tolist() == [0, 2, 3]
    assert exchange_pairs(np.array([0])).tolist() == []
    # Turn similarity plus the exchange before and after; a missing exchange counts as the turn.
    turn_scores = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    exchange_scores = np.array([10.0, 20.0, 30.0])
    combined = with_exchanges(turn_scores, exchange_scores, exchange_pairs(sessions))
    assert combined.tolist() == [1 + 1 + 10, 2 + 10 + 2, 3 + 3 + 20, 4 + 20 + 30, 5 + 30 + 5, 6 * 3]


def test_neighbours_share_scores_within_a_session_only():
    sessions = np.array([0, 0, 0, 1])
    out = propagate_to_neighbours(np.array([0.0, 1.0, 0.0, 0.0]), sessions, 0.5)
    assert out.tolist() == [0.5, 1.0, 0.5, 0.0]
    out = propagate_to_neighbours(np.array([0.0, 0.0, 1.0, 0.0]), sessions, 0.5)
    assert out.tolist() == [0.0, 0.5, 1.0, 0.0]  # turn 3 is in the next session
    assert session_best(np.array([0.1, 0.7, 0.2, 0.4]), sessions).tolist() == [0.7, 0.7, 0.7, 0.4]
    assert session_best(np.zeros(0), np.zeros(0, np.int64)).shape == (0,)


def test_speakers_named_by_whole_word():
    speakers = ["Caroline", "Melanie Brooks"]
    assert speakers_named("What did Caroline research?", speakers) == {"Caroline"}
    assert speakers_named("When did melanie paint?", speakers) == {"Melanie Brooks"}
    assert speakers_named("Did Caroline call Melanie?", speakers) == set(speakers)
    assert speakers_named("What did Carolines cat eat?", speakers) == set()
    assert speakers_named("anything", ["", "Jo"]) == set()


def test_dates_of_turns_and_queries():
    assert parse_date("1:56 pm on 8 May, 2023") == date(2023, 5, 8)
    assert parse_date("2023-05-08T10:00:00Z") == date(2023, 5, 8)
    assert parse_date(datetime(2023, 5, 8, 10)) == date(2023, 5, 8)
    assert parse_date("October 13, 2023") == date(2023, 10, 13)
    assert parse_date("31 February 2023") is None
    assert parse_date("yesterday") is None and parse_date(None) is None

    assert query_dates("What did she paint on October 13, 2023?") == [DateMention(2023, 10, 13)]
    assert query_dates("Who came on 1 February, 2023?") == [DateMention(2023, 2, 1)]
    assert query_dates("What happened in December 2023?") == [DateMention(2023, 12)]
    assert query_dates("When did she go camping in July?") == [DateMention(None, 7)]
    assert query_dates("May I ask where she lives?") == []
    assert query_dates("What happened in May 2023?") == [DateMention(2023, 5)]


def test_date_match_scores_days_weeks_and_months():
    days = [date(2023, 10, 13), date(2023, 10, 18), date(2023, 11, 2), None]
    assert date_match([DateMention(2023, 10, 13)], days).tolist() == [1.0, 0.5, 0.0, 0.0]
    assert date_match([DateMention(None, 10)], days).tolist() == [0.5, 0.5, 0.0, 0.0]
    assert date_match([DateMention(2022, 10)], days).tolist() == [0.0, 0.0, 0.0, 0.0]
    assert date_match([], days).tolist() == [0.0, 0.0, 0.0, 0.0]


def _conversation() -> list[Turn]:
    rows = [
        (1, "Rose", "Good morning! Did you sleep well?"),
        (1, "Tom", "Not really, the storm kept me up."),
        (1, "Rose", "Did you go anywhere over the weekend?"),
        (1, "Tom", "Yes, we drove to the seaside in Brighton."),
        (1, "Rose", "Lovely, I adore the sea."),
        (2, "Rose", "I baked a lemon cake for the grandchildren."),
        (2, "Tom", "My grandson plays football on Saturdays."),
        (2, "Rose", "Mine started piano lessons."),
        (3, "Tom", "I baked bread this morning."),
        (3, "Rose", "I planted tulips in the garden."),
    ]
    dates = {
        1: "10:00 am on 3 June, 2023",
        2: "4:00 pm on 20 June, 2023",
        3: "9:00 am on 2 July, 2023",
    }
    position = Counter()
    turns = []
    for i, (session, speaker, text) in enumerate(rows):
        turns.append(
            Turn(f"D{session}:{i}", speaker, text, session, position[session], dates[session])
        )
        position[session] += 1
    return turns


def test_conversation_search_finds_the_answer_next_to_the_question():
    search = ConversationSearch(_conversation(), HashingEmbedder())
    assert len(search) == 10
    # The reply ("Yes, we drove to the seaside") shares few words with the question; the
    # question it answers does, and its exchange and neighbour carry the reply up.
    query = "Where did Tom go over the weekend?"
    top = [turn.id for turn, _ in search.search(query, limit=2)]
    assert "D1:3" in top
    off = ConversationWeights(exchanges=False, neighbour=0.0, session=0.0, speaker=0.0, date=0.0)
    bare = ConversationSearch(_conversation(), HashingEmbedder(), weights=off)
    # Relative to the best match, the reply scores far higher with its context than alone.
    with_context, alone = search.scores(query), bare.scores(query)
    assert with_context[3] / with_context.max() > alone[3] / alone.max() + 0.2


def test_conversation_search_uses_speaker_and_date():
    search = ConversationSearch(_conversation(), HashingEmbedder())
    # Both speakers baked; the speaker named decides.
    assert search.search("What did Tom bake?", limit=1)[0][0].id == "D3:8"
    assert search.search("What did Rose bake?", limit=1)[0][0].id == "D2:5"
    # The date named lifts that day's turns by DATE_WEIGHT (a week away would get half).
    query = "Who baked on 2 July, 2023?"
    undated = ConversationSearch(
        _conversation(), HashingEmbedder(), weights=ConversationWeights(date=0.0)
    )
    lift = search.scores(query) - undated.scores(query)
    july = np.array([t.session == 3 for t in search.turns])
    assert np.allclose(lift, retrieval.DATE_WEIGHT * july)
    assert search.search(query, limit=1)[0][0].id == "D3:8"


def test_conversation_search_with_every_signal_off_is_plain_fusion():
    turns = _conversation()
    embedder = HashingEmbedder()
    off = ConversationWeights(exchanges=False, neighbour=0.0, session=0.0, speaker=0.0, date=0.0)
    search = ConversationSearch(turns, embedder, weights=off)
    query = "Did Tom bake bread in June 2023?"
    docs = embedder.encode([turn_text(t) for t in turns])
    keyword = BM25Index([tokenize(turn_text(t)) for t in turns]).scores(tokenize(query))
    expected = weighted_fusion([(docs @ embedder.encode([query])[0], 0.5), (keyword, 0.5)])
    assert np.allclose(search.scores(query), expected)


def test_conversation_search_edges():
    embedder = HashingEmbedder()
    empty = ConversationSearch([], embedder)
    assert empty.scores("anything").shape == (0,) and empty.search("anything") == []
    turns = _conversation()
    vectors = embedder.encode([turn_text(t) for t in turns])
    with pytest.raises(ValueError):
        ConversationSearch(turns, embedder, vectors=(vectors, vectors))
    one = ConversationSearch(turns[:1], embedder)
    assert one.scores("sleep").shape == (1,)
