"""Does this message say again what an earlier one of the session said? By meaning, not words.

The fingerprint rule (memory/conversations/repetition.py: Jaccard of content words above 0.6) misses a person
who asks for her coat, then her jacket. A plain sentence-embedding cosine catches that, but it
also calls "Is the window open?" / "Is the shop open?" (0.64) and "I want to go home" / "I don't
want to go home" (0.84) the same, and scores "Can you put the telly on?" / "I want to watch the
TV" at 0.12. So a message is analysed once, when it is first seen, from one MiniLM forward pass
(`analyse`; stored with `to_stored`), and two analysed messages are compared by arithmetic:

1. Text first made closer to what the person asks (`canonical_text`, in
   memory/conversations/wording.py with the rest of the string work): apostrophes put back
   ("wheres" → "where's"), misspellings mended to an English word one edit away (`spelling`,
   pyspellchecker's dictionary; capitalised words may be names and are left alone), regional
   and colloquial words rewritten to one form (telly → tv, mum → mother, tablets → medicine:
   lexicon.CANONICAL and PHRASES), filler clauses dropped and stammered words said once
   (`tidy`: "oh dear, I don't know, where, where's my coat" → "where's my coat").
2. The sentence vector: MiniLM of that text (the repeat check's own runner,
   `repeat_embedder()`: ONNX Runtime int8 by default, memory/core/onnx_minilm.py), with a
   low-rank adapter merged into its weights (`REPEAT_ADAPTER`, memory/data/repeat_adapter.npz,
   trained by bench/repetition_train.py on pairs written apart from the evaluation set), so that
   the vectors know "I want to go to bed" and "Can I have a lie down?" ask for one thing.
   Long-term memory search keeps the base model (memory.core.embeddings.get_embedder()).
3. Content words (function words, light verbs and wh-words removed), each with a vector (its
   tokens' states after the last layer: no extra model call), a keyed hash of its stem
   (memory/core/crypto.py), its closed classes (lexicon.CLASSES), whether a negation covers it,
   and its antonyms' hashes. Also: question or not, what it asks (`FRAMES`: where, what, when,
   …), whether it asks where something is, whether it asks for something.
4. The comparison (`Comparison`): the sentence cosine; BERTScore-style alignment of the words
   (each word's best match in the other message; `alignment` is the worst-found word, which
   catches "window" / "shop"); the likeness of the words swapped between them
   (`substitution`); a conflict in a closed class ("my husband" / "my daughter": 0.87 alike to
   MiniLM); one asking where something is while the other says something else about it
   (`asks_other`); two different wh-questions about a word both name (`other_question`:
   "What's my dog called?" / "Where's my dog?"); and opposites (`opposite`: every word matched,
   one negated on one side only or swapped for its antonym, or the direction particle swapped:
   "Let the cat in" / "Let the cat out", whose content words are the same); and two statements
   of one frame with something else in its slot (`other_slot`, issue 31: "My brother lives in
   Leeds" / "My daughter lives in Leeds", "... in Bristol", "The soup is too salty" / "... too
   thick"): their word sequences (`MessageMeaning.sequence`, keyed hashes, fillers left out) the
   same but for one stretch of at most three words on each side, whose content words are unlike
   (`SLOT_LIKENESS`), or a different member of one closed class ("on Tuesday" / "on Friday").
   Words said on one side only are no slot: "I really do miss him, so much" says it again.

`same_meaning` is the detector: never for opposites or another slot; otherwise a logistic regression over the
seven compared features and the products of the three likenesses (`FEATURES`; weights
`WEIGHTS`, `BIAS`) at least `CUT`. The weights were fitted
by bench/repetition_fit.py on the tuning half of bench/repetition/pairs.jsonl only; what they
add up to is what the features mean (likeness for, conflicts against). `Settings(weights=None)`
(`FIRST_VERSION`) runs the first version's rule instead: hard vetoes, then cosine + 0.25 ×
coverage ≥ 0.74.

`is_repeat` is the repeat rule: the fingerprint rule OR the same meaning, except that opposites
and same-frame statements with another slot are never repeats (the fingerprint calls "I want to
go home" / "I don't want to go home" one, since negations are stopwords). Question types stay as they are for cross-session counting;
"same specific type ⇒ repeat" is not part of this rule (it calls "What day is it?" / "What time
is it?" a repeat).

Cost on a turn: the current message is analysed once (one forward pass: ~3 ms with ONNX Runtime
int8, ~10 ms with numpy), the earlier ones are read from their stored bytes, never re-embedded,
and `count_repeats` compares them all at once (`compare_many`: one product for the sentence
vectors and one for all the words, ~0.4 ms for 40). A process keeps its last 256 analysed
messages (keyed by text, embedder and a keyed hash, so a new key never reuses old tokens) and its
last 512 decoded stored meanings (a session's next turn reads 39 of the same 40 again).
Storage (`to_stored`, version 5, column by column): the sentence vector as float16 and each
word's vector as int8, hashes and flags, which model made the vectors (`space`), and the
word sequence's hashes (~40 bytes): ~1.2 KB a message. It describes the person's words, so the
caller encrypts it. Version 4 bytes are still read (no sequence: no slot compared); so are
version 1, 2 and 3 (as the base model's vectors: against a new message only the fingerprint
rule decides).

Pure functions: no ORM. `analyse` takes the embedder (default: `repeat_embedder()`) and a hasher
(default: crypto.keyed_hash under the primary key).

Why one module past 600 lines: analysing, comparing and storing share one feature layout (a new
feature is computed in `analyse`, compared in `compare` and `_compare_columns`, stored in
`to_stored`), so they change together; the string work, which does not, is in wording.py.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import logging
import math
import re
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from memory.conversations import lexicon
from memory.conversations.wording import (  # noqa: F401  (canonical_text … are meaning's API too)
    FRAMES,
    FUNCTION_WORDS,
    PARTICLES,
    PRESENCE,
    REQUEST,
    WORD,
    canonical_text,
    frame_of,
    is_question,
    names_of,
    negation_scopes,
    particles_flip,
    particles_of,
    plain_word,
    seeking,
    small_talk,
    spelling,
    stem,
    tidy,
)
from memory.core import embeddings

logger = logging.getLogger(__name__)

# Encoder layer whose token states describe the content words (1-6; 6 is the last).
WORD_LAYER = 6
DIM = 384


class Word(NamedTuple):
    """One content word of a message: which word (keyed hash), what kind, what it is near.
    (A named tuple: a turn decodes ~200 of them from storage, and it builds 10× faster than a
    frozen dataclass.)"""

    token: int  # keyed hash of the canonical word, 32 bits
    classes: int  # bit i: member of the i-th class of lexicon.CLASSES ("who" also for names)
    negated: bool  # inside the scope of a negation ("I don't WANT to go HOME")
    opposites: tuple[int, ...]  # keyed hashes of its antonyms
    vector: np.ndarray  # unit float32 (384,): its tokens' states after WORD_LAYER, averaged


@dataclass(frozen=True)
class MessageMeaning:
    """What the comparison needs of one message, computed once, when the message is first seen."""

    vector: np.ndarray  # unit float32 (384,): MiniLM of the canonical text
    words: tuple[Word, ...] = ()
    question: bool = False
    presence: bool = False  # asks where someone or something is, or when they come
    request: bool = False  # asks for something (want, need, can I, please)
    negations: int = 0  # negations that deny (not "I can't find"), at most 15
    frame: int = -1  # index in FRAMES of what it asks (where, what, when, …); -1: not known
    particles: int = 0  # which direction particles it says (wording.PARTICLES: in, out, on, …)
    # Which model's vectors these are (the embedder's `space`: 0 the base MiniLM, else from the
    # hash of the adapter merged into it). Vectors of two spaces are never compared.
    space: int = 0
    # Only greetings, thanks, yes or no, pleasantries (wording.small_talk): never a repeat by
    # meaning alone.
    small_talk: bool = False
    # Every word of the canonical text in order (function words and numbers too, fillers such as
    # "really", "so", "oh" left out), each a keyed hash as `Word.token` is (a content word's hash
    # is its `Word.token`): what tells two statements of one frame apart (`other_slot`). Empty
    # for rows stored before version 5: the frame is unknown and no slot is compared.
    sequence: tuple[int, ...] = ()

    # Arrays of the words, built once per message (a stored meaning is compared ~40 times).
    @cached_property
    def word_matrix(self) -> np.ndarray:
        if not self.words:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([w.vector for w in self.words])

    @cached_property
    def word_tokens(self) -> np.ndarray:
        return np.array([w.token for w in self.words], dtype=np.uint32)

    @cached_property
    def word_classes(self) -> np.ndarray:
        return np.array([w.classes for w in self.words], dtype=np.int64)

    @cached_property
    def verdicts(self) -> dict:
        """Verdicts of comparisons of this (current) message with stored ones, kept by the caller
        (memory/conversations/repeats.py): the exchange write after a /context call compares the
        same message with the same rows again."""
        return {}


_CLASS_BITS = {name: 1 << i for i, name in enumerate([*lexicon.CLASSES, "name"])}
_NAME_BIT = _CLASS_BITS["name"]
# Each class member's bits, once (a word may be in several classes: "fish" is food and animal).
_WORD_CLASSES: dict[str, int] = {}
for _name, _members in lexicon.CLASSES.items():
    for _member in _members:
        _WORD_CLASSES[_member] = _WORD_CLASSES.get(_member, 0) | _CLASS_BITS[_name]
_OPPOSITES: dict[str, list[str]] = {}
for _pair in lexicon.ANTONYMS:
    _a, _b = sorted(_pair)
    _OPPOSITES.setdefault(_a, []).append(_b)
    _OPPOSITES.setdefault(_b, []).append(_a)


def _default_hasher(word: str) -> int:
    from memory.core import crypto

    return int(crypto.keyed_hash(word, purpose="meaning-word")[:8], 16)


REPEAT_EMBEDDERS = ("onnx-int8", "onnx-fp32", "numpy")
# The repeat check's LoRA adapter for MiniLM (bench/repetition_train.py; issue 17, round four),
# merged into the weights of its runners only: long-term memory search keeps the base model.
REPEAT_ADAPTER = embeddings.REPEAT_ADAPTER
repeat_adapter = embeddings.repeat_adapter  # the file, unless CLARA_REPEAT_ADAPTER is off


_repeat_embedders: dict[str, object] = {}
_repeat_lock = threading.Lock()


def repeat_embedder():
    """The process-wide embedder of the repeat check, named by settings.CLARA_REPEAT_EMBEDDER:
    "onnx-int8" (default), "onnx-fp32" (memory/core/onnx_minilm.py) or "numpy"
    (memory.core.embeddings.MiniLMEmbedder). Without onnxruntime, or when its graph cannot be
    built, it falls back to "numpy" and says so in the log, once."""
    from django.conf import settings

    name = str(getattr(settings, "CLARA_REPEAT_EMBEDDER", "onnx-int8")).strip().lower()
    embedder = _repeat_embedders.get(name)
    if embedder is not None:
        return embedder
    if name not in REPEAT_EMBEDDERS:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            f"CLARA_REPEAT_EMBEDDER={name!r}: expected one of {', '.join(REPEAT_EMBEDDERS)}"
        )
    with _repeat_lock:
        if name not in _repeat_embedders:
            _repeat_embedders[name] = _make_repeat_embedder(name)
        return _repeat_embedders[name]


def _make_repeat_embedder(name: str):
    from memory.core.embeddings import MiniLMEmbedder

    if name.startswith("onnx-"):
        try:
            from memory.core.onnx_minilm import OnnxMiniLM

            embedder = OnnxMiniLM(name.removeprefix("onnx-"), adapter=repeat_adapter())
            embedder.load()
            return embedder
        except Exception:  # onnxruntime or onnx missing, or the graph could not be written
            logger.warning(
                "repeat check: ONNX Runtime unavailable, using the numpy forward pass",
                exc_info=True,
            )
    embedder = MiniLMEmbedder(adapter=repeat_adapter())
    embedder.load()
    return embedder


# Recently analysed messages of this process, by (text, embedder, key): a person often says the
# same words again, and the exchange write and the turn's context may both analyse one message.
ANALYSED_CACHE_SIZE = 256
_analysed: collections.OrderedDict[tuple, MessageMeaning] = collections.OrderedDict()
_analysed_lock = threading.Lock()


def analyse(message: str, *, embedder=None, hasher=None) -> MessageMeaning:
    """The meaning of one message: one forward pass of MiniLM, nothing else. `embedder`
    defaults to `repeat_embedder()`. With the default hasher the result is kept in a small
    per-process LRU (`ANALYSED_CACHE_SIZE`), keyed also by the embedder and by a keyed hash of
    a fixed probe, so a new encryption key or another embedder never reuses an old result."""
    if embedder is None:
        embedder = repeat_embedder()
    if hasher is not None:
        return _analyse(message, embedder, hasher)
    key = (message, id(embedder), _default_hasher("\x00probe"))
    with _analysed_lock:
        meaning = _analysed.get(key)
        if meaning is not None:
            _analysed.move_to_end(key)
            return meaning
    meaning = _analyse(message, embedder, _default_hasher)
    with _analysed_lock:
        _analysed[key] = meaning
        while len(_analysed) > ANALYSED_CACHE_SIZE:
            _analysed.popitem(last=False)
    return meaning


def _analyse(message: str, embedder, hasher) -> MessageMeaning:
    text = canonical_text(message)
    vector, states, encoding = embedder.encode_with_tokens(text, layer=WORD_LAYER)
    names = names_of(message)
    spans = [(m.start(), m.end(), plain_word(m.group(0))) for m in WORD.finditer(text)]
    plain = [w for _, _, w in spans]
    negated = negation_scopes(plain)
    # Each content word's tokens (real tokens inside its characters), then all the words'
    # vectors in one product: a (words × tokens) averaging matrix times the states.
    tokens = [
        (i, s, e)
        for i, ((s, e), w) in enumerate(zip(encoding.offsets, encoding.word_ids, strict=True))
        if e > s and w is not None
    ]
    chosen: dict[str, tuple[int, list[int]]] = {}
    for index, (start, end, word) in enumerate(spans):
        if word in FUNCTION_WORDS or word in chosen:
            continue
        rows = [i for i, s, e in tokens if s >= start and e <= end]
        if rows:
            chosen[word] = (index, rows)
    words: list[Word] = []
    if chosen:
        averaging = np.zeros((len(chosen), len(states)), dtype=np.float32)
        for k, (_, rows) in enumerate(chosen.values()):
            averaging[k, rows] = 1.0 / len(rows)
        matrix = averaging @ states
        matrix /= np.maximum(np.sqrt(np.square(matrix).sum(axis=1, keepdims=True)), 1e-12)
        for k, (word, (index, _)) in enumerate(chosen.items()):
            classes = _WORD_CLASSES.get(word, 0)
            if word in names:
                classes |= _NAME_BIT
            words.append(
                Word(
                    token=hasher(stem(word)),
                    classes=classes,
                    negated=negated[index],
                    opposites=tuple(hasher(stem(o)) for o in _OPPOSITES.get(word, ())),
                    vector=matrix[k],
                )
            )
    question = is_question(text)
    sequence = tuple(
        hasher(stem(w))
        for w in (plain_word(m.group(0)) for m in _SEQUENCE_WORD.finditer(text))
        if w not in FILLERS
    )[:255]
    return MessageMeaning(
        vector=vector.astype(np.float32),
        words=tuple(words),
        question=question,
        frame=frame_of(text),
        particles=particles_of(plain),
        presence=PRESENCE.search(text) is not None,
        request=REQUEST.search(text) is not None,
        negations=min(
            15,
            sum(1 for i, w in enumerate(plain) if w in lexicon.NEGATIONS and not seeking(plain, i)),
        ),
        space=int(getattr(embedder, "space", 0)),
        small_talk=small_talk(plain, question=question),
        sequence=sequence,
    )


# A word of the sequence: a word as `WORD` finds it, or a number ("at 10", "in 1962").
_SEQUENCE_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+")
# Words that say how much or how surely, or only fill: a person who says it again says more of
# them ("I really miss him, so much"), and they are no slot of the frame.
FILLERS = frozenset(
    """
    really so very ever just oh ooh ah well love dear quite such all now honestly truly
    terribly awfully always still again
    """.split()
)


# --- Comparing two messages -----------------------------------------------------------------

# A word at least this close (cosine of the words' states) to a word of the other message says
# the same thing there. Same canonical word: 1.
MATCH = 0.75


# The detector: a logistic regression over `Comparison.features()`, fitted by
# bench/repetition_fit.py on the tuning half of bench/repetition/pairs.jsonl (pairs that are
# neither opposites nor fingerprint matches, which the rule decides by itself). Together they
# say what the features mean: more alike in all three likenesses, likelier "repeat"; a class
# conflict or another wh-question, less (tests/memory/test_meaning.py). One weight alone says
# little now that the likenesses also enter as products.
_COMPARED = (
    "cosine",  # the two sentence vectors
    "alignment",  # the worst-found content word of either message
    "substitution",  # likeness of the words swapped between the two (1: none swapped)
    "class_conflict",  # a different member of one closed class (husband / daughter)
    "asks_other",  # same subject, one asks where it is, the other says something else
    "other_question",  # two wh-questions about one thing (what's it called / where is it)
    "unaligned",  # one message has no content words at all
)
# The three likenesses, squared and multiplied in pairs ("a*b"): a linear weight on each alone
# says "more alike, more likely the same", but a high cosine means less when a word is swapped
# (alignment low) than when every word is found, and a pair that is alike in all three is surer
# than the sum says. Measured on 10 splits (docs/benchmarks.md, issue 17 round three): held-out
# 0.90 / 0.58 -> 0.93 / 0.61 (precision / recall), spread halved; recall at precision 0.9
# with the best cut 0.65 -> 0.68.
_LIKENESSES = ("cosine", "alignment", "substitution")
FEATURES = _COMPARED + tuple(f"{a}*{b}" for i, a in enumerate(_LIKENESSES) for b in _LIKENESSES[i:])


def feature_values(get) -> list:
    """The detector's inputs in the order of `FEATURES`; `get(name)` gives one compared value
    (a float for one pair, an array for many)."""
    values = {name: get(name) for name in _COMPARED}
    for name in _LIKENESSES:  # cosines below 0 (rare) say no more than 0, and keep products sane
        values[name] = np.clip(values[name], 0.0, 1.0)
    out = []
    for name in FEATURES:
        a, _, b = name.partition("*")
        out.append(values[a] * values[b] if b else values[a])
    return out


WEIGHTS = (4.4, -2.8, 6.7, 0.3, -0.7, -2.1, 4.6, 7.0, 0.8, 10.2, 2.7, 1.0, -13.4)
BIAS = -6.0
CUT = 0.42  # probability at least this: the same meaning (issue 31: with the same-frame veto)


@dataclass(frozen=True)
class Settings:
    """The tunable part of the rule. `weights` and `bias` (with `cut`) are the detector's
    (bench/repetition_fit.py); with `weights=None` the first version's rule runs instead:
    no veto and cosine + coverage_weight × coverage ≥ threshold."""

    threshold: float = 0.74
    coverage_weight: float = 0.25
    substitution_floor: float = 0.2  # first version: a swapped word this unlike: not a repeat
    weights: tuple[float, ...] | None = WEIGHTS
    bias: float = BIAS
    cut: float = CUT


DEFAULT = Settings()
FIRST_VERSION = Settings(weights=None)


@dataclass(frozen=True)
class Comparison:
    """How two messages relate. `score` ranks; the vetoes say "different whatever the score"."""

    cosine: float  # of the two sentence vectors
    coverage: float  # how well the longer message's words are found in the shorter one (0-1)
    substitution: float  # likeness of a lone word swapped for another (1: none swapped)
    conflict: bool  # class_conflict or asks_other (kept for callers of the first version)
    opposite: bool  # same words, one of them negated or swapped for its antonym
    alignment: float = 1.0  # the worst-found content word of either message (0-1)
    class_conflict: bool = False  # each names a different member of one closed class
    asks_other: bool = False  # same subject; one asks where / when it comes, the other not
    other_question: bool = False  # two different wh-questions about a word both name
    mood: bool = False  # one asks, the other states
    unaligned: bool = False  # one of them has no content words (coverage says nothing)
    # The two were analysed by different models (`MessageMeaning.space`: a row stored before
    # the adapter): their likenesses mean nothing, so the meaning rule says no and only the
    # fingerprint rule can call them a repeat (`is_repeat`).
    other_space: bool = False
    # One of them is small talk (`MessageMeaning.small_talk`): the adapted model puts "Thank you",
    # "Okay" and "Nice day" close together, and saying those again is not a repeat to count.
    small_talk: bool = False
    # Two statements of one frame that differ in its slot (`other_slot`): "My brother lives in
    # Leeds" / "My daughter lives in Leeds", "The soup is too salty" / "The soup is too thick".
    other_slot: bool = False
    # Of those, the ones told by their word sequences alone (`_other_slot`): what overrides a
    # fingerprint match too. Not a class conflict alone: while keys rotate, one word's hashes
    # differ between an old row and a new one, and the fingerprint (compared under every key)
    # must still find the same words.
    slot_swapped: bool = False

    def features(self) -> np.ndarray:
        """The detector's inputs, in the order of `FEATURES`."""
        return np.array(feature_values(lambda name: float(getattr(self, name))))

    def probability(self, settings: Settings = DEFAULT) -> float:
        """The detector's probability that the two say the same (opposites aside)."""
        weights = settings.weights if settings.weights is not None else WEIGHTS
        z = settings.bias + float(np.dot(weights, self.features()))
        return 1.0 / (1.0 + math.exp(-z))

    def score(self, settings: Settings = DEFAULT) -> float:
        """What ranks pairs: the detector's probability, or the first version's score."""
        if settings.weights is not None:
            return self.probability(settings)
        return self.cosine + settings.coverage_weight * self.coverage

    def same_meaning(self, settings: Settings = DEFAULT) -> bool:
        if self.opposite or self.other_space or self.small_talk or self.other_slot:
            return False
        if settings.weights is not None:
            if self.unaligned and (
                self.cosine < settings.threshold - settings.coverage_weight or self.other_question
            ):
                # No content words on one side: the sentence vector is the only evidence, and
                # short questions of different kinds ("Where am I?" / "What time is it?") sit
                # close in it. Asked of such pairs, the first version's bound still holds; and
                # with no content word on either side, two different wh-questions are two asks
                # (the adapted model puts "Where am I?" / "Who are you?" at 0.53).
                return False
            return self.probability(settings) >= settings.cut
        if self.conflict or self.substitution < settings.substitution_floor:
            return False
        return self.score(settings) >= settings.threshold


