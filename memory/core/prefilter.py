"""A regular expression's required words: a cheap test that rules a pattern out before it runs.

For a pattern, `required(pattern)` derives from Python's own parse of it a list of clauses, each a
set of literal strings: any text the pattern can match contains, for every clause, at least one
of its strings (the prefilter idea of RE2 and of code search's trigram index). When a text lacks
every string of one clause, the pattern cannot match it and need not run. The derivation is
conservative: whatever it cannot reason about (a class such as \\w, a back-reference, an
unknown node) adds no clause, so the pattern then runs as before. Verdicts never change, only
their cost.

Case: patterns here run with re.IGNORECASE, so literals and text are compared folded
(`fold`): lower case, and the few letters re treats as the same beyond that (dotless i and i,
long s and s, ...) mapped to one.
"""

from __future__ import annotations

import re
import re._casefix as _casefix
import re._constants as _c
import re._parser as _parser
from collections.abc import Iterable
from dataclasses import dataclass

# Larger exact sets are cut into clauses (keeps the product of alternatives small).
_MAX_EXACT = 64
_MAX_CLASS = 8

# re's extra case-insensitive equivalences ("ı" and "i", "ſ" and "s"): each mapped to the
# smallest of its class, after lower-casing.
_EXTRA = {
    code: min((code, *others)) for code, others in _casefix._EXTRA_CASES.items()
}  # fmt: skip


def fold(text: str) -> str:
    """`text` as the prefilter compares it. A character whose lower case is longer than one
    character (no such character survives the screen's normalisation) would shift positions:
    then the caller gets None and runs the patterns unfiltered."""
    lowered = text.lower()
    return lowered.translate(_EXTRA) if len(lowered) == len(text) else None


def _fold_char(code: int) -> str | None:
    lowered = chr(code).lower()
    if len(lowered) != 1:
        return None
    return chr(_EXTRA.get(ord(lowered), ord(lowered)))


@dataclass(frozen=True)
class _Info:
    """What a piece of a pattern can match: `exact`, every string it can match when that set is
    known and small (else None); `clauses`, strings required of any match."""

    exact: frozenset[str] | None
    clauses: tuple[frozenset[str], ...] = ()

    def all_clauses(self) -> tuple[frozenset[str], ...]:
        if self.exact is not None and "" not in self.exact:
            return (self.exact, *self.clauses)
        return self.clauses


_EMPTY = _Info(frozenset({""}))
_UNKNOWN = _Info(None)


def _strength(clause: frozenset[str]) -> tuple[int, int]:
    """Longer required strings rule out more texts; fewer of them are quicker to test."""
    return (min(len(s) for s in clause), -len(clause))


def _best(clauses: Iterable[frozenset[str]]) -> frozenset[str] | None:
    return max(clauses, key=_strength, default=None)


def _class(items) -> _Info:
    chars: set[str] = set()
    for op, av in items:
        if op is _c.LITERAL:
            chars.add(_fold_char(av))
        elif op is _c.RANGE and av[1] - av[0] < _MAX_CLASS:
            chars.update(_fold_char(code) for code in range(av[0], av[1] + 1))
        else:  # NEGATE, CATEGORY (\w, \s, ...), a large range
            return _UNKNOWN
    if None in chars or len(chars) > _MAX_CLASS:
        return _UNKNOWN
    return _Info(frozenset(chars))


def _sequence(items) -> _Info:
    clauses: list[frozenset[str]] = []
    run: frozenset[str] | None = frozenset({""})
    whole = True  # every item exact so far: the sequence's own exact set is `run`

    def flush() -> None:
        if run is not None and "" not in run:
            clauses.append(run)

    for item in items:
        info = _node(*item)
        if info.exact is None:
            flush()
            clauses.extend(info.clauses)
            run, whole = frozenset({""}), False
            continue
        product = frozenset(a + b for a in run for b in info.exact)
        if len(product) > _MAX_EXACT:
            flush()
            run, whole = info.exact, False
        else:
            run = product
        clauses.extend(info.clauses)
    if whole:
        return _Info(run, tuple(clauses))
    flush()
    return _Info(None, tuple(clauses))


