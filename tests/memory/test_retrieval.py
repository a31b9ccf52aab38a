"""Keyword tokens, BM25 and score fusion (memory/retrieval.py)."""

import math
from collections import Counter

import numpy as np
import pytest

from memory import retrieval
from memory.retrieval import BM25Index, minmax, rrf, stem, tokenize, top_k, weighted_fusion

# --- Tokens -----------------------------------------------------------------------------------


def test_tokenize_drops_stopwords_and_folds_inflections():
    assert tokenize("When is Sarah visiting?") == ["sarah", "visit"]
    assert tokenize("Sarah's visits") == tokenize("sarah visited") == ["sarah", "visit"]
    assert tokenize("I'm SO happy, she's painting!") == ["happi", "paint"]
    assert tokenize("") == [] and tokenize("the and of") == []
    # Numbers and repeated words are kept (BM25 needs term frequency in documents).
    assert tokenize("Room 12, room 12") == ["room", "12", "room", "12"]
    # Curly apostrophes as typed on phones.
    assert tokenize("Sarah\u2019s dog") == ["sarah", "dog"]


@pytest.mark.parametrize(
    ("words", "shared"),
    [
        (["visit", "visits", "visited", "visiting"], "visit"),
        (["stop", "stopped", "stopping"], "stop"),
        (["love", "loved", "loving"], "lov"),
        (["family", "families"], "famili"),
        (["happy", "happily", "happiness"], "happi"),
        (["adopt", "adopted", "adoption"], "adopt"),
        (["dance", "dances", "dancing", "danced"], "danc"),
    ],
)
def test_stemmer_groups_word_forms(words, shared):
    assert {stem(w) for w in words} == {shared}


def test_stemmer_leaves_short_words_names_and_non_words_alone():
    for word in ("bus", "tennis", "glass", "need", "2023", "covid19"):
        assert stem(word) == word
    assert stem("going") == "go"
    # "family" and "early" are not adverbs.
    assert stem("early") != "ear" and stem("family").startswith("famil")


# --- BM25 -------------------------------------------------------------------------------------


DOCS = [
    "Sarah visits every Sunday with the grandchildren",
    "The garden roses need water",
    "Sarah called about the garden",
    "Tomato soup for lunch",
    "",
]


def bm25_reference(docs, query, k1=1.2, b=0.75):
    """Textbook BM25 (Lucene idf), written out plainly for comparison."""
    n = len(docs)
    avg = sum(len(d) for d in docs) / n
    df = {term: sum(term in doc for doc in docs) for term in set(query)}
    out = []
    for d in docs:
        score = 0.0
        for term in set(query):
            if not df[term]:
                continue
            tf = d.count(term)
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avg))
        out.append(score)
    return np.array(out)


def test_bm25_matches_the_formula():
    docs = [tokenize(d) for d in DOCS]
    index = BM25Index(docs)
    for query in ("sarah garden", "roses water water", "soup", "unknown words", "sunday sarah"):
        q = tokenize(query)
        assert np.allclose(index.scores(q), bm25_reference(docs, q), atol=1e-5), query
    scores = index.scores(tokenize("Sarah garden"))
    assert scores.dtype == np.float32 and len(scores) == len(DOCS)
    # The document with both words ranks first; the empty one scores zero.
    assert int(np.argmax(scores)) == 2 and scores[4] == 0


def test_bm25_edge_cases():
    empty = BM25Index([])
    assert len(empty) == 0 and empty.scores(["x"]).shape == (0,)
    only_empty = BM25Index([[], []])
    assert only_empty.scores(["x"]).tolist() == [0, 0]
    # A word in every document still counts a little (the idf never goes negative).
    everywhere = BM25Index([["tea", "cake"], ["tea"], ["tea", "scone"]])
    assert (everywhere.scores(["tea"]) > 0).all()
    # A query word repeated does not count twice.
    assert np.array_equal(everywhere.scores(["cake", "cake"]), everywhere.scores(["cake"]))


def test_bm25_over_thousands_of_documents_is_exact():
    rng = np.random.default_rng(1)
    vocabulary = [f"w{i}" for i in range(2000)]
    docs = [list(rng.choice(vocabulary, size=rng.integers(1, 30))) for _ in range(3_000)]
    index = BM25Index(docs)
    query = ["w1", "w17", "w1999", "nothing"]
    scores = index.scores(query)
    assert np.allclose(scores, bm25_reference(docs, query), atol=1e-4)
    assert np.count_nonzero(scores) > 0


# --- Fusion -----------------------------------------------------------------------------------


def test_minmax_and_weighted_fusion():
    assert minmax(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert minmax(np.array([5.0, 5.0])).tolist() == [0.0, 0.0]
    assert minmax(np.array([])).shape == (0,)
    fused = weighted_fusion([(np.array([0.0, 1.0, 0.5]), 0.7), (np.array([10.0, 0.0, 10.0]), 0.3)])
    assert np.allclose(fused, [0.3, 0.7, 0.65])
    with pytest.raises(ValueError):
        weighted_fusion([(np.zeros(2), 1.0), (np.zeros(3), 1.0)])
    with pytest.raises(ValueError):
        weighted_fusion([])


def test_rrf_rewards_agreement_between_rankings():
    dense = np.array([0.9, 0.8, 0.1, 0.0])
    keyword = np.array([0.0, 5.0, 4.0, 0.1])
    fused = rrf([dense, keyword], k=60)
    # Document 1 is second and first: it beats document 0 (first and last).
    assert int(np.argmax(fused)) == 1
    assert fused[1] == pytest.approx(1 / 62 + 1 / 61)
    assert retrieval.ranks(np.array([0.2, 0.9, 0.5])).tolist() == [2, 0, 1]


def test_top_k_orders_best_first():
    scores = np.array([0.1, 0.9, 0.5, 0.7, 0.3])
    assert top_k(scores, 3).tolist() == [1, 3, 2]
    assert top_k(scores, 10).tolist() == [1, 3, 2, 4, 0]
    assert top_k(scores, 0).tolist() == []


# --- Conversations ----------------------------------------------------------------------------

from datetime import date, datetime  # noqa: E402

from memory.embeddings import HashingEmbedder  # noqa: E402
from memory.retrieval import (  # noqa: E402
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