@functools.lru_cache(maxsize=8)
def least_cosine(settings: Settings = DEFAULT) -> float:
    """A sentence cosine below which the detector never says "the same", whatever the other
    features: callers skip the word comparison for such pairs.

    Exact over what the features can be together (they are clipped to [0, 1]):
    - one side without content words (`unaligned`): alignment and substitution are 1, no other
      flag can be set, and `same_meaning` asks a cosine of at least threshold - coverage_weight;
    - every lone word matched (`substitution` 1): alignment anywhere in [0, 1];
    - a word swapped on each side: both the swapped words' likeness and the worst-found word
      are below MATCH (a lone word is one whose best match is below MATCH).
    For a given cosine the score is a quadratic in (alignment, substitution), maximised over
    each case by its corners and stationary points. Cosines are scanned from 0 in steps of
    0.001; the step before the first that can reach the cut is returned, so the bound errs low
    (one more pair compared), never high."""
    weights = dict(zip(FEATURES, settings.weights, strict=True))

    def w(name: str) -> float:
        return weights.get(name, 0.0)

    target = math.log(settings.cut / (1.0 - settings.cut))
    flags = sum(max(w(name), 0.0) for name in ("class_conflict", "asks_other", "other_question"))
    h_aa, h_ss = w("alignment*alignment"), w("substitution*substitution")
    h_as = w("alignment*substitution")
    unaligned_from = settings.threshold - settings.coverage_weight
    for step in range(1001):
        c = step / 1000
        constant = settings.bias + w("cosine") * c + w("cosine*cosine") * c * c
        g_a = w("alignment") + w("cosine*alignment") * c
        g_s = w("substitution") + w("cosine*substitution") * c
        quadratic = (g_a, g_s, h_aa, h_ss, h_as)
        best = max(
            _box_max(*quadratic, a_high=1.0, s_low=1.0, s_high=1.0) + flags,
            _box_max(*quadratic, a_high=MATCH, s_low=0.0, s_high=MATCH) + flags,
            _box_max(*quadratic, a_high=1.0, s_low=1.0, s_high=1.0, a_low=1.0) + w("unaligned")
            if c >= unaligned_from
            else -math.inf,
        )
        if constant + best >= target:
            return -1.0 if step == 0 else c - 0.001
    return 1.0


