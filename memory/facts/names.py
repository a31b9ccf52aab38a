"""Which known person a name heard in conversation is: speech recognition mishears names
("Makesh" for Mukesh, "Kath" for Cath), and each spelling would otherwise become a person of its
own whose facts never meet.

A heard name is compared with the people the person's memory already knows: the profile's
family and friends, and the people named in their facts. It is *the same* person when the two
sound alike (equal Metaphone keys) and are spelt alike (Jaro-Winkler similarity at least
SURE_SPELLING), unless both are ordinary given names of their own (Tom and Tim, Jane and Joan
sound alike and are different people): then it *may be* the same, and staff decide on the
person's "What Clara remembers" page. Nothing else is ever merged.
"""

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass

import jellyfish

from memory.core.person import CaregiverContext
from memory.facts import store
from memory.facts.extraction.core import ExtractedFact, entity_ref
from memory.facts.models import Memory

SURE_SPELLING = 0.8
MAYBE_SPELLING = 0.75

# Given names common in the UK, Ireland, the US, Australia and South Asia: two of them that sound
# alike are usually two people, so a match between them is only "may be".
_GIVEN_NAMES = frozenset(
    """
    aaron abdul adam adrian agnes ahmed aisha alan albert alex alfred alice alison amanda amy
    andrew angela anil ann anna anne annie anthony arthur asha audrey barbara barry beatrice ben
    bernard beryl betty bill bob brenda brian bridget carol caroline catherine charles charlie
    chris christine clare colin connie craig dan daniel dave david dawn dean deborah denis dennis
    derek diana diane dolores donald doreen doris dorothy douglas edith edna edward eileen elaine
    eleanor elizabeth ellen elsie emily emma eric ernest ethel eve evelyn fatima florence frances
    frank fred gary gavin geoffrey george gerald gillian gladys gloria gordon grace graham hannah
    harold harry hazel heather helen henry hilda howard ian irene iris jack jackie james jan jane
    janet janice jean jeff jennifer jenny jessica jill jim joan joe john jon joseph joyce judith
    judy julie june karen kate kathleen keith ken kenneth kevin kim laura lauren leonard les lesley
    lilian linda lisa liz lorna louise lucy lynn maggie margaret maria marian marie marion mark
    martha martin mary matthew maureen maurice michael michelle mike mohammed molly muriel nancy
    neil nicola nigel norah norma norman olive oliver pam pamela pat patricia patrick paul pauline
    peggy peter phil philip phyllis priya rachel raj ray raymond rita rob robert robin roger ron
    ronald rose rosemary roy ruby ruth sally sam samuel sandra sarah sean sharon sheila shirley
    simon stan stanley stella stephen steve steven stuart sue susan sylvia ted terry thomas tim
    tina tom tony tracy valerie vera victor vincent violet walter wendy william winifred yvonne
    """.split()
)


@dataclass(frozen=True)
class Known:
    ref: str
    label: str


@dataclass(frozen=True)
class Match:
    known: Known
    sure: bool


def _first(label: str) -> str:
    words = label.split()
    return words[0].lower() if words else ""


def likeness(heard: str, known: str) -> bool | None:
    """True: the same name misheard or spelt otherwise; None: may be; False: a different name."""
    a, b = _first(heard), _first(known)
    if not a or not b or a == b:
        return a == b and bool(a)
    sounds = jellyfish.metaphone(a) == jellyfish.metaphone(b)
    spelling = jellyfish.jaro_winkler_similarity(a, b)
    if not sounds or spelling < MAYBE_SPELLING:
        return False
    if spelling >= SURE_SPELLING and not (a in _GIVEN_NAMES and b in _GIVEN_NAMES):
        return True
    return None


