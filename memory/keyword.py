"""Keyword search: a tokenizer and a BM25 index with precomputed weights.

Each term's postings (documents and their BM25 weight) are computed when the index is built,
because a memory scope's documents only change on writes; scoring a query is then one numpy
gather-and-add per query term, about a millisecond over tens of thousands of memories.
"""

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

K1 = 1.2
B = 0.75

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have he her
    hers him his how i if in into is it its me my no not of on or our she so than that the their
    them then there these they this to too us was we were what when where which who whom why
    will with would you your yours""".split()
)


def _stem(word: str) -> str:
    """A light suffix stripper: plurals and common verb endings, enough to match 'visits'
    with 'visiting' and 'visited'."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix in ("ingly", "edly", "ies", "ing", "ed", "es", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            if suffix == "ies":
                return stem + "y"
            if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
                stem = stem[:-1]  # running -> run
            return stem
    return word


def tokenize(text: str) -> list[str]:
    """Lowercase words without stopwords, lightly stemmed."""
    return [_stem(word) for word in _WORD.findall(text.lower()) if word not in STOPWORDS]


class BM25Index:
    """Okapi BM25 over a fixed list of tokenized documents."""

    def __init__(self, documents: Sequence[Sequence[str]], *, k1: float = K1, b: float = B):
        self.size = len(documents)
        lengths = np.fromiter((len(doc) for doc in documents), np.float32, self.size)
        average = float(lengths.mean()) if self.size and lengths.sum() else 1.0
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for doc_id, doc in enumerate(documents):
            for term, tf in Counter(doc).items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(doc_id)
                tfs.append(tf)
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, (docs, tfs) in postings.items():
            doc_ids = np.asarray(docs, dtype=np.int32)
            tf = np.asarray(tfs, dtype=np.float32)
            idf = np.log(1.0 + (self.size - len(docs) + 0.5) / (len(docs) + 0.5))
            norm = k1 * (1.0 - b + b * lengths[doc_ids] / average)
            self._postings[term] = (
                doc_ids,
                (idf * tf * (k1 + 1.0) / (tf + norm)).astype(np.float32),
            )

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for the query (zeros where no term matches)."""
        out = np.zeros(self.size, dtype=np.float32)
        for term in set(query_tokens):
            posting = self._postings.get(term)
            if posting is not None:
                out[posting[0]] += posting[1]
        return out