def _box_max(g_a, g_s, h_aa, h_ss, h_as, *, a_high, s_low, s_high, a_low=0.0) -> float:
    """The maximum of g_a a + g_s s + h_aa a² + h_ss s² + h_as a s over the box."""
    points = [(a, s) for a in (a_low, a_high) for s in (s_low, s_high)]
    for s in (s_low, s_high):  # stationary in a along an edge
        if h_aa:
            points.append((-(g_a + h_as * s) / (2 * h_aa), s))
    for a in (a_low, a_high):
        if h_ss:
            points.append((a, -(g_s + h_as * a) / (2 * h_ss)))
    determinant = 4 * h_aa * h_ss - h_as * h_as
    if determinant:
        points.append(
            (
                (h_as * g_s - 2 * h_ss * g_a) / determinant,
                (h_as * g_a - 2 * h_aa * g_s) / determinant,
            )
        )
    return max(
        g_a * a + g_s * s + h_aa * a * a + h_ss * s * s + h_as * a * s
        for a, s in points
        if a_low <= a <= a_high and s_low <= s <= s_high
    )


def compare(earlier: MessageMeaning, current: MessageMeaning) -> Comparison:
    """Compare two analysed messages. Pure arithmetic on stored features: no model call."""
    a, b = earlier.words, current.words
    cosine = float(earlier.vector @ current.vector)

    class_conflict = False
    classes_a = int(np.bitwise_or.reduce(earlier.word_classes)) if a else 0
    classes_b = int(np.bitwise_or.reduce(current.word_classes)) if b else 0
    both = classes_a & classes_b
    while both and not class_conflict:
        bit = both & -both
        both ^= bit
        in_a = set(earlier.word_tokens[(earlier.word_classes & bit) != 0].tolist())
        in_b = set(current.word_tokens[(current.word_classes & bit) != 0].tolist())
        class_conflict = not in_a & in_b

    same_mood = earlier.question == current.question
    frames = (earlier.frame, current.frame)
    # Same subject, another question: two different wh-questions about a word they share
    # ("What's my dog called?" / "Where's my dog?"; not "Where am I?" / "What is this place?").
    other_question = min(frames) >= 2 and frames[0] != frames[1]
    mood = not same_mood
    if not a or not b:
        # Nothing to align (every word a function word): the sentence vector decides, and
        # "I like it here" / "I don't like it here" differ by a negation alone.
        opposite = (
            not a
            and not b
            and same_mood
            and (
                (earlier.negations - current.negations) % 2 == 1
                or particles_flip(earlier.particles, current.particles)
            )
        )
        return Comparison(
            cosine,
            1.0,
            1.0,
            class_conflict,
            opposite,
            1.0,
            class_conflict,
            False,
            # Neither says a content word: the wh-word is all they ask, so two different ones
            # ("Where am I?" / "Who are you?") are two questions (`same_meaning` vetoes them).
            not a and not b and other_question,
            mood,
            True,
            earlier.space != current.space,
            earlier.small_talk or current.small_talk,
        )
    sims, best_a, best_b = _word_sims(earlier, current)
    coverage = float(best_b.mean() if len(b) >= len(a) else best_a.mean())
    alignment = float(min(best_a.min(), best_b.min()))

    opposite = same_mood and (
        _opposite(a, b, sims, best_a, best_b)
        # Every word found, and the way differs: "Let the cat in" / "Let the cat out".
        or (alignment >= MATCH and particles_flip(earlier.particles, current.particles))
    )

    # Same thing, another ask: one asks where it is (or when they come), the other says
    # something else about it ("My purse is empty" / "Where's my purse?").
    asks_other = False
    if bool(earlier.presence) != bool(current.presence) and (best_a >= MATCH).any():
        asks_other = not (current if earlier.presence else earlier).request

    # Substitution: beyond the shared words, a word on each side that the other lacks, unlike
    # each other: the same frame asks for something else ("Is the window open?" / "Is the shop
    # open?"). Words of a class the other message also names are the conflict check's to judge.
    lone_a = (best_a < MATCH) & ((earlier.word_classes & classes_b) == 0)
    lone_b = (best_b < MATCH) & ((current.word_classes & classes_a) == 0)
    substitution = 1.0
    if lone_a.any() and lone_b.any():
        substitution = float(sims[np.ix_(lone_a, lone_b)].max())
    statements = not earlier.question and not current.question
    slot_swapped = statements and _other_slot(earlier, current, sims)
    return Comparison(
        cosine,
        coverage,
        substitution,
        class_conflict or asks_other,
        opposite,
        alignment,
        class_conflict,
        asks_other,
        other_question and bool((best_a >= MATCH).any()),
        mood,
        other_space=earlier.space != current.space,
        small_talk=earlier.small_talk or current.small_talk,
        other_slot=slot_swapped or (statements and class_conflict),
        slot_swapped=slot_swapped,
    )


