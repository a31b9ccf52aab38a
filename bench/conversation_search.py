"""Search over whole stored conversations, for the LoCoMo recall benchmark (bench/locomo_recall.py).

`ConversationSearch` ranks the turns of stored conversations with what a memory knows beyond a
bag of turns: the neighbouring turns, the session, who spoke and when. On LoCoMo it lifts
recall@10 from 0.51 (MiniLM) and 0.63 (BM25) to 0.80; docs/benchmarks.md has each part's share.
It is built from the product's ranking pieces (memory/facts/ranking.py) but is not part of the
product: Clara never searches across a person's sessions for the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING

import numpy as np

from memory.core.embeddings import blas_threads
from memory.facts.ranking import BM25Index, minmax, tokenize, top_k

if TYPE_CHECKING:
    from memory.core.embeddings import Embedder

# --- Conversations ----------------------------------------------------------------------------

# How ConversationSearch weighs its signals (tuned on LoCoMo's development half; the optimum is
# flat: ±0.1 on any of them moves recall@10 by about 0.01).
DENSE_WEIGHT = 0.5  # embedding similarity (turn + its two exchanges), min-max scaled
KEYWORD_WEIGHT = 0.5  # BM25, min-max scaled
NEIGHBOUR_WEIGHT = 0.2  # share of each neighbour's score a turn receives
SESSION_WEIGHT = 0.3  # the best score in the turn's session, min-max scaled
SPEAKER_WEIGHT = 0.1  # the query names this turn's speaker (and only that speaker)
DATE_WEIGHT = 0.5  # the query names this turn's date (1) or its month / a date within a week (½)


@dataclass(frozen=True)
class ConversationWeights:
    """The weights of ConversationSearch; the defaults are the constants above.

    Setting one to 0 (or `exchanges` to False) switches that signal off, which is how the
    benchmark measures what each contributes.
    """

    dense: float = DENSE_WEIGHT
    keyword: float = KEYWORD_WEIGHT
    neighbour: float = NEIGHBOUR_WEIGHT
    session: float = SESSION_WEIGHT
    speaker: float = SPEAKER_WEIGHT
    date: float = DATE_WEIGHT
    exchanges: bool = True


@dataclass(frozen=True)
class Turn:
    """One message of a stored conversation, as search sees it.

    `session` groups the turns of one sitting (any hashable id); turns are given to search in
    conversation order. `date` is when it was said: a date, a datetime, or text such as
    "1:56 pm on 8 May, 2023" or "2023-05-08".
    """

    id: str
    speaker: str
    text: str
    session: object = 0
    position: int = 0
    date: date | datetime | str | None = None
    caption: str | None = None


def turn_text(turn: Turn) -> str:
    """`<speaker> said, "<text>"`, plus ` and shared <caption>` for a shared image."""
    text = f'{turn.speaker} said, "{turn.text}"'
    if turn.caption:
        text += f" and shared {turn.caption}"
    return text


def exchange_text(first: Turn, second: Turn) -> str:
    """Two consecutive turns as one text: a question with its answer, a remark with its reply.

    Embedding the exchange lets a turn that only makes sense with its neighbour ("Yes, last
    Sunday!") be found by what the neighbour said.
    """
    return f"{turn_text(first)} {turn_text(second)}"


def session_codes(turns: Sequence[Turn]) -> np.ndarray:
    """Small integers for the turns' sessions, in order of first appearance."""
    codes: dict[object, int] = {}
    return np.fromiter(
        (codes.setdefault(t.session, len(codes)) for t in turns), dtype=np.int64, count=len(turns)
    )


def exchange_pairs(sessions: np.ndarray) -> np.ndarray:
    """Indices i such that turns i and i+1 are consecutive in one session."""
    return (
        np.flatnonzero(sessions[1:] == sessions[:-1])
        if len(sessions) > 1
        else np.zeros(0, np.int64)
    )


def with_exchanges(
    turn_scores: np.ndarray, exchange_scores: np.ndarray, pairs: np.ndarray
) -> np.ndarray:
    """A turn's similarity plus those of the exchange before it and the exchange after it.

    A turn that opens or closes its session has one exchange (or none); its own similarity
    stands in for the missing one, so boundary turns are not ranked down for lacking a
    neighbour.
    """
    turn_scores = np.asarray(turn_scores, dtype=np.float64)
    before = turn_scores.copy()
    after = turn_scores.copy()
    before[pairs + 1] = exchange_scores
    after[pairs] = exchange_scores
    return turn_scores + before + after


def propagate_to_neighbours(scores: np.ndarray, sessions: np.ndarray, weight: float) -> np.ndarray:
    """Each turn gains `weight` × the score of the turn before and after it in its session.

    The answer to a question often sits next to the turn that matches it best (the question's
    words are in the other speaker's question, the answer is the reply).
    """
    out = np.asarray(scores, dtype=np.float64).copy()
    if len(out) > 1 and weight:
        same = sessions[1:] == sessions[:-1]
        out[1:] += weight * np.where(same, scores[:-1], 0.0)
        out[:-1] += weight * np.where(same, scores[1:], 0.0)
    return out


def session_best(scores: np.ndarray, sessions: np.ndarray) -> np.ndarray:
    """Every turn gets the best score of its session (sessions as small integer codes)."""
    if not len(scores):
        return np.zeros(0)
    best = np.full(int(sessions.max()) + 1, -np.inf)
    np.maximum.at(best, sessions, scores)
    return best[sessions]


def speakers_named(query: str, speakers: Iterable[str]) -> set[str]:
    """The speakers whose name (or first name) appears as a word in the query."""
    lowered = query.lower()
    named = set()
    for speaker in speakers:
        names = {speaker.lower(), speaker.split()[0].lower()} if speaker.strip() else set()
        if any(re.search(r"\b" + re.escape(name) + r"\b", lowered) for name in names):
            named.add(speaker)
    return named


_MONTHS = {
    name: number
    for number, month in enumerate(
        "january february march april may june july august september october november december".split(),
        1,
    )
    for name in (month, month[:3])
}
_MONTHS["sept"] = 9
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r"\.?,?\s+(\d{4})\b")
_MONTH_DAY_YEAR = re.compile(r"\b" + _MONTH + r"\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b")
_MONTH_YEAR = re.compile(r"\b" + _MONTH + r"\b(?:,?\s+(\d{4})\b)?")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?!\d)")