def _branch(alternatives) -> _Info:
    infos = [_sequence(alt.data) for alt in alternatives]
    if all(info.exact is not None for info in infos):
        exact = frozenset().union(*(info.exact for info in infos))
        if len(exact) <= _MAX_EXACT:
            return _Info(exact)
    best = [_best(info.all_clauses()) for info in infos]
    if any(clause is None for clause in best):
        return _UNKNOWN
    return _Info(None, (frozenset().union(*best),))


def _node(op, av) -> _Info:
    if op is _c.LITERAL:
        char = _fold_char(av)
        return _UNKNOWN if char is None else _Info(frozenset({char}))
    if op is _c.IN:
        return _class(av)
    if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
        return _EMPTY  # zero width: they only narrow what matches
    if op is _c.SUBPATTERN:
        return _sequence(av[-1].data)
    if op is _c.ATOMIC_GROUP:
        return _sequence(av.data)
    if op is _c.BRANCH:
        return _branch(av[1])
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        low, high, item = av
        info = _sequence(item.data)
        if low == 0:
            if high == 1 and info.exact is not None:
                return _Info(info.exact | {""})
            return _EMPTY if info.exact == frozenset({""}) else _Info(None)
        if low == high == 1:
            return info
        return _Info(None, info.all_clauses())
    return _UNKNOWN  # ANY, NOT_LITERAL, GROUPREF, ...


def required(pattern: str, flags: int = 0) -> tuple[frozenset[str], ...]:
    """Clauses of folded strings, each needed (one of its strings) in any text `pattern` can
    match. Empty: nothing is known, the pattern must always run."""
    info = _sequence(_parser.parse(pattern, flags).data)
    return tuple(
        frozenset(s for s in clause if not any(t != s and t in s for t in clause))
        for clause in info.all_clauses()
    )


class Gated:
    """Alternative patterns searched as one (`search`), each run only when the text holds its
    required strings. `search` answers as `re.compile("|".join(alternatives), flags).search`
    would, whether it finds a match."""

    def __init__(self, alternatives: Iterable[str], flags: int = 0) -> None:
        self.alternatives = tuple(alternatives)
        self.union = re.compile("|".join(f"(?:{p})" for p in self.alternatives), flags)
        self.parts = [(re.compile(p, flags), required(p, flags)) for p in self.alternatives]
        # Alternatives by the strings of their first clause (the others are checked after),
        # and those nothing is known of (always run).
        self._always = frozenset(i for i, (_, clauses) in enumerate(self.parts) if not clauses)
        self._by_word: dict[str, set[int]] = {}
        for i, (_, clauses) in enumerate(self.parts):
            for word in clauses[0] if clauses else ():
                self._by_word.setdefault(word, set()).add(i)
        self._first = frozenset(self._by_word)

    def search(self, text: str, present: frozenset[str] | None) -> bool:
        """Whether some alternative matches `text`. `present`: which of the required strings
        the folded text holds (`Words.present`); None runs every alternative."""
        if present is None:
            return self.union.search(text) is not None
        return any(self.parts[i][0].search(text) for i in self.candidates(present))

    def candidates(self, present: frozenset[str]) -> list[int]:
        """The alternatives that may match a text holding `present`, by index."""
        first = set(self._always)
        for word in present & self._first:
            first |= self._by_word[word]
        return sorted(
            i
            for i in first
            if all(not present.isdisjoint(clause) for clause in self.parts[i][1][1:])
        )


class Words:
    """The required strings of several `Gated`, found in a text at once: a string of three or
    more characters is looked for only when the text holds its first three."""

    def __init__(self, *gated: Gated) -> None:
        words = {s for g in gated for _, clauses in g.parts for c in clauses for s in c}
        self.short = tuple(sorted(w for w in words if len(w) < 3))
        self.by_gram: dict[str, tuple[str, ...]] = {}
        for word in sorted(w for w in words if len(w) >= 3):
            self.by_gram[word[:3]] = (*self.by_gram.get(word[:3], ()), word)

    def present(self, folded: str | None) -> frozenset[str] | None:
        """The required strings `folded` (a `fold`ed text) holds; None stays None."""
        if folded is None:
            return None
        found = {word for word in self.short if word in folded}
        grams = {folded[i : i + 3] for i in range(len(folded) - 2)}
        for gram in grams.intersection(self.by_gram):
            found.update(word for word in self.by_gram[gram] if word in folded)
        return frozenset(found)