# Same-frame statements (issue 31, item 8). Two statements share a frame when their word
# sequences (`MessageMeaning.sequence`, fillers left out) are the same but for one stretch of
# at most `SLOT_WORDS` words on each side, with at least `FRAME_WORDS` words the same around
# it: "My brother lives in [Leeds]" / "... in [Bristol]". The stretch is the slot, and unless a
# content word in it on one side is this alike (the cosine of their token states) to one on
# the other, or the same word, the second says something else in the same frame: another
# object, person, place, time, quality or number. Words said only on one side ("I really do
# miss him, so much") are no slot: a repeat that says more is still a repeat. Chosen on the
# tuning half of bench/repetition/pairs.jsonl (docs/benchmarks.md).
SLOT_LIKENESS = 0.8
SLOT_WORDS = 3
FRAME_WORDS = 2


def _other_slot(earlier: MessageMeaning, current: MessageMeaning, sims: np.ndarray) -> bool:
    """Whether the two say one frame with something else in its slot (`SLOT_LIKENESS`).
    `sims` is `_word_sims`'s likeness of the earlier message's words to the current's."""
    a, b = earlier.sequence, current.sequence
    if not a or not b or a == b or abs(len(a) - len(b)) >= SLOT_WORDS:
        return False
    # Cheap bounds first (most pairs stop here): one frame means a common start and end that
    # leave at most SLOT_WORDS words between them on each side.
    shortest = min(len(a), len(b))
    start = 0
    while start < shortest and a[start] == b[start]:
        start += 1
    end = 0
    while end < shortest - start and a[-1 - end] == b[-1 - end]:
        end += 1
    if start + end < FRAME_WORDS or max(len(a), len(b)) - start - end > SLOT_WORDS:
        return False
    # Exactly one stretch replaced, nothing else moved ("my brother is poorly" / "my brother's
    # poorly, he's poorly" is an insertion and a deletion, not a slot).
    changed = [
        op
        for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        if op[0] != "equal"
    ]
    if len(changed) != 1 or changed[0][0] != "replace":
        return False
    _, i1, i2, j1, j2 = changed[0]
    # The slot's content words (their hashes are the words' tokens) and how alike they are.
    in_a = np.isin(earlier.word_tokens, np.array(a[i1:i2], dtype=np.uint32))
    in_b = np.isin(current.word_tokens, np.array(b[j1:j2], dtype=np.uint32))
    if in_a.any() and in_b.any():
        if int(np.bitwise_or.reduce(earlier.word_classes[in_a])) & int(
            np.bitwise_or.reduce(current.word_classes[in_b])
        ):
            return True  # two members of one class in the slot: "on Tuesday" / "on Friday"
        return float(sims[np.ix_(in_a, in_b)].max()) < SLOT_LIKENESS
    # No content word in the slot on one side or both: a number ("in 1961" / "in 1965"), a
    # pronoun or a place word ("here" / "there") said instead: something else in the frame.
    return True


