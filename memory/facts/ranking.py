"""Ranking pieces for memory search: keyword tokens, a BM25 index, and score fusion.

Pure functions and numpy only, no Django: the store's search (memory/facts/search.py) and the
LoCoMo benchmark (bench/conversation_search.py) use the same code, so what the benchmark measures
is what the product ranks with.

- `tokenize(text)`: lower-cased words, English stopwords dropped, a light suffix stemmer
  ("visiting", "visited", "visits" → "visit"), possessives folded ("Sarah's" → "sarah").
- `BM25Index(docs)`: Okapi BM25 over token lists with precomputed postings; `scores(query)` is one
  vectorised add per query term, about a millisecond at 10k documents.
- Fusion: `minmax`, `weighted_fusion` (normalised scores, weighted sum) and `rrf` (reciprocal
  rank fusion).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    pass

# --- Tokens -----------------------------------------------------------------------------------

# Short English function words, question words and chat filler. Kept small on purpose: names,
# numbers and content words must survive ("may" the month is lost, a price worth paying).
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each few for from further had hadn't has hasn't have haven't having he
    he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
    in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on
    once only or other ought our ours ourselves out over own same shan't she she'd she'll she's
    should shouldn't so some such than that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've this those through to too under until up
    very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
    which while who who's whom why why's with won't would wouldn't you you'd you'll you're you've
    your yours yourself yourselves
    s t d ll re ve m
    oh ok okay yeah yes hey hi wow um uh lol really just also
    """.split()
)

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_VOWEL = re.compile(r"[aeiouy]")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light English suffix stemmer (Porter's step 1 with a few common derivations).

    Deliberately conservative: it folds inflections ("visits", "visited", "visiting") and a
    handful of derivations, and leaves short words and names alone, because over-stemming merges
    unrelated words and hurts precision more than it helps recall at this scale.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    # Plurals and third person.
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    # Past tense and progressive, only when a vowel is left in the stem.
    for suffix, shortest in (("ing", 2), ("ed", 3)):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if len(base) >= shortest and _VOWEL.search(base) and not base.endswith("e"):
                if base[-1] == base[-2] and base[-1] not in "lsz":
                    base = base[:-1]  # "stopped" → "stop"
                elif base.endswith(("at", "bl", "iz")):
                    base += "e"  # "created" → "create"
                word = base
            break
    # A few derivations that mean the same thing in conversation.
    for suffix, replacement in (
        ("ational", "ate"),
        ("fulness", "ful"),
        ("iveness", "ive"),
        ("ousness", "ous"),
        ("ization", "ize"),
        ("ation", "ate"),
        ("ption", "pt"),
        ("ness", ""),
        ("ment", ""),
        ("ly", ""),
    ):
        # The result keeps at least five letters (four after -ness/-ment), so "family" and
        # "early" keep their "ly" and "nation" stays a nation.
        shortest = 4 if suffix in ("ness", "ment") else 5
        if word.endswith(suffix) and len(word) - len(suffix) + len(replacement) >= shortest:
            word = word[: -len(suffix)] + replacement
            break
    # A final "e" ("love", "loved" and "loving" meet at "lov") and "y"/"i" ("happy", "happily").
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word.endswith("y"):
        word = word[:-1] + "i"
    return word


def tokenize(text: str) -> list[str]:
    """Keyword tokens of a text: lower case, no stopwords, stemmed. Order and repeats kept."""
    out = []
    for word in _WORD.findall(text.lower().replace("\u2019", "'")):
        if word.endswith("'s"):
            word = word[:-2]
        elif "'" in word and word not in STOPWORDS:
            word = word.replace("'", "")
        if word in STOPWORDS or not word:
            continue
        out.append(stem(word))
    return out


# --- BM25 -------------------------------------------------------------------------------------


class BM25Index:
    """Okapi BM25 over a fixed list of token lists (one per document).

    Built once (postings: for each term, its documents and their precomputed term weights), then
    `scores(query_tokens)` costs one numpy gather-add per distinct query term. Documents are
    identified by their position in the list given.
    """

    def __init__(self, docs: Sequence[Sequence[str]], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.size = len(docs)
        self.vocabulary: dict[str, int] = {}
        term_ids: list[int] = []
        doc_ids: list[int] = []
        counts: list[int] = []
        lengths = np.zeros(self.size, dtype=np.float32)
        for d, tokens in enumerate(docs):
            lengths[d] = len(tokens)
            for term, count in Counter(tokens).items():
                t = self.vocabulary.setdefault(term, len(self.vocabulary))
                term_ids.append(t)
                doc_ids.append(d)
                counts.append(count)
        self.lengths = lengths
        avg = float(lengths.mean()) if self.size and lengths.sum() else 1.0
        # Kept for documents scored beside this index (memory/facts/search.py's patches).
        self.avg = avg
        terms = np.asarray(term_ids, dtype=np.int64)
        docs_arr = np.asarray(doc_ids, dtype=np.int32)
        tf = np.asarray(counts, dtype=np.float32)
        # The tf part of BM25 does not depend on the query: compute it once per posting.
        norm = k1 * (1 - b + b * lengths[docs_arr] / avg) if len(docs_arr) else tf
        weight = tf * (k1 + 1) / (tf + norm)
        order = np.argsort(terms, kind="stable")
        self._docs = docs_arr[order]
        self._weights = weight[order].astype(np.float32)
        df = np.bincount(terms, minlength=len(self.vocabulary))
        self.df = df
        self._starts = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
        # The "plus one" idf (Lucene's): never negative, so a very common word still counts a little.
        self.idf = np.log(1 + (self.size - df + 0.5) / (df + 0.5)).astype(np.float32)

    # The arrays `state` gives and `from_state` takes back (memory/facts/snapshots.py).
    STATE_ARRAYS = ("lengths", "_docs", "_weights", "df", "_starts", "idf")

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(plain values, arrays) that make this index again without its documents: the
        vocabulary in term-id order, the parameters, and the postings as they are."""
        meta = {
            "k1": self.k1,
            "b": self.b,
            "size": self.size,
            "avg": self.avg,
            "vocabulary": list(self.vocabulary),
        }
        return meta, {name.lstrip("_"): getattr(self, name) for name in self.STATE_ARRAYS}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> BM25Index:
        """The index `state` described, bit for bit, with no tokenising and no counting."""
        index = cls.__new__(cls)
        index.k1, index.b = float(meta["k1"]), float(meta["b"])
        index.size, index.avg = int(meta["size"]), float(meta["avg"])
        vocabulary = meta["vocabulary"]
        index.vocabulary = dict(zip(vocabulary, range(len(vocabulary)), strict=True))
        for name in cls.STATE_ARRAYS:
            setattr(index, name, arrays[name.lstrip("_")])
        if len(index.lengths) != index.size or len(index._starts) != len(vocabulary) + 1:
            raise ValueError("The index's arrays do not match its size or vocabulary.")
        return index

    def __len__(self) -> int:
        return self.size

    def scores(self, query: Iterable[str]) -> np.ndarray:
        """BM25 score of every document for the query tokens (float32, zeros when none match).

        Each distinct query term counts once: a question repeating a word should not double it.
        """
        out = np.zeros(self.size, dtype=np.float32)
        for term in dict.fromkeys(query):
            t = self.vocabulary.get(term)
            if t is None:
                continue
            lo, hi = self._starts[t], self._starts[t + 1]
            # Within one term's postings a document appears once, so a fancy-index add is exact.
            out[self._docs[lo:hi]] += self.idf[t] * self._weights[lo:hi]
        return out


# --- Fusion -----------------------------------------------------------------------------------


def minmax(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Scale to 0..1 over the documents in `mask` (all by default); a flat list becomes zeros."""
    scores = np.asarray(scores, dtype=np.float64)
    pool = scores[mask] if mask is not None else scores
    if pool.size == 0:
        return np.zeros_like(scores)
    lo, hi = float(pool.min()), float(pool.max())
    if hi - lo <= 1e-12:
        return np.zeros_like(scores)
    return (scores - lo) / (hi - lo)


def weighted_fusion(parts: Sequence[tuple[np.ndarray, float]]) -> np.ndarray:
    """Sum of min-max normalised score arrays, each times its weight."""
    if not parts:
        raise ValueError("nothing to fuse")
    total = np.zeros(len(parts[0][0]), dtype=np.float64)
    for scores, weight in parts:
        if len(scores) != len(total):
            raise ValueError("score arrays differ in length")
        total += weight * minmax(scores)
    return total


def ranks(scores: np.ndarray) -> np.ndarray:
    """0-based rank of each document (0 = best) under descending score, ties by position."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    out = np.empty(len(order), dtype=np.int64)
    out[order] = np.arange(len(order))
    return out


def rrf(
    score_lists: Sequence[np.ndarray], *, k: float = 60.0, weights: Sequence[float] | None = None
) -> np.ndarray:
    """Reciprocal rank fusion: Σ weight / (k + rank + 1) over the rankings."""
    if not score_lists:
        raise ValueError("nothing to fuse")
    weights = weights or [1.0] * len(score_lists)
    total = np.zeros(len(score_lists[0]), dtype=np.float64)
    for scores, weight in zip(score_lists, weights, strict=True):
        total += weight / (k + ranks(scores) + 1)
    return total


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k best scores, best first (argpartition, then sort only those)."""
    scores = np.asarray(scores)
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < len(scores):
        part = np.argpartition(-scores, k - 1)[:k]
    else:
        part = np.arange(len(scores))
    return part[np.argsort(-scores[part], kind="stable")]


__all__ = [
    "STOPWORDS",
    "BM25Index",
    "minmax",
    "ranks",
    "rrf",
    "stem",
    "tokenize",
    "top_k",
    "weighted_fusion",
]