def parse_date(value: date | datetime | str | None) -> date | None:
    """The calendar day of a turn's date, or None when there is none or it cannot be read."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = value.lower()
    try:
        if m := _ISO.search(text):
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if m := _DAY_MONTH_YEAR.search(text):
            return date(int(m.group(3)), _MONTHS[m.group(2)], int(m.group(1)))
        if m := _MONTH_DAY_YEAR.search(text):
            return date(int(m.group(3)), _MONTHS[m.group(1)], int(m.group(2)))
    except ValueError:  # 31 February and the like
        return None
    return None


@dataclass(frozen=True)
class DateMention:
    """A date named in a query: a day (`day` set), or a month of a year or of any year."""

    year: int | None
    month: int
    day: int | None = None


def query_dates(query: str) -> list[DateMention]:
    """Dates a query names: "October 13, 2023", "13 October 2023", "May 2023", "in July"."""
    text = query.lower()
    found = [
        DateMention(int(m.group(3)), _MONTHS[m.group(2)], int(m.group(1)))
        for m in _DAY_MONTH_YEAR.finditer(text)
    ]
    found += [
        DateMention(int(m.group(3)), _MONTHS[m.group(1)], int(m.group(2)))
        for m in _MONTH_DAY_YEAR.finditer(text)
    ]
    if found:
        return found
    for m in _MONTH_YEAR.finditer(text):
        month, year = m.group(1), m.group(2)
        # "may" alone is far more often the verb than the month.
        if month == "may" and not year:
            continue
        found.append(DateMention(int(year) if year else None, _MONTHS[month]))
    return found


@dataclass(frozen=True)
class DayColumns:
    """Turn dates as arrays (ordinal day, year, month; 0 where a turn has no date)."""

    ordinal: np.ndarray
    year: np.ndarray
    month: np.ndarray

    @classmethod
    def of(cls, days: Sequence[date | None]) -> DayColumns:
        ordinal = np.fromiter((d.toordinal() if d else 0 for d in days), np.int64, len(days))
        year = np.fromiter((d.year if d else 0 for d in days), np.int64, len(days))
        month = np.fromiter((d.month if d else 0 for d in days), np.int64, len(days))
        return cls(ordinal, year, month)


def date_match(
    mentions: Sequence[DateMention], days: Sequence[date | None] | DayColumns
) -> np.ndarray:
    """1 for a turn said on a day the query names, ½ within a week of it or in a named month."""
    columns = days if isinstance(days, DayColumns) else DayColumns.of(days)
    out = np.zeros(len(columns.ordinal))
    known = columns.ordinal > 0
    for mention in mentions:
        if mention.day is not None and mention.year is not None:
            try:
                target = date(mention.year, mention.month, mention.day).toordinal()
            except ValueError:
                continue
            gap = np.abs(columns.ordinal - target)
            value = np.where(gap == 0, 1.0, np.where(gap <= 7, 0.5, 0.0))
        else:
            same = columns.month == mention.month
            if mention.year is not None:
                same &= columns.year == mention.year
            value = np.where(same, 0.5, 0.0)
        np.maximum(out, np.where(known, value, 0.0), out=out)
    return out


class ConversationSearch:
    """Ranks the turns of stored conversations for a query (one person's, or one LoCoMo dialog).

    Built once per set of turns (embeds each turn and each exchange of two consecutive turns,
    indexes the turn texts for BM25); `scores(query)` then costs one embedding of the query and
    a few vector operations. The score of a turn:

      relevance = DENSE_WEIGHT · minmax(cos(turn) + cos(exchange before) + cos(exchange after))
                + KEYWORD_WEIGHT · minmax(BM25)
      score     = relevance + NEIGHBOUR_WEIGHT · (relevance of the turns either side, same session)
                + SESSION_WEIGHT · minmax(best score in the session)
                + SPEAKER_WEIGHT · [the query names this speaker and no other]
                + DATE_WEIGHT · date_match(dates the query names, the turn's date)

    Pass `vectors=(turn_vectors, exchange_vectors)` to reuse stored embeddings (rows of
    `exchange_pairs(session_codes(turns))` order for the exchanges).
    """

    def __init__(
        self,
        turns: Sequence[Turn],
        embedder: Embedder,
        *,
        vectors: tuple[np.ndarray, np.ndarray] | None = None,
        weights: ConversationWeights | None = None,
    ) -> None:
        self.turns = list(turns)
        self.embedder = embedder
        self.weights = weights or ConversationWeights()
        self.sessions = session_codes(self.turns)
        self.pairs = exchange_pairs(self.sessions)
        if not self.weights.exchanges:
            self.pairs = self.pairs[:0]
        if vectors is None:
            texts = [turn_text(t) for t in self.turns]
            exchanges = [exchange_text(self.turns[i], self.turns[i + 1]) for i in self.pairs]
            vectors = (embedder.encode(texts), embedder.encode(exchanges))
        self.turn_vectors, self.exchange_vectors = vectors
        if len(self.turn_vectors) != len(self.turns) or len(self.exchange_vectors) != len(
            self.pairs
        ):
            raise ValueError("vectors do not match the turns")
        self.keyword = BM25Index([tokenize(turn_text(t)) for t in self.turns])
        self.speaker_names = sorted({t.speaker for t in self.turns})
        codes = {name: i for i, name in enumerate(self.speaker_names)}
        self.speakers = np.fromiter(
            (codes[t.speaker] for t in self.turns), np.int64, len(self.turns)
        )
        self.days = DayColumns.of([parse_date(t.date) for t in self.turns])

    def __len__(self) -> int:
        return len(self.turns)

    def scores(self, query: str, query_vector: np.ndarray | None = None) -> np.ndarray:
        """The score of every turn for the query (higher is better), in the turns' order."""
        if not self.turns:
            return np.zeros(0)
        if query_vector is None:
            query_vector = self.embedder.encode([query])[0]
        w = self.weights
        # One BLAS thread: on a busy 2-core machine OpenBLAS's threads made this product 15×
        # slower (12 ms against 0.7 ms at 10k turns), and a matrix-vector product gains nothing.
        with blas_threads(1):
            dense = self.turn_vectors @ query_vector
            if w.exchanges:
                exchanges = self.exchange_vectors @ query_vector
        if w.exchanges:
            dense = with_exchanges(dense, exchanges, self.pairs)
        keyword = self.keyword.scores(tokenize(query))
        relevance = w.dense * minmax(dense) + w.keyword * minmax(keyword)
        score = propagate_to_neighbours(relevance, self.sessions, w.neighbour)
        if w.session:
            score += w.session * minmax(session_best(score, self.sessions))
        named = speakers_named(query, self.speaker_names) if w.speaker else set()
        if len(named) == 1:
            score += w.speaker * (self.speakers == self.speaker_names.index(next(iter(named))))
        mentions = query_dates(query) if w.date else []
        if mentions:
            score += w.date * date_match(mentions, self.days)
        return score

    def search(self, query: str, limit: int = 10) -> list[tuple[Turn, float]]:
        """The best `limit` turns with their scores, best first."""
        scores = self.scores(query)
        return [(self.turns[i], float(scores[i])) for i in top_k(scores, limit)]
