"""Repeats on the product path: by words (the fingerprint rule) or by meaning, from stored meanings.

A message repeats an earlier one of its session when the fingerprint rule says so
(`repetition.is_repeat_of`: Jaccard of the keyed content words above 0.6, or the same specific
question type) or when the two mean the same (`meaning.is_repeat`; opposites such as "I want to
go home" / "I don't want to go home" are never repeats).

What it costs on a turn (docs/benchmarks.md):
- the current message is analysed once: one MiniLM forward pass (`meaning.analyse`, with the
  repeat check's ONNX Runtime int8 runner, `meaning.repeat_embedder()`), kept in a
  per-process LRU keyed by a keyed hash of the redacted text (`meaning_of`), so the exchange
  write that follows the /context call in the same process reuses it;
- the earlier messages' meanings come from their repetition records, read with the fingerprints
  in the same indexed query (`sql.SESSION_FINGERPRINTS`), decrypted and decoded (`from_db`,
  also cached per process, by ciphertext); they are never embedded again;
- a row without a meaning (stored before meanings were, or while analysis was unavailable) is
  compared by fingerprint alone, and so is everything when `CLARA_SEMANTIC_REPEATS` is off or
  the configured embedder cannot analyse (the "hashing" stand-in).

The stored form is `meaning.to_stored` (about 1.2 KB), encrypted like every other column that
describes the person (AES-GCM under the same keys, memory/core/crypto.py; a binary column, so no
base64 inflates it): a raw read of the column shows ciphertext, never a vector. It is bound to
its column and to its repetition record (an `enc:r1:` header naming the record's id): read with
the record's id, a meaning moved to another row raises `crypto.DecryptionError`. `rotate_keys`
makes it again from the record's original message: the meaning carries keyed hashes of its
words, which must be the current key's to match new messages (memory/reencrypt.py). While a
rotation is under way, rows not reached yet can only miss a match by meaning across keys (the
fingerprint, compared under every configured key, still finds the same words).

`group_by_meaning` merges groups of messages that mean the same, for caregivers' analytics.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from memory.conversations import meaning as meaning_rule
from memory.conversations import repetition
from memory.conversations.meaning import MessageMeaning
from memory.core import crypto
from memory.core.fields import row_text

logger = logging.getLogger(__name__)

# What a stored meaning is bound to: the column it lives in (memory/core/fields.py), and its row.
MEANING_CONTEXT = "repetition_tracking.meaning"

# Stored meanings decoded and kept per process (by ciphertext): a session's earlier messages
# are compared on every turn, and a decoded meaning keeps the arrays `compare` builds once.
DECODED_CACHE_SIZE = 2048
# Verdicts kept per analysed message (a session's rows; more only for a very long session).
VERDICTS_PER_MESSAGE = 256


class _Lru:
    """A small thread-safe LRU map (web workers run threads)."""

    def __init__(self, size: Callable[[], int]) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, MessageMeaning] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> MessageMeaning | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Hashable, value: MessageMeaning) -> None:
        limit = self._size()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > max(limit, 0):
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_analysed = _Lru(lambda: settings.CLARA_MEANING_CACHE_SIZE)


def clear_caches() -> None:
    """Forget every cached meaning, this module's and the detector's own (benchmarks time the
    cold path with it: without the detector's, an "unseen" message was a cache hit)."""
    _analysed.clear()
    _decrypted.cache_clear()
    meaning_rule.clear_caches()


def _embedder():
    """The repeat check's own runner (`meaning.repeat_embedder()`: ONNX Runtime int8 unless
    settings.CLARA_REPEAT_EMBEDDER says otherwise), the one the detector was fitted and measured
    with; long-term memory search keeps `get_embedder()`. None when semantic repeats are off, or
    when CLARA_EMBEDDER names the "hashing" stand-in (no model: meanings are not analysed)."""
    if not settings.CLARA_SEMANTIC_REPEATS:
        return None
    from memory.core.embeddings import get_embedder

    # The "hashing" stand-in has no token states: it cannot tell meanings apart.
    if not hasattr(get_embedder(), "encode_with_tokens"):
        return None
    return meaning_rule.repeat_embedder()


def meaning_of(message: str) -> MessageMeaning | None:
    """The meaning of one (already redacted) message of the person: analysed once per process.

    None when semantic repeats are off, the embedder cannot analyse, or the analysis failed
    (logged): the fingerprint rule alone then decides, and the row is stored without a meaning.
    """
    embedder = _embedder()
    if embedder is None:
        return None
    # Keyed: the cache holds no readable text, and a new primary key (whose word hashes the
    # meaning carries) starts afresh.
    key = crypto.keyed_hash(f"{embedder.name}\x00{message}", purpose="meaning-cache")
    found = _analysed.get(key)
    if found is None:
        try:
            found = meaning_rule.analyse(message, embedder=embedder)
        except Exception:  # the model, not the data: the fingerprint rule still answers
            logger.warning("meaning analysis failed; repeats fall back to fingerprints")
            return None
        _analysed.put(key, found)
    return found


def to_db(meaning: MessageMeaning | None, *, row) -> bytes | None:
    """The column value of a meaning: its stored bytes, encrypted and bound to `row` (the
    repetition record's id, the primary key the statement inserts). None stays NULL."""
    if meaning is None:
        return None
    return crypto.encrypt_bytes(
        meaning_rule.to_stored(meaning), context=MEANING_CONTEXT, row=str(row)
    )


def from_db(value: bytes | memoryview | None, row=None) -> MessageMeaning | None:
    """The meaning of a stored column value; None for NULL or a form this code cannot read.

    `row` is the repetition record's id as selected: a value bound to another row (moved) raises
    `crypto.DecryptionError`, as a value that does not decrypt (a wrong key) does. Values bound
    to the column only (written before rows were; migration 0026 and `rotate_keys` bind them)
    are still read.
    """
    if value is None:
        return None
    found, bound, as_hex, as_int = _decrypted(bytes(value))  # PostgreSQL gives a memoryview
    # The id as SQLite selects it (32 hex digits), as PostgreSQL does (a UUID, compared by its
    # number: UUID's own == is Python code), or as bound.
    if (
        bound is not None
        and row is not None
        and (row != as_hex if row.__class__ is str else getattr(row, "int", None) != as_int)
        and row != bound
    ):
        # Not a usual spelling of the same id: the exact check decides (and raises if moved).
        crypto.check_row(bound, row_text(row), context=MEANING_CONTEXT)
    return found


# By ciphertext, DECODED_CACHE_SIZE of them: functools' LRU (in C, thread-safe), as a turn looks
# up every earlier row of its session (a failure to decrypt is raised, never kept). A bound
# ciphertext names its row, so the row it names is kept with it, in the forms the databases
# select it in (compared on every read without parsing the id each time).
@functools.lru_cache(maxsize=DECODED_CACHE_SIZE)
def _decrypted(value: bytes) -> tuple[MessageMeaning | None, str | None, str | None, int]:
    plain, bound = crypto.keyring().decrypt_bytes_bound(value, context=MEANING_CONTEXT)
    as_hex, as_int = None, -1  # no id's spelling, no UUID's number (nor getattr's None)
    if bound is not None and len(bound) == 36:  # str(uuid): its other spellings, unparsed
        try:
            as_int = int(bound.replace("-", ""), 16)
            as_hex = f"{as_int:032x}"
        except ValueError:
            pass
    return decode_meaning(plain), bound, as_hex, as_int


def decode_meaning(plain: bytes | None) -> MessageMeaning | None:
    """The meaning of a decrypted column value (what the ORM reads); None for NULL, or for a
    stored form this code cannot read (another version): the fingerprint then decides."""
    if not plain:
        return None
    try:
        return meaning_rule.from_stored(plain)
    except ValueError:
        return None


@functools.cache
def cosine_floor(settings: meaning_rule.Settings = meaning_rule.DEFAULT) -> float:
    """The least sentence cosine two messages of the same meaning can have.

    Below it the full comparison (its word arrays are most of a turn's cost) can be skipped.
    With the detector (a logistic regression, memory/conversations/meaning.py) it is the cosine
    at which even the most favourable other features just reach the cut
    (`meaning.least_cosine`); with the first version's rule, threshold - coverage weight.
    tests/memory/test_repeats.py holds the rule to that bound.
    """
    if settings.weights is None:
        return settings.threshold - settings.coverage_weight
    return meaning_rule.least_cosine(settings)


def repeat_flags(
    *,
    variants: Sequence[str],
    question_type: str,
    meaning: MessageMeaning | None,
    earlier: Sequence[tuple[str, str, bytes | None, object]],
) -> list[bool]:
    """For each earlier (stored fingerprint, question type, stored meaning, repetition record id
    as selected) of the session, whether this message repeats it. `variants` are the message's
    `repetition.stored_variants`. A stored meaning bound to another row raises DecryptionError.
    """
    by_words_of = repetition.matcher(variants, question_type)
    if meaning is None:
        return [by_words_of(fingerprint, earlier_type) for fingerprint, earlier_type, *_ in earlier]
    floor = cosine_floor()
    verdicts = meaning.verdicts
    flags = []
    for fingerprint, earlier_type, stored, row in earlier:
        by_words = by_words_of(fingerprint, earlier_type)
        if stored is None:
            flags.append(by_words)
            continue
        # The same message against the same stored row gets the same verdict: /context and the
        # exchange write of one turn compare the same pairs (the message's meaning object is
        # shared through the analysis cache). The row is in the key: a verdict is only reused
        # for the row whose binding was checked.
        key = (hashlib.blake2b(stored, digest_size=16).digest(), row, by_words)
        verdict = verdicts.get(key)
        if verdict is None:
            earlier_meaning = from_db(stored, row)
            if earlier_meaning is None:
                verdict = by_words
            elif not by_words and float(earlier_meaning.vector @ meaning.vector) < floor:
                verdict = False  # too far apart to mean the same: no need to compare words
            else:
                verdict = meaning_rule.is_repeat(
                    earlier_meaning, meaning, fingerprint_match=by_words
                )
            if len(verdicts) < VERDICTS_PER_MESSAGE:
                verdicts[key] = verdict
        flags.append(verdict)
    return flags


def says_again(
    earlier: str, current: str, earlier_meaning: MessageMeaning | None, current_meaning
) -> bool:
    """Whether `current` repeats `earlier` (two texts of the person, meanings when known)."""
    by_words = repetition.is_repeat_of(
        fingerprint_=repetition.fingerprint(current),
        question_type_=repetition.question_type(current),
        earlier_fingerprint=repetition.fingerprint(earlier),
        earlier_type=repetition.question_type(earlier),
    )
    if current_meaning is None or earlier_meaning is None:
        return by_words
    if not by_words and float(earlier_meaning.vector @ current_meaning.vector) < cosine_floor():
        return False
    return meaning_rule.is_repeat(earlier_meaning, current_meaning, fingerprint_match=by_words)


def asks_the_same(question: str, message: str, message_meaning=None) -> bool:
    """Whether `message` asks `question` again: the same words (Jaccard rule) or the same
    meaning, never the question type alone ("Where's my daughter?" is not "Where's my
    husband?"). For matching a question the family agreed an answer to; analyses `question`
    once per process (meaning_of's cache)."""
    by_words = (
        repetition.jaccard(repetition.fingerprint(message), repetition.fingerprint(question))
        > repetition.SIMILARITY_THRESHOLD
    )
    current = message_meaning if message_meaning is not None else meaning_of(message)
    earlier = meaning_of(question) if current is not None else None
    if current is None or earlier is None:
        return by_words
    if not by_words and float(earlier.vector @ current.vector) < cosine_floor():
        return False
    return meaning_rule.is_repeat(earlier, current, fingerprint_match=by_words)


# --- Grouping for analytics ----------------------------------------------------------------------


@dataclass(frozen=True)
class Said:
    """One way something was said: a group of messages with the same words, and how often."""

    key: Hashable
    fingerprint: str  # keyed tokens ("" for a message of only common words)
    times: int
    meaning: MessageMeaning | None


def group_by_meaning(items: Sequence[Said]) -> list[list[Said]]:
    """Merge the ways of saying things that mean the same: a list of groups, each a list.

    Greedy and order-preserving: each item (pass them most frequent first) joins the first group
    whose first item it repeats by meaning (or by the words' Jaccard rule, never by question type
    alone: "What day is it?" and "What time is it?" stay two questions for caregivers), else
    starts a group. Comparing with a group's first item only keeps chains ("coat" → "jacket" →
    "jumper") from merging things nobody said alike. A cosine pre-filter on the sentence vectors
    skips the pairs whose score could not reach the threshold, so a few hundred items cost a
    matrix product and a handful of comparisons.
    """
    floor = cosine_floor()
    groups: list[list[Said]] = []
    heads: list[Said] = []
    # Row i: the sentence vector of heads[i] (zeros without a meaning: never past the floor).
    head_vectors = np.zeros((len(items), meaning_rule.DIM), dtype=np.float32)
    heads_with: dict[str, list[int]] = {}  # a fingerprint token → the heads that have it
    for item in items:
        candidates: list[int] = []
        if item.meaning is not None and heads:
            cosines = head_vectors[: len(heads)] @ item.meaning.vector
            candidates = [int(i) for i in np.flatnonzero(cosines >= floor)]
        # Only heads sharing a word can pass the Jaccard rule.
        sharing = {i for token in item.fingerprint.split() for i in heads_with.get(token, ())}
        by_words = [
            i
            for i in sharing
            if repetition.jaccard(item.fingerprint, heads[i].fingerprint)
            > repetition.SIMILARITY_THRESHOLD
        ]
        joined = None
        for index in sorted(set(candidates) | set(by_words)):
            head = heads[index]
            same_words = index in by_words
            if item.meaning is None or head.meaning is None:
                same = same_words
            else:
                same = meaning_rule.is_repeat(
                    head.meaning, item.meaning, fingerprint_match=same_words
                )
            if same:
                joined = index
                break
        if joined is None:
            if item.meaning is not None:
                head_vectors[len(heads)] = item.meaning.vector
            for token in set(item.fingerprint.split()):
                heads_with.setdefault(token, []).append(len(heads))
            groups.append([item])
            heads.append(item)
        else:
            groups[joined].append(item)
    return groups