def known_people(person_id, about: CaregiverContext | None = None) -> list[Known]:
    """The people the person's memory knows: the profile's first, then those of confirmed facts,
    then the rest."""
    found: dict[str, Known] = {}
    for contact in about.family if about else ():
        ref = entity_ref("person", contact.name)
        if ref:
            found.setdefault(ref, Known(ref, contact.name))
    rows = Memory.objects.filter(person_id=person_id, status=Memory.Status.ACTIVE).order_by(
        "-confirmed", "created_at"
    )
    for labels in rows.values_list("entity_labels", flat=True):
        for ref, label in (labels or {}).items():
            if ref.startswith("person:") and label:
                found.setdefault(ref, Known(ref, str(label)))
    return list(found.values())


def match(label: str, known: Iterable[Known]) -> Match | None:
    """The known person this heard name is (sure) or may be; None when it is nobody known. A
    name already known as it is spelt is itself."""
    ref = entity_ref("person", label)
    known = list(known)
    if any(k.ref == ref for k in known):
        return None
    maybe = None
    for candidate in known:
        verdict = likeness(label, candidate.label)
        if verdict is True:
            return Match(candidate, sure=True)
        if verdict is None and maybe is None:
            maybe = Match(candidate, sure=False)
    return maybe


def _renamed(text: str, heard: str, known: str) -> str:
    """`text` with the heard first name written as the known one."""
    return re.sub(rf"\b{re.escape(heard)}\b", known, text, flags=re.IGNORECASE)


def resolve(
    fact: ExtractedFact, known: list[Known], *, sure_of: str | None = None
) -> ExtractedFact:
    """The fact with each misheard person linked to the known one: the same person's ref, label,
    key and name in its words ("heard_as" keeps what was heard); a person it may be is noted
    ("may_be") for staff to decide."""
    for ref in fact.entity_refs:
        if not ref.startswith("person:"):
            continue
        label = fact.entity_labels.get(ref, "")
        found = match(label, known) if label else None
        if sure_of == ref and known:
            found = Match(known[0], sure=True)
        if found is None:
            continue
        if not found.sure:
            fact = dataclasses.replace(
                fact,
                metadata={
                    **fact.metadata,
                    "may_be": {"heard": label, "ref": found.known.ref, "label": found.known.label},
                },
            )
            continue
        heard, said = _first(label), found.known.label.split()[0]
        fact = dataclasses.replace(
            fact,
            content=_renamed(fact.content, heard, said),
            entity_refs=tuple(
                dict.fromkeys(found.known.ref if r == ref else r for r in fact.entity_refs)
            ),
            entity_labels={
                **{r: v for r, v in fact.entity_labels.items() if r != ref},
                found.known.ref: found.known.label,
            },
            memory_key="|".join(
                found.known.ref if part == ref else part for part in fact.memory_key.split("|")
            ),
            metadata={**fact.metadata, "heard_as": label},
        )
    return fact


def decide(memory: Memory, *, same: bool) -> Memory:
    """Staff say whether the person Clara heard in this memory is the one it may be: the same
    (linked as a misheard name is) or someone else (the question goes)."""
    maybe = (memory.metadata or {}).get("may_be")
    if not maybe:
        return memory
    metadata = {k: v for k, v in memory.metadata.items() if k != "may_be"}
    refs, labels, content, key = (
        list(memory.entity_refs),
        dict(memory.entity_labels),
        memory.content,
        memory.memory_key,
    )
    if same:
        heard_ref = entity_ref("person", maybe["heard"])
        fact = resolve(
            ExtractedFact(
                type=memory.type,
                content=content,
                entity_refs=tuple(refs),
                entity_labels=labels,
                subtype=memory.subtype,
                memory_key=key,
                confidence=memory.confidence,
                importance=memory.importance,
                metadata=metadata,
            ),
            # Decided by staff: linked whatever the likeness.
            [Known(maybe["ref"], maybe["label"])],
            sure_of=heard_ref,
        )
        refs, labels, content, key, metadata = (
            list(fact.entity_refs),
            fact.entity_labels,
            fact.content,
            fact.memory_key,
            fact.metadata,
        )
    return store.memory_relink(
        memory.id,
        content=content,
        entity_refs=refs,
        entity_labels=labels,
        memory_key=key,
        metadata=metadata,
    )
