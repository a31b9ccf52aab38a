"""Keyword tokens, BM25 and score fusion (memory/facts/ranking.py)."""

import math

import numpy as np
import pytest

from memory.facts import ranking as retrieval
from memory.facts.ranking import BM25Index, minmax, rrf, stem, tokenize, top_k, weighted_fusion

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