def _word_sims(
    earlier: MessageMeaning, current: MessageMeaning
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pair of words' likeness (the same canonical word: 1), and each word's best match."""
    sims = earlier.word_matrix @ current.word_matrix.T
    sims[earlier.word_tokens[:, None] == current.word_tokens[None, :]] = 1.0
    return sims, sims.max(axis=1), sims.max(axis=0)


def opposite(earlier: MessageMeaning, current: MessageMeaning) -> bool:
    """`compare(earlier, current).opposite`, computing only that: all the repeat rule asks of a
    pair the fingerprint rule already matched (`is_repeat`). Most such pairs have no negated
    word and no antonym on either side, and then nothing can make them opposites."""
    if earlier.question != current.question:
        return False
    a, b = earlier.words, current.words
    flip = particles_flip(earlier.particles, current.particles)
    if not a or not b:
        return not a and not b and ((earlier.negations - current.negations) % 2 == 1 or flip)
    if (
        not flip
        and not any(w.negated or w.opposites for w in a)
        and not any(w.negated or w.opposites for w in b)
    ):
        return False
    sims, best_a, best_b = _word_sims(earlier, current)
    if _opposite(a, b, sims, best_a, best_b):
        return True
    return flip and float(min(best_a.min(), best_b.min())) >= MATCH


def other_slot(earlier: MessageMeaning, current: MessageMeaning) -> bool:
    """`compare(earlier, current).slot_swapped`, computing only that: for a pair the fingerprint
    rule already matched (`is_repeat`). Only two statements can differ in a frame's slot."""
    if earlier.question or current.question or not earlier.words or not current.words:
        return False
    if not earlier.sequence or not current.sequence or earlier.sequence == current.sequence:
        return False
    return _other_slot(earlier, current, _word_sims(earlier, current)[0])


def _opposite(a, b, sims: np.ndarray, best_a: np.ndarray, best_b: np.ndarray) -> bool:
    """Every word of the shorter message has its counterpart, and some counterpart is negated
    on one side only, or is its antonym (not both: "I feel poorly" / "I'm not well"). The
    caller checks that both are questions or both statements: a question and a statement are
    not opposites ("Has the dog been walked?" / "The dog hasn't been walked" voice one worry)."""
    flips = False
    short, other, best = (a, b, best_a) if len(a) <= len(b) else (b, a, best_b)
    short_sims = sims if short is a else sims.T
    for i, word in enumerate(short):
        antonym = [j for j, o in enumerate(other) if o.token in word.opposites]
        if antonym:
            j = antonym[0]
            flips |= word.negated == other[j].negated
        elif best[i] >= MATCH:
            j = int(short_sims[i].argmax())
            flips |= word.negated != other[j].negated
        else:
            return False
    return flips


def compare_many(earlier: Sequence[MessageMeaning], current: MessageMeaning) -> list[Comparison]:
    """`compare(e, current)` for each earlier message, the same numbers, in one pass: one
    matrix product for all the sentence vectors and one for all the words (a session's 40
    earlier messages cost about what 5 separate comparisons do). Pure arithmetic."""
    columns = _compare_columns(earlier, current)
    names = [f.name for f in dataclasses.fields(Comparison)]
    return [
        Comparison(**{name: columns[name][k].item() for name in names}) for k in range(len(earlier))
    ]


def _compare_columns(
    earlier: Sequence[MessageMeaning], current: MessageMeaning
) -> dict[str, np.ndarray]:
    """Every field of `Comparison` for each earlier message, as one array per field."""
    count = len(earlier)
    columns = {
        "cosine": np.zeros(count),
        "coverage": np.ones(count),
        "substitution": np.ones(count),
        "conflict": np.zeros(count, dtype=bool),
        "opposite": np.zeros(count, dtype=bool),
        "alignment": np.ones(count),
        "class_conflict": np.zeros(count, dtype=bool),
        "asks_other": np.zeros(count, dtype=bool),
        "other_question": np.zeros(count, dtype=bool),
        "mood": np.array([e.question != current.question for e in earlier], dtype=bool),
        "unaligned": np.zeros(count, dtype=bool),
        "other_space": np.array([e.space != current.space for e in earlier], dtype=bool),
        "small_talk": np.array([e.small_talk or current.small_talk for e in earlier], dtype=bool),
        "other_slot": np.zeros(count, dtype=bool),
        "slot_swapped": np.zeros(count, dtype=bool),
    }
    if not count:
        return columns
    m = len(current.words)
    sizes = np.array([len(e.word_tokens) for e in earlier])
    for k in np.flatnonzero((sizes == 0) | (m == 0)):
        one = compare(earlier[k], current)
        for name in columns:
            columns[name][k] = getattr(one, name)
    aligned = np.flatnonzero(sizes > 0) if m else np.zeros(0, dtype=np.intp)
    if not len(aligned):
        return columns

    pairs = [earlier[k] for k in aligned]
    n = sizes[aligned]
    starts = np.concatenate([[0], np.cumsum(n)[:-1]])
    owner = np.repeat(np.arange(len(pairs)), n)
    tokens_a = np.concatenate([e.word_tokens for e in pairs])
    classes_a = np.concatenate([e.word_classes for e in pairs])
    tokens_b, classes_b = current.word_tokens, current.word_classes

    sims = np.concatenate([e.word_matrix for e in pairs]) @ current.word_matrix.T
    same_word = tokens_a[:, None] == tokens_b[None, :]
    sims[same_word] = 1.0
    best_a = sims.max(axis=1)
    best_b = np.maximum.reduceat(sims, starts, axis=0)  # (pairs, m)

    columns["cosine"] = np.stack([e.vector for e in earlier]) @ current.vector
    columns["coverage"][aligned] = np.where(
        m >= n, best_b.mean(axis=1), np.add.reduceat(best_a, starts) / n
    )
    columns["alignment"][aligned] = np.minimum(
        np.minimum.reduceat(best_a, starts), best_b.min(axis=1)
    )

    # Class conflict: a class both name, with no word of it in common.
    pair_classes = np.bitwise_or.reduceat(classes_a, starts)
    all_b = int(np.bitwise_or.reduce(classes_b))
    shared_rows = np.bitwise_or.reduce(
        np.where(same_word, classes_a[:, None] & classes_b[None, :], 0), axis=1
    )
    shared = np.bitwise_or.reduceat(shared_rows, starts)
    class_conflict = (pair_classes & all_b & ~shared) != 0

    # Substitution: the likeness of the lone words (see `compare`).
    lone_a = (best_a < MATCH) & ((classes_a & all_b) == 0)
    lone_b = (best_b < MATCH) & ((classes_b[None, :] & pair_classes[:, None]) == 0)
    lone = np.where(lone_a[:, None] & lone_b[owner], sims, -np.inf)
    substitution = np.maximum.reduceat(lone.max(axis=1), starts)
    columns["substitution"][aligned] = np.where(np.isfinite(substitution), substitution, 1.0)

    found = np.maximum.reduceat(best_a, starts) >= MATCH
    presence = np.array([bool(e.presence) for e in pairs])
    request = np.array([bool(e.request) for e in pairs])
    asks_other = (presence != bool(current.presence)) & found
    asks_other &= np.where(presence, not current.request, ~request)
    frames = np.array([e.frame for e in pairs])
    columns["other_question"][aligned] = (
        (np.minimum(frames, current.frame) >= 2) & (frames != current.frame) & found
    )
    columns["class_conflict"][aligned] = class_conflict
    if not current.question:
        # Same-frame statements (`_other_slot`): the sequences are compared for pairs of
        # statements only (most stop at its cheap bounds).
        statements = np.array([not e.question for e in pairs])
        swapped = np.zeros(len(pairs), dtype=bool)
        for p in np.flatnonzero(statements):
            rows = slice(starts[p], starts[p] + n[p])
            swapped[p] = _other_slot(pairs[p], current, sims[rows])
        columns["slot_swapped"][aligned] = swapped
        columns["other_slot"][aligned] = swapped | (statements & class_conflict)
    columns["asks_other"][aligned] = asks_other
    columns["conflict"][aligned] = class_conflict | asks_other

    # Opposites need every word of the shorter side found, or an antonym: check those only.
    antonyms = set().union(*(w.opposites for w in current.words))
    antonym = (
        np.maximum.reduceat(np.isin(tokens_a, list(antonyms)).astype(np.int8), starts) > 0
        if antonyms
        else np.zeros(len(pairs), dtype=bool)
    )
    short_found = np.where(n <= m, np.minimum.reduceat(best_a, starts), best_b.min(axis=1)) >= MATCH
    same_mood = ~columns["mood"][aligned]
    for p in np.flatnonzero(same_mood & (short_found | antonym | _has_opposites(pairs))):
        rows = slice(starts[p], starts[p] + n[p])
        columns["opposite"][aligned[p]] = _opposite(
            pairs[p].words, current.words, sims[rows], best_a[rows], best_b[p]
        )
    if current.particles or any(e.particles for e in pairs):
        flips = np.array([particles_flip(e.particles, current.particles) for e in pairs])
        columns["opposite"][aligned] |= same_mood & flips & (columns["alignment"][aligned] >= MATCH)
    return columns


def _has_opposites(meanings: Sequence[MessageMeaning]) -> np.ndarray:
    return np.array([any(w.opposites for w in e.words) for e in meanings], dtype=bool)


def same_meaning(
    earlier: MessageMeaning, current: MessageMeaning, settings: Settings = DEFAULT
) -> bool:
    """Whether `current` says again what `earlier` said, by meaning."""
    return compare(earlier, current).same_meaning(settings)


def is_repeat(
    earlier: MessageMeaning | None,
    current: MessageMeaning,
    *,
    fingerprint_match: bool,
    settings: Settings = DEFAULT,
) -> bool:
    """The repeat rule: the keyed-word fingerprint rule (memory/conversations/repetition.py: Jaccard above 0.6,
    computed by the caller on stored tokens) OR the same meaning.

    The exceptions to the OR: a fingerprint match between opposites ("I want to go home" /
    "I don't want to go home": the same content words) or between two statements of one frame
    with another slot ("I left my blue coat at the church hall" / "... at the village hall")
    is not a repeat. `earlier` may be None
    for a row stored before meanings were (the fingerprint alone decides then).
    """
    if earlier is None:
        return fingerprint_match
    if fingerprint_match:
        # A repeat unless opposites or the same frame with another slot, which never mean the
        # same (`same_meaning`): those checks alone decide, without the rest of the comparison.
        return not opposite(earlier, current) and not other_slot(earlier, current)
    return compare(earlier, current).same_meaning(settings)


def count_repeats(
    current: MessageMeaning,
    earlier: Sequence[tuple[MessageMeaning | None, bool]],
    settings: Settings = DEFAULT,
) -> int:
    """How many earlier messages of the session this one repeats: `earlier` holds each earlier
    message's stored meaning (None if it has none) and whether the fingerprint rule matched it."""
    stored = [i for i, (m, _) in enumerate(earlier) if m is not None]
    fingerprint = np.array([bool(f) for _, f in earlier], dtype=bool)
    repeats = fingerprint.copy()  # a row without a stored meaning: the fingerprint decides
    if stored:
        columns = _compare_columns([earlier[i][0] for i in stored], current)
        repeats[stored] = (
            fingerprint[stored] & ~columns["opposite"] & ~columns["slot_swapped"]
        ) | _same_meaning_columns(columns, settings)
    return int(repeats.sum())


def _same_meaning_columns(columns: dict[str, np.ndarray], settings: Settings) -> np.ndarray:
    """`Comparison.same_meaning` over the columns of `_compare_columns`."""
    if settings.weights is None:
        score = columns["cosine"] + settings.coverage_weight * columns["coverage"]
        return (
            ~columns["conflict"]
            & ~columns["opposite"]
            & ~columns["other_space"]
            & ~columns["small_talk"]
            & ~columns["other_slot"]
            & (columns["substitution"] >= settings.substitution_floor)
            & (score >= settings.threshold)
        )
    z = np.full(len(columns["cosine"]), settings.bias)
    values = feature_values(lambda name: columns[name].astype(np.float64))
    for value, weight in zip(values, settings.weights, strict=True):
        z += weight * value
    # As `Comparison.same_meaning`: no content word on one side and a low cosine is no repeat.
    vetoed = columns["unaligned"] & (
        (columns["cosine"] < settings.threshold - settings.coverage_weight)
        | columns["other_question"]
    )
    return (
        ~columns["opposite"]
        & ~columns["other_space"]
        & ~columns["small_talk"]
        & ~columns["other_slot"]
        & ~vetoed
        & (1.0 / (1.0 + np.exp(-z)) >= settings.cut)
    )


# --- Storage ---------------------------------------------------------------------------------

# Version 4, column by column so that reading is a handful of array views, not a loop per
# word (a turn reads up to 40): header (version, word count n, flags (bits: question, presence,
# request, small talk, then negations ×16), frame + 1, particles, the vectors' space as u32:
# `MessageMeaning.space`) |
# sentence vector, float16 × 384 | tokens, u32 × n | classes, u16 × n | word flags (bit 0: negated),
# u8 × n | opposites per word, u8 × n | the opposites, u32 each | word vectors, int8 × 384 × n
# (×127, unit vectors). About 0.8 KB for the sentence and 0.4 KB a word.
# Version 3 (the same without the space: rows stored before the repeat check's adapter, issue
# 17's fourth round) is still read as the base model's (space 0). A new message's vectors come
# from the adapted model, so against such a row the meaning rule says no (`other_space`) and
# the fingerprint rule alone decides, opposites still excluded: what the memory did before
# issue 17, for at most the rest of the session that row belongs to.
# Version 2 (the same without the particles byte: rows stored before issue 17's third round)
# is still read, its particles unknown (0: the particle check never calls it an opposite, as
# before); so is version 1 (header without the frame, then per word: token, classes, flags,
# opposites count, opposites, vector), its frame unknown (-1). Old rows are not rewritten: the
# text would have to be decrypted and analysed again, and a session's rows are only compared
# within that session, which ends.
# Version 5 (issue 31, item 8) is version 4 followed by the word sequence
# (`MessageMeaning.sequence`): its length, u8, then the words' hashes, u32 each (~40 bytes). A
# version 4 row is read with no sequence: against it the frame is not compared.
STORED_VERSION = 5
_HEADER = struct.Struct("<BBBBBI")
_HEADER_V3 = struct.Struct("<BBBBB")
_HEADER_V2 = struct.Struct("<BBBB")
_HEADER_V1 = struct.Struct("<BBB")
_WORD_HEADER = struct.Struct("<IHBB")


def to_stored(meaning: MessageMeaning) -> bytes:
    """Compact bytes for the database (to be encrypted there: they describe the person's words)."""
    words = meaning.words[:255]
    opposites = [w.opposites[:255] for w in words]
    matrix = np.stack([w.vector for w in words]) if words else np.zeros((0, DIM), np.float32)
    return b"".join(
        [
            _HEADER.pack(
                STORED_VERSION,
                len(words),
                _flags(meaning),
                meaning.frame + 1,
                meaning.particles,
                meaning.space,
            ),
            meaning.vector.astype("<f2").tobytes(),
            np.array([w.token for w in words], dtype="<u4").tobytes(),
            np.array([w.classes for w in words], dtype="<u2").tobytes(),
            np.array([int(w.negated) for w in words], dtype=np.uint8).tobytes(),
            np.array([len(o) for o in opposites], dtype=np.uint8).tobytes(),
            np.array([h for o in opposites for h in o], dtype="<u4").tobytes(),
            _quantise(matrix),
            bytes([len(meaning.sequence[:255])]),
            np.array(meaning.sequence[:255], dtype="<u4").tobytes(),
        ]
    )


# Recently decoded stored meanings of this process, by their bytes: each turn of a session
# reads the same earlier messages again (turn n reads 39 of the 40 that turn n - 1 read).
DECODED_CACHE_SIZE = 512
_decoded: collections.OrderedDict[bytes, MessageMeaning] = collections.OrderedDict()


def from_stored(data: bytes | bytearray | memoryview) -> MessageMeaning:
    """The `MessageMeaning` that `to_stored` wrote. ValueError on anything else.

    A turn reads up to 40 of these: reading one checks its bytes and reads its sentence vector
    (a few µs; its words, ~25 µs more, only when a comparison needs them), and the last
    `DECODED_CACHE_SIZE` decoded are kept (a meaning is immutable), so a session's next turn
    finds most of them already decoded."""
    raw = bytes(data)
    with _analysed_lock:
        meaning = _decoded.get(raw)
        if meaning is not None:
            _decoded.move_to_end(raw)
            return meaning
    meaning = _decode(raw)
    with _analysed_lock:
        _decoded[raw] = meaning
        while len(_decoded) > DECODED_CACHE_SIZE:
            _decoded.popitem(last=False)
    return meaning


def clear_caches() -> None:
    """Forget the analysed and decoded meanings this process keeps (benchmarks, tests)."""
    with _analysed_lock:
        _analysed.clear()
        _decoded.clear()


def _decode(raw: bytes) -> MessageMeaning:
    """Check the stored bytes whole and read the sentence vector and flags; the words are read
    when first needed (`_StoredMeaning`)."""
    if not raw or raw[0] not in (2, 3, 4, STORED_VERSION):
        if raw[:1] == b"\x01":
            try:
                return _from_stored_v1(raw)
            except (struct.error, ValueError) as exc:
                raise ValueError(f"not a stored meaning: {exc}") from exc
        version = raw[0] if raw else None
        raise ValueError(f"stored meaning version {version}, expected {STORED_VERSION}")
    header = {STORED_VERSION: _HEADER, 4: _HEADER, 3: _HEADER_V3, 2: _HEADER_V2}[raw[0]]
    if len(raw) < header.size + 2 * DIM:
        raise ValueError("not a stored meaning: too short")
    _, n, flags, frame, *rest = header.unpack_from(raw, 0)
    particles = rest[0] if rest else 0
    space = rest[1] if len(rest) > 1 else 0  # before version 4: the base model's vectors
    frame -= 1
    at = header.size + 2 * DIM
    k = sum(raw[at + 7 * n : at + 8 * n])
    expected = at + 8 * n + 4 * k + DIM * n
    sequence: tuple[int, ...] = ()
    if raw[0] == STORED_VERSION:  # the word sequence follows the words
        if len(raw) <= expected:
            raise ValueError("not a stored meaning: too short")
        length = raw[expected]
        if len(raw) >= expected + 1 + 4 * length:
            sequence = struct.unpack_from(f"<{length}I", raw, expected + 1)
        expected += 1 + 4 * length
    if len(raw) != expected:
        if len(raw) > expected:
            raise ValueError(f"stored meaning has {len(raw) - expected} trailing bytes")
        raise ValueError("not a stored meaning: too short")
    if frame >= len(FRAMES):
        raise ValueError(f"stored meaning frame {frame}")
    if particles >= 1 << len(PARTICLES):
        raise ValueError(f"stored meaning particles {particles}")
    meaning = _StoredMeaning.__new__(_StoredMeaning)
    # Frozen: the fields go straight into the instance, as the dataclass's own __init__ does.
    meaning.__dict__.update(
        vector=np.frombuffer(raw, dtype="<f2", count=DIM, offset=header.size).astype(np.float32),
        question=bool(flags & 1),
        presence=bool(flags & 2),
        request=bool(flags & 4),
        small_talk=bool(flags & 8),
        negations=flags >> 4,
        frame=frame,
        particles=particles,
        space=space,
        sequence=sequence,
        _stored=(raw, at, n, k),
    )
    return meaning


class _StoredMeaning(MessageMeaning):
    """A meaning read back from `to_stored`'s bytes (already checked whole by `_decode`).

    The sentence vector and flags are read at once; the words and their arrays when first
    asked for. Most earlier messages of a session are only ever compared by their sentence
    cosine (below `repeats.cosine_floor` the words cannot make them the same), so a turn builds
    the words of the few that come close, not of every stored message (~25 µs each).
    Built only by `_decode`; otherwise a `MessageMeaning` like any other."""

    def _unpack(self) -> None:
        raw, at, n, k = self.__dict__["_stored"]
        counts = raw[at + 7 * n : at + 8 * n]
        tokens = np.frombuffer(raw, dtype="<u4", count=n, offset=at)
        classes = np.frombuffer(raw, dtype="<u2", count=n, offset=at + 4 * n).astype(np.int64)
        negated = raw[at + 6 * n : at + 7 * n]
        opposites = struct.unpack_from(f"<{k}I", raw, at + 8 * n)
        matrix = np.frombuffer(raw, dtype=np.int8, count=n * DIM, offset=at + 8 * n + 4 * k)
        matrix = matrix.astype(np.float32).reshape(n, DIM)
        norms = np.sqrt(np.square(matrix).sum(axis=1, keepdims=True))
        matrix /= np.maximum(norms, 1e-12, out=norms)
        token_list, class_list = tokens.tolist(), classes.tolist()
        words, start = [], 0
        for i in range(n):
            end = start + counts[i]
            words.append(
                Word(
                    token_list[i],
                    class_list[i],
                    bool(negated[i] & 1),
                    opposites[start:end],
                    matrix[i],
                )
            )
            start = end
        # Plain attributes from now on (each name below is a non-data descriptor).
        self.__dict__.update(
            words=tuple(words),
            word_matrix=matrix,
            word_tokens=tokens.astype(np.uint32),
            word_classes=classes,
        )

    @cached_property
    def words(self) -> tuple[Word, ...]:  # type: ignore[override]
        self._unpack()
        return self.__dict__["words"]

    @cached_property
    def word_matrix(self) -> np.ndarray:
        self._unpack()
        return self.__dict__["word_matrix"]

    @cached_property
    def word_tokens(self) -> np.ndarray:
        self._unpack()
        return self.__dict__["word_tokens"]

    @cached_property
    def word_classes(self) -> np.ndarray:
        self._unpack()
        return self.__dict__["word_classes"]


def _from_stored_v1(raw: bytes) -> MessageMeaning:
    _, count, flags = _HEADER_V1.unpack_from(raw, 0)
    at = _HEADER_V1.size
    vector = np.frombuffer(raw, dtype="<f2", count=DIM, offset=at).astype(np.float32)
    at += 2 * DIM
    words = []
    for _ in range(count):
        token, classes, word_flags, n = _WORD_HEADER.unpack_from(raw, at)
        at += _WORD_HEADER.size
        opposites = struct.unpack_from(f"<{n}I", raw, at)
        at += 4 * n
        v = np.frombuffer(raw, dtype=np.int8, count=DIM, offset=at).astype(np.float32)
        at += DIM
        v /= max(float(np.linalg.norm(v)), 1e-12)
        words.append(Word(token, classes, bool(word_flags & 1), opposites, v))
    if at != len(raw):
        raise ValueError(f"stored meaning has {len(raw) - at} trailing bytes")
    return MessageMeaning(
        vector=vector,
        words=tuple(words),
        question=bool(flags & 1),
        presence=bool(flags & 2),
        request=bool(flags & 4),
        negations=flags >> 4,
    )


def to_stored_v4(meaning: MessageMeaning) -> bytes:
    """The fourth version's bytes: version 5 without the word sequence (kept to test that rows
    stored before it are still read, their frame unknown)."""
    current = to_stored(meaning)
    return bytes([4]) + current[1 : len(current) - 1 - 4 * len(meaning.sequence[:255])]


def to_stored_v3(meaning: MessageMeaning) -> bytes:
    """The third version's bytes: version 4 without the vectors' space (kept to test that rows
    stored before the adapter are still read, as the base model's)."""
    current = to_stored_v4(meaning)
    _, n, flags, frame, particles, _ = _HEADER.unpack_from(current, 0)
    return _HEADER_V3.pack(3, n, flags, frame, particles) + current[_HEADER.size :]


def to_stored_v2(meaning: MessageMeaning) -> bytes:
    """The second version's bytes: version 3 without the particles (kept to test that rows
    stored before it are still read)."""
    current = to_stored_v4(meaning)
    _, n, flags, frame, _, _ = _HEADER.unpack_from(current, 0)
    return _HEADER_V2.pack(2, n, flags, frame) + current[_HEADER.size :]


def to_stored_v1(meaning: MessageMeaning) -> bytes:
    """The first version's bytes (kept to test that they are still read)."""
    words = meaning.words[:255]
    parts = [
        _HEADER_V1.pack(1, len(words), _flags(meaning)),
        meaning.vector.astype("<f2").tobytes(),
    ]
    for word in words:
        opposites = word.opposites[:255]
        parts.append(_WORD_HEADER.pack(word.token, word.classes, int(word.negated), len(opposites)))
        parts.append(struct.pack(f"<{len(opposites)}I", *opposites))
        parts.append(_quantise(word.vector))
    return b"".join(parts)


def _flags(meaning: MessageMeaning) -> int:
    return (
        int(meaning.question)
        | int(meaning.presence) << 1
        | int(meaning.request) << 2
        | int(meaning.small_talk) << 3
        | min(meaning.negations, 15) << 4
    )


def _quantise(vector: np.ndarray) -> bytes:
    return np.clip(np.rint(vector * 127.0), -127, 127).astype(np.int8).tobytes()
