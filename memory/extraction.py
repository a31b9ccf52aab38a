"""Rule-based extraction of candidate facts from what the person says about themselves.

`extract_facts(text)` reads one message from the person (never the companion's reply) and
returns the facts it states plainly: the person's name and what they like to be called, the
people in their life and how they are related, likes and dislikes, routines, feelings, coming
events, and their life story. It is deterministic (same text, same facts) and needs no model.

**Output is a candidate, never truth.** A person living with dementia may say, and mean, that
her late husband is coming home tonight, or that she still works at the mill. The store keeps
every extracted fact unconfirmed until a caregiver confirms it, and nothing unconfirmed is ever
told to the person as true. `confidence` says how plainly the sentence stated the fact: lower
for hedged statements ("I think ..."), and very low where the sentence contradicts itself (a
person the sentence says has died is "coming to visit"; two different values for one attribute).

Filters, from the seeds:

* **Uncertainty**: questions, hypotheticals and guesses ("maybe", "might", "if", "would",
  "I'm not sure", "I can't remember if") give nothing. Mild hedges ("I think", "I believe",
  "apparently") are kept at lower confidence.
* **Ownership**: only the person's own statements about themselves become their preferences
  and routines. "My son likes football" is about the son: it is kept as a fact about the son's
  entity (type `people`), never as the person's own preference.
* **Negation**: negative statements become facts only where they mean something on their own
  ("I don't like loud music" is a dislike; "I don't walk the dog any more" ends a routine,
  under the routine's own key so the store supersedes it). "I don't have a daughter" and other
  negated claims give nothing.
* **Sensitive data**: the text is redacted first (`memory.sensitive`), and a clause that held a
  secret gives no fact at all.

Each fact has a `memory_key` naming the attribute it sets, `<type>|<subject>|<attribute>`, with
the value kept apart in `metadata["value"]`: the same fact said differently gives the same key
and value ("I love tea", "I really like tea"), and a contradicting value for the same attribute
gives the same key with another value ("I don't like tea"), so the store can bump the one and
supersede the other. Subjects are `self` or an entity ref `<type>:<slug>`.

Entity refs follow the state-and-memory seed: `<type>:<slug>`, the slug lower-case ASCII with
punctuation removed and spaces or hyphens turned into underscores, at most 64 characters.
"""

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from memory.sensitive import PLACEHOLDERS, redact

MEMORY_TYPES = (
    "profile",
    "people",
    "routine",
    "preference",
    "event",
    "feeling",
    "life_story",
    "other",
)
ENTITY_TYPES = ("self", "person", "pet", "place")
FACT_TYPES = ("fact", "relationship", "preference", "habit", "feeling", "event")


@dataclass(frozen=True)
class ExtractedFact:
    """One candidate fact. `metadata` has the rule that matched, the value and the clause."""

    type: str
    content: str
    entity_refs: tuple[str, ...]
    entity_labels: dict[str, str]
    subtype: dict[str, str]
    memory_key: str
    confidence: float
    importance: int
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def value(self) -> str:
        return self.metadata.get("value", "")


# --- Entity refs ------------------------------------------------------------------------------

SLUG_MAX = 64
ENTITY_REF_RE = re.compile(r"^(?P<type>[a-z]+):(?P<slug>[a-z0-9]+(?:_[a-z0-9]+)*)$")


def entity_slug(label: str) -> str:
    """`"Mary-Jane O'Brien"` -> `"mary_jane_obrien"`: ASCII, lower case, underscores, bounded."""
    ascii_text = unicodedata.normalize("NFKD", label).encode("ascii", "ignore").decode()
    text = re.sub(r"['\u2019.]", "", ascii_text.lower())
    text = re.sub(r"[^a-z0-9]+", "_", text).strip("_")
    return text[:SLUG_MAX].rstrip("_")


def entity_ref(entity_type: str, label: str) -> str | None:
    """The ref for an entity, or None when its label has nothing left to slug."""
    slug = entity_slug(label)
    return f"{entity_type}:{slug}" if slug else None


# --- Vocabulary -------------------------------------------------------------------------------

# Spoken forms of a relation -> the one name it is stored under.
_RELATIONS: dict[str, str] = {
    "husband": "husband",
    "hubby": "husband",
    "wife": "wife",
    "partner": "partner",
    "son": "son",
    "daughter": "daughter",
    "mother": "mother",
    "mum": "mother",
    "mom": "mother",
    "mam": "mother",
    "mummy": "mother",
    "mommy": "mother",
    "father": "father",
    "dad": "father",
    "daddy": "father",
    "brother": "brother",
    "sister": "sister",
    "grandson": "grandson",
    "granddaughter": "granddaughter",
    "grandchild": "grandchild",
    "great-grandson": "great-grandson",
    "great-granddaughter": "great-granddaughter",
    "grandmother": "grandmother",
    "grandma": "grandmother",
    "gran": "grandmother",
    "granny": "grandmother",
    "nan": "grandmother",
    "nana": "grandmother",
    "nanna": "grandmother",
    "grandfather": "grandfather",
    "grandad": "grandfather",
    "granddad": "grandfather",
    "grandpa": "grandfather",
    "aunt": "aunt",
    "auntie": "aunt",
    "aunty": "aunt",
    "uncle": "uncle",
    "nephew": "nephew",
    "niece": "niece",
    "cousin": "cousin",
    "best friend": "best friend",
    "friend": "friend",
    "neighbour": "neighbour",
    "neighbor": "neighbour",
    "carer": "carer",
    "caregiver": "carer",
    "son-in-law": "son-in-law",
    "daughter-in-law": "daughter-in-law",
    "brother-in-law": "brother-in-law",
    "sister-in-law": "sister-in-law",
    "mother-in-law": "mother-in-law",
    "father-in-law": "father-in-law",
    "stepson": "stepson",
    "stepdaughter": "stepdaughter",
    "godson": "godson",
    "goddaughter": "goddaughter",
    "boyfriend": "boyfriend",
    "girlfriend": "girlfriend",
    "dog": "dog",
    "cat": "cat",
    "budgie": "budgie",
    "parrot": "parrot",
}
_PETS = {"dog", "cat", "budgie", "parrot"}
_PARENTS = {"mother", "father"}
_PLURALS: dict[str, str] = {
    "sons": "sons",
    "daughters": "daughters",
    "children": "children",
    "kids": "children",
    "grandchildren": "grandchildren",
    "grandkids": "grandchildren",
    "grandsons": "grandsons",
    "granddaughters": "granddaughters",
    "great-grandchildren": "great-grandchildren",
    "great grandchildren": "great-grandchildren",
    "brothers": "brothers",
    "sisters": "sisters",
    "dogs": "dogs",
    "cats": "cats",
}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}


def _alternation(words) -> str:
    # Longest first, so "best friend" wins over "friend" and "grandson" over "son".
    return "|".join(
        re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True)
    )


_REL = _alternation(_RELATIONS)
_PLURAL = _alternation(_PLURALS)
_COUNT = r"(?:\d{1,2}|" + _alternation(_NUMBERS) + ")"

_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_MONTHS = (
    "january february march april may june july august september october november december".split()
)
# Capitalised words that are not names.
_NOT_NAMES = frozenset(
    """
    i i'm i've i'd i'll me my mine he she it we they you him her them his hers its our their your
    this that these those there here who what when where why how which the a an and but or so
    yes no oh well now then today tonight tomorrow yesterday god lord jesus christmas easter
    mum mom mam dad nan gran granny grandma grandpa grandad doctor nurse sister father mother
    please thank thanks hello hi dear love darling sweetheart sorry
    english scottish welsh irish british catholic jewish methodist protestant anglican
    """.split()
    + _DAYS
    + _MONTHS
)
_TITLE = r"(?:(?-i:Mr|Mrs|Ms|Miss|Dr|Auntie|Uncle|Aunt|Nurse)\.?\s+)"
_CAP_WORD = r"(?-i:[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?)"


def _name(group: str = "name") -> str:
    """A name as written: capitalised, optionally with a title and a surname."""
    return rf"(?P<{group}>{_TITLE}?{_CAP_WORD}(?:\s+{_CAP_WORD})?)"


def _any_name(group: str = "name") -> str:
    """After "called", "named" or "my name is", a name may be typed in lower case."""
    return rf"(?P<{group}>[A-Za-z][A-Za-z'-]+(?:\s+[A-Za-z][A-Za-z'-]+)?)"


_NAME = _name()
_ANY_NAME = _any_name()

# Occupations: the head noun of "I was a district nurse".
_OCCUPATIONS = frozenset(
    """
    nurse teacher miner farmer secretary typist postman postwoman policeman policewoman officer
    doctor engineer clerk cook chef baker butcher builder bricklayer carpenter joiner electrician
    plumber mechanic driver shopkeeper assistant hairdresser seamstress dressmaker tailor cleaner
    housewife homemaker accountant banker solicitor lawyer vicar priest minister midwife matron
    soldier sailor pilot librarian journalist artist musician singer dancer actor actress
    gardener porter waiter waitress barmaid nanny cashier machinist weaver worker steelworker
    docker fisherman headmaster headmistress lecturer professor scientist chemist pharmacist
    dentist vet architect manager salesman saleswoman receptionist telephonist operator
    postmistress shepherd stonemason welder printer photographer painter decorator typesetter
    bookkeeper conductor fireman firefighter inspector surveyor draughtsman cobbler milkman
    grocer florist translator social carer
    """.split()
)
_FEELINGS = frozenset(
    """
    lonely sad happy tired worried anxious scared frightened confused cheerful low down bored
    cold hot unwell poorly ill sick better fine well good great grand content upset angry cross
    frustrated restless calm peaceful excited nervous afraid muddled lost achy sore weary
    exhausted grumpy miserable glad pleased relaxed safe unsafe teary tearful homesick fed-up
    """.split()
)
_FEELING_ADVERBS = r"(?:(?:a\s+(?:bit|little)|very|so|really|quite|rather|terribly|awfully|ever\s+so|a\s+bit\s+more|more|less|too)\s+)"
_WHEN_WORDS = (
    r"(?:today|tonight|this\s+(?:morning|afternoon|evening|week)|at\s+the\s+moment|right\s+now"
    r"|now|lately|these\s+days|all\s+day)"
)

# Strong uncertainty: the clause gives nothing.
_UNCERTAIN = re.compile(
    r"\b(?:maybe|might|perhaps|possibly|probably|not\s+sure|unsure|no\s+idea|wonder|if|unless"
    r"|would|could|wish|hope|suppose\s+so|or\s+something|or\s+not|supposed\s+to|pretend"
    r"|dream(?:t|ed)?|imagine|don'?t\s+know|do\s+not\s+know|can'?t\s+remember|cannot\s+remember"
    r"|don'?t\s+remember|do\s+not\s+remember|forget|forgot(?:ten)?)\b|\b\w+'d\b",
    re.IGNORECASE,
)
# Mild hedges: kept, at lower confidence; the hedge itself is cut off the clause.
_HEDGE = re.compile(
    r"\b(?:i\s+think|i\s+believe|i\s+reckon|i\s+guess|i\s+suppose|i\s+expect|apparently"
    r"|they\s+tell\s+me|i'?m\s+told|i\s+was\s+told|as\s+far\s+as\s+i\s+know|i'?m\s+pretty\s+sure"
    r"|i'?m\s+fairly\s+sure)\b,?\s*(?:that\s+)?",
    re.IGNORECASE,
)
HEDGE_FACTOR = 0.6
CONFLICT_CONFIDENCE = 0.1
CONTRADICTION_CONFIDENCE = 0.3
# "Mum is coming to get me": for a person in their eighties, a parent visiting is far more
# often a memory from long ago than a plan; kept, but barely believed.
PARENT_VISIT_CONFIDENCE = 0.3

_FILLER = re.compile(
    r"^(?:(?:oh|ah|well|yes|yeah|no|so|and|but|anyway|actually|you\s+know|dear|love|darling"
    r"|honestly|now|right|mind\s+you|to\s+be\s+honest|of\s+course)\b[,!]?\s*)+",
    re.IGNORECASE,
)
_TRAILING_FILLER = re.compile(
    r"(?:,?\s+(?:very\s+much|so\s+much|a\s+lot|really|though|too|as\s+well|either|these\s+days|any\s?more"
    r"|nowadays|at\s+all|you\s+know|dear|love|darling|of\s+course))+$",
    re.IGNORECASE,
)


# --- Frequency and time phrases ---------------------------------------------------------------

_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_PART = r"(?:morning|afternoon|evening|night|day|week|weekend|month|year|lunchtime|teatime)"
_FREQ = (
    rf"(?:every\s+(?:single\s+)?(?:other\s+)?(?:{_DAY}|{_PART})(?:\s+(?:morning|afternoon|evening|night))?"
    rf"|each\s+(?:{_DAY}|{_PART})"
    rf"|on\s+{_DAY}s(?:\s+(?:morning|afternoon|evening|night)s?)?|on\s+(?:weekdays|weekends)"
    rf"|{_DAY}s|(?:once|twice|three\s+times|four\s+times)\s+a\s+(?:day|week|month|year)"
    rf"|daily|weekly|monthly|most\s+(?:days|mornings|evenings|nights|weeks)"
    rf"|in\s+the\s+(?:mornings|afternoons|evenings)|at\s+weekends|at\s+the\s+weekends?)"
)
_FREQ_ADVERB = r"(?:always|usually|normally|generally|often|regularly)"
_TIME = (
    rf"(?:today|tonight|tomorrow(?:\s+(?:morning|afternoon|evening|night))?"
    rf"|this\s+(?:morning|afternoon|evening|weekend|week|{_DAY})"
    rf"|next\s+(?:week|month|year|{_DAY})|on\s+{_DAY}(?:\s+(?:morning|afternoon|evening))?"
    rf"|(?:on\s+)?(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)(?:\s+of\s+\w+)?"
    rf"|at\s+\d{{1,2}}(?:[:.]\d{{2}})?\s*(?:am|pm|o'?clock)?|later(?:\s+on|\s+today)?|soon"
    rf"|at\s+the\s+weekend|for\s+(?:lunch|tea|dinner|christmas|easter|my\s+birthday))"
)
_PAST_TIME = (
    rf"(?:yesterday(?:\s+(?:morning|afternoon|evening))?|last\s+(?:night|week|weekend|{_DAY})"
    rf"|this\s+(?:morning|afternoon)|earlier(?:\s+today)?|on\s+{_DAY})"
)


# --- Grammar helpers --------------------------------------------------------------------------

_IRREGULAR = {"be": "is", "am": "is", "have": "has", "do": "does", "go": "goes"}
_NOT_HABIT_VERBS = frozenset(
    """
    like love adore enjoy hate dislike prefer feel am was were is are be been have't think know
    want need hope wish should must will shall can cannot can't won't would could might may
    used didn't don't doesn't do did never miss remember forget forgot mean guess suppose
    believe reckon expect said say told tell see saw heard hear wonder just also still
    """.split()
)
_PRONOUNS = [
    (r"\bmyself\b", "themself"),
    (r"\bmy\b", "their"),
    (r"\bmine\b", "theirs"),
    (r"\bme\b", "them"),
    (r"\bI'm\b", "they're"),
    (r"\bI've\b", "they've"),
    (r"\bI\b", "they"),
    (r"\bi\b", "they"),
]
_DETERMINERS = frozenset("the a an my our some your their his her this that".split())


def _third_person(verb: str) -> str:
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return lower + "es"
    if re.search(r"[^aeiou]y$", lower):
        return lower[:-1] + "ies"
    return lower + "s"


def _about_them(text: str) -> str:
    """First person to third: "my dog" -> "their dog", "takes me" -> "takes them"."""
    for pattern, replacement in _PRONOUNS:
        text = re.sub(pattern, replacement, text)
    return text


def _sentence(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ,")
    return text[:1].upper() + text[1:] if text else text


def _key_words(text: str, *, limit: int = 6) -> str:
    """A value's slug for a key: determiners dropped, so "the dog" and "my dog" agree."""
    words = [w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in _DETERMINERS]
    return entity_slug(" ".join(words[:limit]))


def _when_text(text: str) -> str:
    """A time phrase in lower case but for the names of days and months: "every Tuesday"."""
    words = re.sub(r"\s+", " ", text.strip()).lower().split(" ")
    return " ".join(w.capitalize() if w.rstrip("s") in _DAYS or w in _MONTHS else w for w in words)


def _tidy(text: str) -> str:
    text = _TRAILING_FILLER.sub("", text.strip(" ,.!"))
    return re.sub(r"\s+", " ", text).strip(" ,")


def _is_name(name: str | None) -> bool:
    if not name:
        return False
    words = name.lower().replace(".", "").split()
    return all(w not in _NOT_NAMES and w not in _RELATIONS for w in words[-1:]) and not any(
        w in _NOT_NAMES for w in words
    )


def _title(name: str) -> str:
    return " ".join(part[:1].upper() + part[1:] for part in name.split())


# --- The extraction context -------------------------------------------------------------------


@dataclass
class _Clause:
    text: str
    hedged: bool
    sentence: str


@dataclass
class _Entity:
    ref: str
    label: str
    relation: str | None
    entity_type: str

    @property
    def subject(self) -> str:
        """How the entity starts a content sentence: "Daughter Sarah", "Sarah", "Daughter"."""
        if self.relation and self.label.lower() != self.relation:
            return f"{self.relation.capitalize()} {self.label}"
        return self.label


def _relative(relation_word: str, name: str | None) -> _Entity | None:
    relation = _RELATIONS.get(re.sub(r"\s+", " ", relation_word.lower()))
    if relation is None:
        return None
    entity_type = "pet" if relation in _PETS else "person"
    label = _title(name) if name else relation.capitalize()
    ref = entity_ref(entity_type, label)
    return _Entity(ref, label, relation, entity_type) if ref else None


class _Facts:
    """Collects facts for one message, with what the message says about who has died."""

    def __init__(self) -> None:
        self.facts: list[ExtractedFact] = []
        self.deceased: set[str] = set()

    def add(
        self,
        clause: _Clause,
        *,
        type: str,
        content: str,
        key: str,
        value: str,
        confidence: float,
        importance: int,
        fact_type: str,
        rule: str,
        entities: tuple[_Entity, ...] = (),
        entity_type: str = "self",
        **extra: Any,
    ) -> None:
        if clause.hedged:
            confidence *= HEDGE_FACTOR
        refs = tuple(dict.fromkeys(e.ref for e in entities))
        metadata: dict[str, Any] = {
            "rule": rule,
            "value": value,
            "hedged": clause.hedged,
            "source_text": clause.sentence[:300],
        }
        metadata.update(extra)
        self.facts.append(
            ExtractedFact(
                type=type,
                content=_sentence(content),
                entity_refs=refs,
                entity_labels={e.ref: e.label for e in entities},
                subtype={"entity_type": entity_type, "fact_type": fact_type},
                memory_key=key[:300],
                confidence=round(confidence, 3),
                importance=importance,
                metadata=metadata,
            )
        )


# --- Rules: names -----------------------------------------------------------------------------

_NOT_A_CALLED_NAME = frozenset(
    "back later tomorrow today tonight when if on at in please a an the again soon now anything "
    "anytime sometime whenever every".split()
)
_MY_NAME = re.compile(rf"\bmy\s+name(?:\s+is|'s)\s+{_ANY_NAME}", re.IGNORECASE)
_CALLED = re.compile(rf"^(?:i\s+am|i'm)\s+called\s+{_ANY_NAME}", re.IGNORECASE)
_CALL_ME = re.compile(
    rf"(?:^|\b(?:you\s+can|please|just|everyone|everybody|people|they|friends|my\s+friends"
    rf"|my\s+family|most\s+people|family)\s+)(?:all\s+)?call(?:s)?\s+me\s+{_ANY_NAME}",
    re.IGNORECASE,
)
_DONT_CALL_ME = re.compile(
    rf"\b(?:don'?t|do\s+not|never)\s+call\s+me\s+{_ANY_NAME}"
    rf"|\bi\s+(?:hate|don'?t\s+like|do\s+not\s+like|can'?t\s+stand)\s+being\s+called\s+{_any_name('name2')}",
    re.IGNORECASE,
)
_IM_NAME = re.compile(rf"^(?:hello|hi)?[,\s]*(?:i'm|i\s+am)\s+{_NAME}$", re.IGNORECASE)


def _clean_name(raw: str) -> str | None:
    words = []
    for word in raw.split():
        if word.lower() in _NOT_A_CALLED_NAME or word.lower() in _NOT_NAMES:
            break
        words.append(word)
    if not words:
        return None
    return _title(" ".join(words))


def _rule_names(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    negated = _DONT_CALL_ME.search(text)
    if negated:
        raw = negated.group("name") or negated.group("name2")
        name = _clean_name(raw) if raw else None
        if name:
            out.add(
                clause,
                type="preference",
                content=f"Does not like being called {name}",
                key=f"preference|self|called:{entity_slug(name)}",
                value="dislikes",
                confidence=0.8,
                importance=2,
                fact_type="preference",
                rule="name.dont_call_me",
            )
        return
    match = _MY_NAME.search(text) or _CALLED.search(text)
    if match and (name := _clean_name(match.group("name"))):
        out.add(
            clause,
            type="profile",
            content=f"Name is {name}",
            key="profile|self|name",
            value=entity_slug(name),
            confidence=0.9,
            importance=3,
            fact_type="fact",
            rule="name.my_name_is",
        )
    match = _CALL_ME.search(text)
    if match and (name := _clean_name(match.group("name"))):
        out.add(
            clause,
            type="profile",
            content=f"Likes to be called {name}",
            key="profile|self|preferred_name",
            value=entity_slug(name),
            confidence=0.9,
            importance=3,
            fact_type="preference",
            rule="name.call_me",
        )
    match = _IM_NAME.match(text)
    if match and _is_name(match.group("name")) and match.group("name").lower() not in _FEELINGS:
        name = match.group("name")
        out.add(
            clause,
            type="profile",
            content=f"Name is {name}",
            key="profile|self|name",
            value=entity_slug(name),
            confidence=0.7,
            importance=3,
            fact_type="fact",
            rule="name.i_am",
        )


# --- Rules: people ----------------------------------------------------------------------------

_LATE = r"(?P<late>late\s+|dear\s+late\s+|poor\s+late\s+)?"
_MY_REL_NAME = re.compile(
    rf"\bmy\s+(?:dear\s+|lovely\s+|youngest\s+|eldest\s+|oldest\s+|little\s+|other\s+|older\s+|younger\s+|big\s+|baby\s+)?"
    rf"{_LATE}(?P<rel>{_REL})(?:,\s*|\s+)(?:(?:who\s+is\s+|who's\s+)?(?:called|named)\s+{_any_name('called')}|{_NAME})",
    re.IGNORECASE,
)
_NAME_IS_MY_REL = re.compile(
    rf"(?:^|,\s*|\band\s+){_NAME}(?P<verb>\s+is|'s|\s+was|,)\s+my\s+{_LATE}(?P<rel>{_REL})\b",
    re.IGNORECASE,
)
_MY_REL_IS_CALLED = re.compile(
    rf"\bmy\s+{_LATE}(?P<rel>{_REL})(?:'s\s+name\s+(?P<verb>is|was)|\s+(?P<verb2>is|was)\s+called|\s+is\s+named)\s+{_ANY_NAME}",
    re.IGNORECASE,
)
_HAVE_A_REL = re.compile(
    rf"^i(?:\s+have|'ve\s+got|\s+have\s+got|'ve)\s+(?:a|an|one)\s+"
    rf"(?:(?:little|lovely|old|young|big|new|beautiful|gorgeous|grown-up|good|dear)\s+)?(?P<rel>{_REL})"
    rf"(?:\s+(?:called|named)\s+{_ANY_NAME})?\s*$",
    re.IGNORECASE,
)
_HAVE_COUNT = re.compile(
    rf"^i(?:\s+have|'ve\s+got|\s+have\s+got|'ve)\s+{_COUNT}\s+(?:{_PLURAL}|{_REL})\b",
    re.IGNORECASE,
)
_COUNTED = re.compile(
    rf"(?:^i(?:\s+have|'ve\s+got|\s+have\s+got|'ve)|,|\band)\s+(?P<count>{_COUNT})\s+(?P<noun>{_PLURAL}|{_REL})\b",
    re.IGNORECASE,
)
_DIED = re.compile(
    rf"\bmy\s+{_LATE}(?P<rel>{_REL})(?:,?\s+{_NAME},?)?\s+(?:has\s+|had\s+)?"
    rf"(?:died|passed\s+away|passed\s+on|passed|is\s+dead|was\s+killed)"
    rf"|\bi\s+lost\s+my\s+(?P<rel2>{_REL})(?:,?\s+(?P<name2>{_CAP_WORD}))?",
    re.IGNORECASE,
)
_WIDOW = re.compile(
    r"^i'?m\s+a\s+(?P<w>widow|widower)\b|^i\s+am\s+a\s+(?P<w2>widow|widower)\b", re.I
)


def _relationship(out: _Facts, clause: _Clause, entity: _Entity, *, rule: str, past: bool) -> None:
    relation = entity.relation or ""
    out.add(
        clause,
        type="people",
        content=f"{relation.capitalize()}'s name is {entity.label}",
        key=f"people|{entity.ref}|relationship",
        value=relation,
        confidence=0.85 if not past else 0.75,
        importance=2,
        fact_type="relationship",
        rule=rule,
        entities=(entity,),
        entity_type=entity.entity_type,
    )


def _deceased(out: _Facts, clause: _Clause, entity: _Entity, *, rule: str) -> None:
    out.deceased.add(entity.ref)
    out.add(
        clause,
        type="people",
        content=f"{entity.subject} has died",
        key=f"people|{entity.ref}|deceased",
        value="deceased",
        confidence=0.85,
        importance=3,
        fact_type="fact",
        rule=rule,
        entities=(entity,),
        entity_type=entity.entity_type,
    )


def _rule_people(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    for match in _MY_REL_NAME.finditer(text):
        name = _clean_name(match.group("called")) if match.group("called") else match.group("name")
        if not _is_name(name):
            continue
        entity = _relative(match.group("rel"), name)
        if entity:
            _relationship(out, clause, entity, rule="people.my_relation_name", past=False)
            if match.group("late"):
                _deceased(out, clause, entity, rule="people.late")
    for match in _NAME_IS_MY_REL.finditer(text):
        if not _is_name(match.group("name")):
            continue
        entity = _relative(match.group("rel"), match.group("name"))
        if entity:
            past = match.group("verb").strip() == "was"
            _relationship(out, clause, entity, rule="people.name_is_my_relation", past=past)
            if match.group("late"):
                _deceased(out, clause, entity, rule="people.late")
    for match in _MY_REL_IS_CALLED.finditer(text):
        name = _clean_name(match.group("name"))
        entity = _relative(match.group("rel"), name) if name else None
        if entity:
            past = "was" in (match.group("verb"), match.group("verb2"))
            _relationship(out, clause, entity, rule="people.my_relation_is_called", past=past)
            if match.group("late"):
                _deceased(out, clause, entity, rule="people.late")
    if match := _HAVE_A_REL.match(text):
        name = _clean_name(match.group("name")) if match.group("name") else None
        entity = _relative(match.group("rel"), name)
        if entity and name:
            _relationship(out, clause, entity, rule="people.have_a_relation_called", past=False)
        elif entity:
            out.add(
                clause,
                type="people",
                content=f"Has a {entity.relation}",
                key=f"people|self|has:{entity_slug(entity.relation or '')}",
                value="1",
                confidence=0.8,
                importance=1,
                fact_type="relationship",
                rule="people.have_a_relation",
            )
    if _HAVE_COUNT.match(text):
        # "I have two sons and a daughter": every counted relation in the list.
        for match in _COUNTED.finditer(text):
            count_word = match.group("count").lower()
            count = int(count_word) if count_word.isdigit() else _NUMBERS[count_word]
            noun = re.sub(r"\s+", " ", match.group("noun").lower())
            what = _PLURALS.get(noun) or _RELATIONS[noun]
            out.add(
                clause,
                type="people",
                content=f"Has {match.group('count')} {noun}",
                key=f"people|self|{'count' if noun in _PLURALS else 'has'}:{entity_slug(what)}",
                value=str(count),
                confidence=0.8,
                importance=1,
                fact_type="fact",
                rule="people.count",
            )
    for match in _DIED.finditer(text):
        rel = match.group("rel") or match.group("rel2")
        raw_name = match.group("name") or match.group("name2")
        name = raw_name if _is_name(raw_name) else None
        entity = _relative(rel, name)
        if entity and entity.ref not in out.deceased:
            _deceased(out, clause, entity, rule="people.died")
    if match := _WIDOW.match(text):
        word = (match.group("w") or match.group("w2")).lower()
        out.add(
            clause,
            type="profile",
            content=f"Is a {word}",
            key="profile|self|marital_status",
            value="widowed",
            confidence=0.85,
            importance=2,
            fact_type="fact",
            rule="people.widowed",
        )


# --- Rules: preferences -----------------------------------------------------------------------

_LIKE_VERBS = {
    "love": ("likes", "Loves"),
    "adore": ("likes", "Loves"),
    "like": ("likes", "Likes"),
    "enjoy": ("likes", "Enjoys"),
    "prefer": ("likes", "Prefers"),
    "am fond of": ("likes", "Is fond of"),
    "'m fond of": ("likes", "Is fond of"),
    "am a big fan of": ("likes", "Is a big fan of"),
    "'m a big fan of": ("likes", "Is a big fan of"),
    "am a fan of": ("likes", "Is a fan of"),
    "'m a fan of": ("likes", "Is a fan of"),
    "am keen on": ("likes", "Is keen on"),
    "'m keen on": ("likes", "Is keen on"),
    "don't like": ("dislikes", "Does not like"),
    "do not like": ("dislikes", "Does not like"),
    "don't really like": ("dislikes", "Does not like"),
    "don't enjoy": ("dislikes", "Does not enjoy"),
    "do not enjoy": ("dislikes", "Does not enjoy"),
    "don't care for": ("dislikes", "Does not care for"),
    "dislike": ("dislikes", "Dislikes"),
    "hate": ("dislikes", "Hates"),
    "detest": ("dislikes", "Hates"),
    "loathe": ("dislikes", "Hates"),
    "can't stand": ("dislikes", "Cannot stand"),
    "cannot stand": ("dislikes", "Cannot stand"),
    "can't bear": ("dislikes", "Cannot bear"),
    "cannot bear": ("dislikes", "Cannot bear"),
    "never liked": ("dislikes", "Has never liked"),
    "never did like": ("dislikes", "Has never liked"),
    "am not keen on": ("dislikes", "Is not keen on"),
    "'m not keen on": ("dislikes", "Is not keen on"),
    "am not fond of": ("dislikes", "Is not fond of"),
    "'m not fond of": ("dislikes", "Is not fond of"),
    "am not a fan of": ("dislikes", "Is not a fan of"),
    "'m not a fan of": ("dislikes", "Is not a fan of"),
}
# "I'm very fond of": an intensifier may sit inside the verb phrase.
_INTENSIFIER = r"(?:(?:very|really|quite|so|particularly|ever\s+so|that|terribly)\s+)?"
_LIKE = "|".join(
    re.escape(v).replace(r"\ ", rf"\s+{_INTENSIFIER}")
    for v in sorted(_LIKE_VERBS, key=len, reverse=True)
)
_ADVERBS = r"(?:(?:really|do|just|absolutely|so|still|always|also|truly|simply|quite|very\s+much|much|particularly|especially)\s+)*"
_I_LIKE = re.compile(rf"^(?:i|i(?='))\s*{_ADVERBS}(?P<verb>{_LIKE})\s+(?P<object>.+)$", re.I)
_USED_TO_LIKE = re.compile(
    rf"^i\s+used\s+to\s+{_ADVERBS}(?P<verb>love|like|enjoy|adore)\s+(?P<object>.+)$", re.I
)
_FAVOURITE = re.compile(
    r"\bmy\s+(?:very\s+)?(?:favourite|favorite)\s+(?P<what>[a-z ]{2,30}?)\s+(?:is|are|'s|was)\s+(?P<object>.+)$",
    re.I,
)
_IS_MY_FAVOURITE = re.compile(
    r"^(?P<object>[\w' -]{2,40}?)\s+(?:is|are|'s)\s+my\s+(?:very\s+)?(?:favourite|favorite)"
    r"(?:\s+(?P<what>[a-z ]{2,30}))?$",
    re.I,
)
_HOW_I_TAKE = re.compile(
    r"^i\s+(?:always\s+|usually\s+)?(?:take|have|like|drink)\s+my\s+(?P<drink>tea|coffee|cuppa|porridge|toast|eggs?|steak)\s+(?P<how>(?:with|black|white|strong|weak|milky|no|without|well|runny|hot|cold)\b.*)$",
    re.I,
)
_OTHER_LIKES = re.compile(
    rf"\bmy\s+(?P<rel>{_REL})(?:,?\s+{_NAME},?)?\s+{_ADVERBS}"
    rf"(?P<verb>loves|likes|adores|enjoys|prefers|hates|loved|liked|enjoyed|hated"
    rf"|doesn't\s+like|does\s+not\s+like|didn't\s+like|can't\s+stand)\s+(?P<object>.+)$",
    re.I,
)
_NOT_AN_OBJECT = re.compile(
    rf"^(?:it|that|this|them|him|her|you|me|us|everyone|everybody|everything|nothing|anything"
    rf"|all\s+of\s+(?:them|you)|people|being\s+here|my\s+(?:{_REL})\b|{_CAP_WORD}$)\b",
    re.I,
)
_MAX_OBJECT_WORDS = 6


def _object(raw: str) -> str | None:
    obj = _tidy(raw)
    if not obj or _NOT_AN_OBJECT.match(obj) or len(obj.split()) > _MAX_OBJECT_WORDS:
        return None
    if not re.search(r"[a-z]", obj, re.I):
        return None
    return obj


def _preference_verb(raw: str) -> str:
    text = re.sub(r"\s+", " ", raw.lower().replace("\u2019", "'"))
    return re.sub(r"\b(?:very|really|quite|so|particularly|ever so|that|terribly) ", "", text)


def _rule_preferences(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    if match := _HOW_I_TAKE.match(text):
        drink, how = match.group("drink").lower(), _tidy(match.group("how"))
        out.add(
            clause,
            type="preference",
            content=f"Takes their {drink} {how}",
            key=f"preference|self|how:{entity_slug(drink)}",
            value=_key_words(how),
            confidence=0.8,
            importance=2,
            fact_type="preference",
            rule="preference.how_i_take",
        )
        return
    if match := _I_LIKE.match(text):
        verb = _preference_verb(match.group("verb"))
        polarity, phrase = _LIKE_VERBS[verb]
        obj = _object(match.group("object"))
        if obj:
            out.add(
                clause,
                type="preference",
                content=f"{phrase} {_about_them(obj)}",
                key=f"preference|self|likes:{_key_words(obj)}",
                value=polarity,
                confidence=0.8 if verb in {"love", "adore", "hate", "can't stand"} else 0.75,
                importance=1,
                fact_type="preference",
                rule=f"preference.{polarity}",
                intensity="strong" if verb in {"love", "adore", "hate", "detest"} else "normal",
            )
        return
    if match := _USED_TO_LIKE.match(text):
        obj = _object(match.group("object"))
        if obj:
            verb = match.group("verb").lower()
            out.add(
                clause,
                type="life_story",
                content=f"Used to {verb} {_about_them(obj)}",
                key=f"life_story|self|used_to_like:{_key_words(obj)}",
                value="liked",
                confidence=0.75,
                importance=1,
                fact_type="preference",
                rule="life_story.used_to_like",
            )
        return
    match = _FAVOURITE.search(text) or _IS_MY_FAVOURITE.match(text)
    if match:
        raw = match.group("object")
        if match.re is _IS_MY_FAVOURITE:
            raw = raw[:1].lower() + raw[1:]  # capitalised only because it starts the sentence
        obj = _object(raw)
        what = _tidy(match.group("what") or "")
        if obj and what:
            out.add(
                clause,
                type="preference",
                content=f"Favourite {what} is {_about_them(obj)}",
                key=f"preference|self|favourite:{_key_words(what)}",
                value=_key_words(obj),
                confidence=0.8,
                importance=2,
                fact_type="preference",
                rule="preference.favourite",
            )
        elif obj:
            out.add(
                clause,
                type="preference",
                content=f"Loves {_about_them(obj)}",
                key=f"preference|self|likes:{_key_words(obj)}",
                value="likes",
                confidence=0.8,
                importance=1,
                fact_type="preference",
                rule="preference.favourite_thing",
            )
        return
    if match := _OTHER_LIKES.search(text):
        name = match.group("name") if _is_name(match.group("name")) else None
        entity = _relative(match.group("rel"), name)
        obj = _object(match.group("object"))
        if entity and obj:
            verb = _preference_verb(match.group("verb"))
            polarity = "dislikes" if re.search(r"hate|n't|not|stand", verb) else "likes"
            out.add(
                clause,
                type="people",
                content=f"{entity.subject} {verb} {_about_them(obj)}",
                key=f"people|{entity.ref}|likes:{_key_words(obj)}",
                value=polarity,
                confidence=0.6,
                importance=1,
                fact_type="preference",
                rule="people.their_preference",
                entities=(entity,),
                entity_type=entity.entity_type,
            )


# --- Rules: routines --------------------------------------------------------------------------

_FRONT_FREQ = re.compile(rf"^(?P<freq>{_FREQ}|{_FREQ_ADVERB}),?\s+(?P<rest>.+)$", re.I)
_BACK_FREQ = re.compile(rf"^(?P<rest>.+?),?\s+(?P<freq>{_FREQ})$", re.I)
_MID_ADVERB = re.compile(rf"^(?P<subject>i|we)\s+(?P<freq>{_FREQ_ADVERB})\s+(?P<rest>.+)$", re.I)
_I_VERB = re.compile(r"^(?P<subject>i|we)\s+(?P<verb>[a-z]+)\b(?P<rest>.*)$", re.I)
_REL_VERB = re.compile(
    rf"^my\s+(?P<rel>{_REL})(?:,?\s+{_NAME},?)?\s+(?P<verb>[a-z]+s)\b(?P<rest>.*)$", re.I
)
_STOPPED = re.compile(
    r"^i\s+(?:(?:don'?t|do\s+not)\s+(?P<verb>[a-z]+)(?P<rest>.*?)\s+(?:any\s?more|these\s+days)"
    r"|no\s+longer\s+(?P<verb2>[a-z]+)(?P<rest2>.*))$",
    re.I,
)


def _habit_verb(verb: str) -> bool:
    lower = verb.lower()
    return lower not in _NOT_HABIT_VERBS and not lower.endswith("ed") and lower.isalpha()


def _frequency(text: str) -> tuple[str | None, str]:
    """The clause's frequency phrase and what is left of the clause without it."""
    if match := _FRONT_FREQ.match(text):
        return match.group("freq"), match.group("rest")
    if match := _BACK_FREQ.match(text):
        return match.group("freq"), match.group("rest")
    if match := _MID_ADVERB.match(text):
        return match.group("freq"), f"{match.group('subject')} {match.group('rest')}"
    return None, text


def _rule_routines(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    if match := _STOPPED.match(text):
        verb = match.group("verb") or match.group("verb2")
        rest = _tidy(match.group("rest") or match.group("rest2") or "")
        if _habit_verb(verb):
            rest, _freq_dropped = _strip_freq(rest)
            activity = f"{verb} {rest}".strip()
            out.add(
                clause,
                type="routine",
                content=f"No longer {_third_person(verb)} {_about_them(rest)}",
                key=f"routine|self|{_key_words(activity)}",
                value="stopped",
                confidence=0.6,
                importance=1,
                fact_type="habit",
                rule="routine.stopped",
            )
        return
    # Frequencies may sit at both ends and in the middle ("Every Sunday I always ...").
    freqs: list[str] = []
    rest = text
    for _ in range(3):
        freq, remainder = _frequency(rest)
        if freq is None:
            break
        freqs.append(freq)
        rest = remainder
    if not freqs:
        return
    rest = _tidy(rest)
    if clock := _CLOCK.match(rest):
        rest = clock.group("rest")
    adverbs = [f.lower() for f in freqs if re.fullmatch(_FREQ_ADVERB, f, re.I)]
    phrases = [f for f in freqs if f.lower() not in adverbs]
    if clock:
        phrases.append(clock.group("clock"))
    when = _when_text(" ".join(phrases))
    adverb = adverbs[0] if adverbs else ""
    value = entity_slug(f"{adverb} {when}")
    if match := _I_VERB.match(rest):
        verb = match.group("verb")
        # "I have to ...", "I've got to ...": an obligation, not a habit.
        if not _habit_verb(verb) or (
            verb.lower() in {"have", "got"} and re.match(r"\s+to\b", match.group("rest"))
        ):
            return
        obj = _tidy(match.group("rest"))
        activity = f"{verb} {obj}".strip()
        with_others = match.group("subject").lower() == "we"
        out.add(
            clause,
            type="routine",
            content=_routine_content(_third_person(verb), obj, when, adverb=adverb),
            key=f"routine|self|{_key_words(activity)}",
            value=value,
            confidence=0.7,
            importance=1,
            fact_type="habit",
            rule="routine.i_do",
            **({"with_others": True} if with_others else {}),
        )
        return
    if match := _REL_VERB.match(rest):
        name = match.group("name") if _is_name(match.group("name")) else None
        entity = _relative(match.group("rel"), name)
        verb = match.group("verb")
        if entity is None or verb.lower() in {"is", "was", "has", "does", "likes", "loves"}:
            return
        obj = _tidy(match.group("rest"))
        activity = f"{verb} {obj}".strip()
        out.add(
            clause,
            type="routine",
            content=_routine_content(f"{entity.subject} {verb}", obj, when, adverb=adverb),
            key=f"routine|{entity.ref}|{_key_words(activity)}",
            value=value,
            confidence=0.65,
            importance=1,
            fact_type="habit",
            rule="routine.relative_does",
            entities=(entity,),
            entity_type=entity.entity_type,
        )


_CLOCK = re.compile(
    r"^(?P<rest>.+?)\s+(?P<clock>(?:at|around|about|by|before|after)\s+(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|midnight"
    r"|half\s+past\s+\w+|(?:breakfast|lunch|lunchtime|tea|teatime|dinner|supper|bedtime))"
    r"(?:\s+o'?clock)?)$",
    re.I,
)


def _routine_content(doer: str, obj: str, when: str, *, adverb: str) -> str:
    """ "Always has a nap after lunch", "Goes to church on Sundays"."""
    parts = [adverb, doer, _about_them(obj), when]
    return " ".join(p for p in parts if p)


def _strip_freq(text: str) -> tuple[str, str | None]:
    freq, rest = _frequency(text)
    return (_tidy(rest), freq) if freq else (text, None)


# --- Rules: feelings --------------------------------------------------------------------------

_FEELING_WORD = rf"(?:{_alternation(_FEELINGS)})"
_I_FEEL = re.compile(
    rf"^i(?:'m|\s+am|\s+feel|'ve\s+been\s+feeling|\s+have\s+been\s+feeling|'m\s+feeling|\s+am\s+feeling|\s+felt|\s+was\s+feeling)"
    rf"\s+(?P<adverb>{_FEELING_ADVERBS})?(?P<feeling>{_FEELING_WORD}(?:\s+and\s+{_FEELING_WORD})?)"
    rf"(?P<rest>(?:\s+(?:about|of|because)\s+.+)?)(?:\s+(?P<when>{_WHEN_WORDS}))?$",
    re.I,
)
_NOT_WELL = re.compile(
    rf"^i(?:'m|\s+am)\s+not\s+(?:feeling\s+)?(?:very\s+|too\s+|so\s+)?(?P<what>well|good|great|right|myself)(?:\s+(?P<when>{_WHEN_WORDS}))?$",
    re.I,
)


def _rule_feelings(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    if match := _NOT_WELL.match(text):
        when = match.group("when")
        content = "Does not feel well" + (f" {when.lower()}" if when else "")
        out.add(
            clause,
            type="feeling",
            content=content,
            key="feeling|self|current",
            value="unwell",
            confidence=0.6,
            importance=0,
            fact_type="feeling",
            rule="feeling.not_well",
        )
        return
    match = _I_FEEL.match(text)
    if not match:
        return
    feeling = re.sub(r"\s+", " ", match.group("feeling").lower())
    rest = _tidy(match.group("rest") or "")
    if feeling == "afraid" and not rest.lower().startswith("of"):
        return  # "I'm afraid I don't know" is politeness, not fear
    if " was " in text.lower() or " felt " in text.lower():
        tense = "Felt"
    else:
        tense = "Feels"
    adverb = (match.group("adverb") or "").strip().lower()
    when = (match.group("when") or "").lower()
    content = " ".join(p for p in (tense, adverb, feeling, _about_them(rest), when) if p)
    out.add(
        clause,
        type="feeling",
        content=content,
        key="feeling|self|current",
        value=entity_slug(feeling),
        confidence=0.6,
        importance=0,
        fact_type="feeling",
        rule="feeling.i_feel",
    )


# --- Rules: events ----------------------------------------------------------------------------

_EVENT_VERBS = {
    "coming": "visit",
    "visiting": "visit",
    "popping": "visit",
    "dropping": "visit",
    "calling": "call",
    "phoning": "call",
    "ringing": "call",
    "taking": "take",
    "going": "go",
    "picking": "pick_up",
    "bringing": "bring",
    "having": "have",
    "getting": "get",
    "staying": "stay",
    "moving": "move",
    "starting": "start",
    "flying": "fly",
    "driving": "drive",
    "waiting": "wait",
    "home": "return",
    "back": "return",
}
_PAST_EVENT_VERBS = {
    "came": "visit",
    "visited": "visit",
    "popped in": "visit",
    "dropped in": "visit",
    "phoned": "call",
    "rang": "call",
    "called": "call",
    "took me": "take",
}
# Events whose key names what they are about: "go:hospital", not just "go".
_EVENT_WITH_OBJECT = {"go", "take", "bring", "have", "get", "move", "start", "pick_up", "drive"}
_EVENT_VERB = _alternation(set(_EVENT_VERBS) - {"home", "back"})
_AUX = r"(?P<aux>is|are|am|'s|'re|'m|will\s+be|'ll\s+be|is\s+going\s+to\s+be)"
_EVENT_SUBJECT = (
    rf"(?:my\s+{_LATE}(?:(?P<rel>{_REL})(?:,?\s+{_NAME},?)?|(?P<group>{_PLURAL}|family))"
    rf"|(?P<bare>{_CAP_WORD})|(?P<i>i|we))"
)
_EVENT = re.compile(
    rf"^{_EVENT_SUBJECT}\s*{_AUX}\s+(?P<verb>{_EVENT_VERB})\b(?P<rest>.*)$"
    rf"|^{_EVENT_SUBJECT.replace('(?P<', '(?P<h_')}\s*(?P<h_aux>will\s+be|'ll\s+be|is\s+going\s+to\s+be)"
    rf"\s+(?P<h_verb>home|back)\b(?P<h_rest>.*)$",
    re.I,
)
_PAST_VISIT = re.compile(
    rf"^{_EVENT_SUBJECT}\s+(?P<verb>{_alternation(_PAST_EVENT_VERBS)})\b(?P<rest>.*)$",
    re.I,
)
_APPOINTMENT = re.compile(
    r"^i(?:'ve|\s+have)?\s+(?:got\s+)?(?P<det>a|an|my|the)\s+(?P<what>(?:[a-z']+\s+){0,2}(?:appointment|check-?up|operation|hairdresser|dentist|doctor|chiropodist|optician|clinic|scan|hospital\s+visit|day\s+centre|club))(?=\s|$)(?P<rest>.*)$",
    re.I,
)
_BIRTHDAY_EVENT = re.compile(
    r"^(?:it(?:'s|\s+is)\s+my\s+(?P<what>birthday|anniversary)\s+(?P<rest>.+)"
    r"|my\s+(?P<what2>birthday|anniversary)\s+(?:is|'s)\s+(?P<rest2>.+))$",
    re.I,
)
_TIME_RE = re.compile(rf"\b(?P<time>{_TIME})\b", re.I)
_PAST_TIME_RE = re.compile(rf"\b(?P<time>{_PAST_TIME})\b", re.I)
_RELATIVE_TIME = re.compile(
    rf"^(?:today|tonight|tomorrow|next\b|this\b|soon|later|on\s+{_DAY}\b)", re.I
)
_AUX_WORDS = {"'s": "is", "'re": "are", "'m": "am", "'ll be": "will be"}


def _event_subject(match: re.Match, out: _Facts, prefix: str = "") -> _Entity | None:
    """Who the event is about: a relative, a group, a named person; None for the person."""
    group = match.group(prefix + "group")
    if match.group(prefix + "rel"):
        raw = match.group(prefix + "name")
        return _relative(match.group(prefix + "rel"), raw if _is_name(raw) else None)
    if group:
        label = _PLURALS.get(group.lower(), group.lower()).capitalize()
        ref = entity_ref("person", label)
        return _Entity(ref, label, None, "person") if ref else None
    bare = match.group(prefix + "bare")
    if bare:
        if not _is_name(bare):
            return _relative(bare, None)  # "Mum is coming": a relation word used as a name
        ref = entity_ref("person", bare)
        if ref is None:
            return None
        # A name this message already gave a relation keeps it ("my son Tom ... Tom is").
        relation = next(
            (
                f.value
                for f in out.facts
                if ref in f.entity_refs and f.subtype["fact_type"] == "relationship"
            ),
            None,
        )
        return _Entity(ref, bare, relation, "person")
    return None


def _rule_events(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    if match := _APPOINTMENT.match(text):
        time = _TIME_RE.search(match.group("rest"))
        if time:
            what = _tidy(match.group("what")).lower()
            det = match.group("det").lower()
            det = {"my": "their", "an": "a"}.get(det, det)
            det = _article(what) if det == "a" else det
            out.add(
                clause,
                type="event",
                content=f"Has {det} {what} {_when_text(time.group('time'))}",
                key=f"event|self|appointment:{_key_words(what)}",
                value=entity_slug(time.group("time")),
                confidence=0.6,
                importance=1,
                fact_type="event",
                rule="event.appointment",
            )
        return
    if match := _BIRTHDAY_EVENT.match(text):
        what = (match.group("what") or match.group("what2")).lower()
        rest = _tidy(match.group("rest") or match.group("rest2"))
        time = _TIME_RE.match(rest)
        if time and _RELATIVE_TIME.match(rest):
            out.add(
                clause,
                type="event",
                content=f"Their {what} is {_when_text(time.group('time'))}",
                key=f"event|self|{what}",
                value=entity_slug(time.group("time")),
                confidence=0.6,
                importance=1,
                fact_type="event",
                rule="event.birthday",
            )
        return
    prefix, past = "", False
    match = _EVENT.match(text)
    if match and match.group("h_verb"):
        prefix = "h_"
    if not match:
        match = _PAST_VISIT.match(text)
        past = match is not None
    if not match:
        return
    entity = _event_subject(match, out, prefix)
    subject_word = match.group(prefix + "i")
    if subject_word is None and entity is None:
        return
    rest = match.group(prefix + "rest")
    time_match = (_PAST_TIME_RE if past else _TIME_RE).search(rest)
    if past and time_match is None:
        return  # "my son visited" with no when is history, not a dated event
    when = _when_text(time_match.group("time")) if time_match else None
    verb = re.sub(r"\s+", " ", match.group(prefix + "verb").lower())
    lemma = (_PAST_EVENT_VERBS if past else _EVENT_VERBS)[verb]
    detail = _tidy((_PAST_TIME_RE if past else _TIME_RE).sub("", rest))
    attribute = lemma
    if lemma in _EVENT_WITH_OBJECT and detail:
        attribute = f"{lemma}:{_key_words(detail, limit=4)}"
    aux = "" if past else match.group(prefix + "aux").lower()
    aux = re.sub(r"\s+", " ", _AUX_WORDS.get(aux, aux))
    if subject_word is not None:
        # The person themself: "Is going to the hospital on Tuesday".
        aux = {"am": "is", "are": "is"}.get(aux, aux)
        content = f"{aux} {verb}{rest}"
    else:
        content = f"{entity.subject} {aux} {verb}{rest}"
    confidence = 0.55 if past else 0.6
    extra: dict[str, Any] = {}
    if subject_word is not None and subject_word.lower() == "we":
        extra["with_others"] = True
    if entity is not None and entity.ref in out.deceased and not past:
        # The sentence itself says this person has died: a time-shifted memory, not a plan.
        confidence = CONFLICT_CONFIDENCE
        extra["conflict"] = "deceased_person_expected"
    elif entity is not None and entity.relation in _PARENTS and not past:
        confidence = PARENT_VISIT_CONFIDENCE
        extra["caution"] = "parent_expected"
    out.add(
        clause,
        type="event",
        content=_about_them(_tidy(content)),
        key=f"event|{entity.ref if entity else 'self'}|{attribute}",
        value=entity_slug(when) if when else "upcoming",
        confidence=confidence,
        importance=1,
        fact_type="event",
        rule="event.past" if past else "event.coming",
        entities=(entity,) if entity else (),
        entity_type=entity.entity_type if entity else "self",
        **extra,
    )


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


# --- Rules: life story and profile ------------------------------------------------------------

_OCCUPATION = re.compile(
    r"^i\s+(?:was|used\s+to\s+be|worked\s+as|trained\s+as|qualified\s+as|became|'m\s+a\s+retired|am\s+a\s+retired)"
    r"\s+(?:a|an)?\s*(?P<occ>(?:[a-z'-]+\s+){0,2}?[a-z'-]+)(?P<rest>(?:\s+(?:for|at|in|on|until|till|during|before|after)\b.*)?)$",
    re.I,
)
_RETIRED_OCC = re.compile(
    r"^i(?:'m|\s+am)\s+a\s+retired\s+(?P<occ>(?:[a-z'-]+\s+){0,2}?[a-z'-]+)$", re.I
)
_WORKED_AT = re.compile(
    r"^i\s+(?:worked|used\s+to\s+work)\s+(?P<prep>at|in|for)\s+(?P<place>(?:the\s+|a\s+)?[\w'&-]+(?:\s+[\w'&-]+){0,4}?)"
    r"(?P<rest>(?:\s+(?:for|until|till|during|in|when)\b.*)?)$",
    re.I,
)
_GREW_UP = re.compile(
    r"^i\s+(?P<verb>grew\s+up|was\s+brought\s+up|was\s+raised|was\s+born\s+and\s+(?:bred|raised|brought\s+up))\s+(?:in|on|near)\s+(?P<place>.+)$",
    re.I,
)
_BORN = re.compile(
    r"^i\s+was\s+born\s+(?:in|at)\s+(?P<what>.+?)(?:\s+in\s+(?P<year>(?:18|19|20)\d{2}))?$", re.I
)
_BORN_ON = re.compile(r"^i\s+was\s+born\s+on\s+(?P<date>.+)$", re.I)
_MARRIED = re.compile(
    rf"^i\s+(?P<verb>married|got\s+married\s+to|was\s+married\s+to|wed)\s+{_NAME}(?P<rest>.*)$|^i\s+got\s+married\s+in\s+(?P<year>(?:18|19|20)\d{{2}})",
    re.I,
)
_SERVED = re.compile(
    r"^i\s+(?:was|served)\s+in\s+the\s+(?P<service>army|navy|royal\s+navy|merchant\s+navy|raf|royal\s+air\s+force|air\s+force|land\s+army|wrens|waaf|wrns|ats|marines|home\s+guard)\b(?P<rest>.*)$",
    re.I,
)
_USED_TO_LIVE = re.compile(
    r"^i\s+(?:used\s+to\s+live|lived)\s+in\s+(?P<place>[\w' -]+?)(?P<rest>\s+(?:for|until|till|when|as)\b.*)?$",
    re.I,
)
_USED_TO_DO = re.compile(r"^(?P<subject>i|we)\s+used\s+to\s+(?P<verb>[a-z]+)\b(?P<rest>.*)$", re.I)
_RETIRED = re.compile(r"^i\s+retired\s+(?P<rest>(?:in|from|at|when)\b.+)$", re.I)
_LIVE_IN = re.compile(
    r"^i\s+(?:live|'m\s+living|am\s+living)\s+(?P<prep>in|at|on)\s+(?P<place>.+)$", re.I
)
_LIVE_WITH = re.compile(
    rf"^i\s+(?:live|'m\s+living|am\s+living)\s+(?:with\s+my\s+(?P<rel>{_REL})(?:,?\s+{_NAME})?|(?P<alone>alone|on\s+my\s+own|by\s+myself))\b",
    re.I,
)
_AGE = re.compile(r"^i(?:'m|\s+am)\s+(?P<age>[5-9]\d|1[01]\d)(?:\s+years?\s+(?:old|young))?$", re.I)
_FROM = re.compile(r"^i(?:'m|\s+am|\s+come)\s+(?:originally\s+)?from\s+(?P<place>.+)$", re.I)
_BIRTHDAY = re.compile(r"^my\s+birthday\s+(?:is|'s)\s+(?:on\s+|in\s+)?(?P<date>.+)$", re.I)
_NOT_A_PLACE = re.compile(r"^(?:here|there|home|it|this|that|the\s+same|a\s+mess)\b", re.I)


def _place(raw: str) -> tuple[str, _Entity | None] | None:
    place = _tidy(raw)
    if not place or _NOT_A_PLACE.match(place) or len(place.split()) > 5:
        return None
    if place[:1].isupper():
        ref = entity_ref("place", place)
        return place, _Entity(ref, place, None, "place") if ref else None
    return place, None


def _head_is_occupation(phrase: str) -> bool:
    words = phrase.lower().split()
    return bool(words) and words[-1] in _OCCUPATIONS


def _rule_life_story(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    match = _RETIRED_OCC.match(text) or _OCCUPATION.match(text)
    if match and _head_is_occupation(match.group("occ")):
        occ = match.group("occ").lower()
        rest = _tidy(match.groupdict().get("rest") or "")
        content = f"Worked as {_article(occ)} {occ}" + (f" {_about_them(rest)}" if rest else "")
        out.add(
            clause,
            type="life_story",
            content=content,
            key="life_story|self|occupation",
            value=entity_slug(occ),
            confidence=0.8,
            importance=2,
            fact_type="fact",
            rule="life_story.occupation",
        )
        return
    if match := _WORKED_AT.match(text):
        place = _tidy(match.group("place"))
        if place.lower() not in {"hard", "there", "here", "it"} and not _NOT_A_PLACE.match(place):
            rest = _tidy(match.group("rest") or "")
            found = _place(place)
            entities = (found[1],) if found and found[1] else ()
            out.add(
                clause,
                type="life_story",
                content=f"Worked {match.group('prep').lower()} {_about_them(place)}"
                + (f" {_about_them(rest)}" if rest else ""),
                key=f"life_story|self|worked_at:{_key_words(place)}",
                value=_key_words(place),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.workplace",
                entities=entities,
            )
        return
    if match := _GREW_UP.match(text):
        found = _place(match.group("place"))
        if found:
            place, entity = found
            out.add(
                clause,
                type="life_story",
                content=f"Grew up in {place}",
                key="life_story|self|grew_up",
                value=_key_words(place),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.grew_up",
                entities=(entity,) if entity else (),
            )
        return
    if match := _BORN.match(text):
        what, year = _tidy(match.group("what")), match.group("year")
        if re.fullmatch(r"(?:18|19|20)\d{2}", what):
            what, year = "", what
        found = _place(what) if what else None
        if found:
            place, entity = found
            out.add(
                clause,
                type="life_story",
                content=f"Was born in {place}",
                key="life_story|self|birthplace",
                value=_key_words(place),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.born_in",
                entities=(entity,) if entity else (),
            )
        if year:
            out.add(
                clause,
                type="profile",
                content=f"Was born in {year}",
                key="profile|self|birth_year",
                value=year,
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="profile.birth_year",
            )
        return
    if match := _BORN_ON.match(text):
        date = _tidy(match.group("date"))
        out.add(
            clause,
            type="profile",
            content=f"Was born on {date}",
            key="profile|self|birth_date",
            value=entity_slug(date),
            confidence=0.8,
            importance=2,
            fact_type="fact",
            rule="profile.born_on",
        )
        return
    if match := _MARRIED.match(text):
        if match.group("year"):
            out.add(
                clause,
                type="life_story",
                content=f"Got married in {match.group('year')}",
                key="life_story|self|married",
                value=match.group("year"),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.married",
            )
        elif _is_name(match.group("name")):
            name = match.group("name")
            ref = entity_ref("person", name)
            entity = _Entity(ref, name, None, "person") if ref else None
            rest = _tidy(match.group("rest") or "")
            out.add(
                clause,
                type="life_story",
                content=f"{match.group('verb')} {name}" + (f" {_about_them(rest)}" if rest else ""),
                key="life_story|self|married",
                value=entity_slug(name),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.married",
                entities=(entity,) if entity else (),
            )
        return
    if match := _SERVED.match(text):
        service = match.group("service")
        service = (
            service.upper()
            if service.lower() in {"raf", "waaf", "wrns", "ats"}
            else service.lower()
        )
        rest = _tidy(match.group("rest") or "")
        out.add(
            clause,
            type="life_story",
            content=f"Served in the {service}" + (f" {_about_them(rest)}" if rest else ""),
            key="life_story|self|service",
            value=entity_slug(service),
            confidence=0.8,
            importance=2,
            fact_type="fact",
            rule="life_story.service",
        )
        return
    if match := _USED_TO_LIVE.match(text):
        found = _place(match.group("place"))
        if found:
            place, entity = found
            rest = _tidy(match.group("rest") or "")
            out.add(
                clause,
                type="life_story",
                content=f"Used to live in {place}" + (f" {_about_them(rest)}" if rest else ""),
                key=f"life_story|self|lived_in:{_key_words(place)}",
                value=_key_words(place),
                confidence=0.75,
                importance=1,
                fact_type="fact",
                rule="life_story.lived_in",
                entities=(entity,) if entity else (),
            )
        return
    if match := _RETIRED.match(text):
        rest = _tidy(match.group("rest"))
        out.add(
            clause,
            type="life_story",
            content=f"Retired {_about_them(rest)}",
            key="life_story|self|retired",
            value=_key_words(rest),
            confidence=0.75,
            importance=1,
            fact_type="fact",
            rule="life_story.retired",
        )
        return
    if match := _USED_TO_DO.match(text):
        verb = match.group("verb")
        rest = _tidy(match.group("rest"))
        if _habit_verb(verb) and verb.lower() not in {"live", "work", "be"}:
            activity = f"{verb} {rest}".strip()
            out.add(
                clause,
                type="life_story",
                content=f"Used to {verb.lower()} {_about_them(rest)}",
                key=f"life_story|self|used_to:{_key_words(activity)}",
                value="past",
                confidence=0.7,
                importance=1,
                fact_type="fact",
                rule="life_story.used_to",
            )


def _rule_profile(clause: _Clause, out: _Facts) -> None:
    text = clause.text
    if match := _LIVE_WITH.match(text):
        if match.group("alone"):
            out.add(
                clause,
                type="profile",
                content="Lives alone",
                key="profile|self|lives_with",
                value="alone",
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="profile.lives_alone",
            )
            return
        name = match.group("name") if _is_name(match.group("name")) else None
        entity = _relative(match.group("rel"), name)
        if entity:
            out.add(
                clause,
                type="profile",
                content=f"Lives with their {entity.relation}"
                + (f" {entity.label}" if name else ""),
                key="profile|self|lives_with",
                value=entity.ref,
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="profile.lives_with",
                entities=(entity,),
            )
        return
    if match := _LIVE_IN.match(text):
        found = _place(match.group("place"))
        if found:
            place, entity = found
            out.add(
                clause,
                type="profile",
                content=f"Lives {match.group('prep').lower()} {_about_them(place)}",
                key="profile|self|home",
                value=_key_words(place),
                confidence=0.75,
                importance=2,
                fact_type="fact",
                rule="profile.lives_in",
                entities=(entity,) if entity else (),
            )
        return
    if match := _AGE.match(text):
        out.add(
            clause,
            type="profile",
            content=f"Is {match.group('age')} years old",
            key="profile|self|age",
            value=match.group("age"),
            confidence=0.7,
            importance=1,
            fact_type="fact",
            rule="profile.age",
        )
        return
    if match := _FROM.match(text):
        found = _place(match.group("place"))
        if found:
            place, entity = found
            out.add(
                clause,
                type="life_story",
                content=f"Comes from {place}",
                key="life_story|self|from",
                value=_key_words(place),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="life_story.from",
                entities=(entity,) if entity else (),
            )
        return
    if match := _BIRTHDAY.match(text):
        date = _tidy(match.group("date"))
        if date and not _RELATIVE_TIME.match(date):
            out.add(
                clause,
                type="profile",
                content=f"Birthday is {'in' if date.split()[0].lower() in _MONTHS else 'on'} {date}",
                key="profile|self|birthday",
                value=entity_slug(date),
                confidence=0.8,
                importance=2,
                fact_type="fact",
                rule="profile.birthday",
            )


# --- Clauses and the pipeline -----------------------------------------------------------------

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|;\s*|\s+-\s+")
_CLAUSE_SPLIT = re.compile(
    r",?\s+but\s+|,\s+(?:and\s+|so\s+|because\s+)?(?=(?:i|i'm|i've|my|we|it's)\b)"
    r"|\s+(?:and|so|because)\s+(?=(?:i|i'm|i've|my|we)\b)",
    re.IGNORECASE,
)
_FRONT_ONLY = re.compile(rf"^(?:{_FREQ}|{_FREQ_ADVERB}|{_TIME}|{_PAST_TIME})$", re.I)
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in set(PLACEHOLDERS.values())))


def _normalise(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"')
    return re.sub(r"[ \t]+", " ", text)


def _clauses(sentence: str) -> Iterator[str]:
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(sentence) if p and p.strip()]
    merged: list[str] = []
    for part in parts:
        # "On Sundays, I go to church": the frequency belongs to the clause after it.
        if merged and _FRONT_ONLY.match(merged[-1].strip(" ,")):
            merged[-1] = f"{merged[-1].strip(' ,')} {part}"
        elif merged and merged[-1].lower() in {"me", "i"}:
            merged[-1] = f"{merged[-1]} and {part}"  # "Me and my husband used to ..."
        else:
            merged.append(part)
    yield from merged


_WE = re.compile(
    rf"^(?:(?:me|i)\s+and\s+my\s+(?:{_REL})(?:\s+{_CAP_WORD})?|my\s+(?:{_REL})(?:\s+{_CAP_WORD})?\s+and\s+(?:i|me))\b",
    re.IGNORECASE,
)


def _prepare(raw: str, *, hedged: bool = False) -> tuple[str, bool] | None:
    """Fillers and hedges off the front; None when the clause is uncertain or held a secret."""
    text = _FILLER.sub("", raw.strip(' ,.!"')).strip()
    if not text or _PLACEHOLDER.search(text):
        return None
    if _HEDGE.search(text):
        hedged = True
        text = _HEDGE.sub("", text).strip(" ,")
        text = _FILLER.sub("", text).strip()
    if not text or _UNCERTAIN.search(text):
        return None
    # "Me and my husband used to ...": the person and someone else, said as "we".
    text = _WE.sub("we", text)
    return text, hedged


_SENTENCE_RULES = (_rule_people,)
_CLAUSE_RULES = (
    _rule_names,
    _rule_preferences,
    _rule_routines,
    _rule_feelings,
    _rule_life_story,
    _rule_profile,
    _rule_events,
)


def extract_facts(text: str, *, speaker: str = "person") -> list[ExtractedFact]:
    """Candidate facts the person states in `text`; nothing from anyone else's words.

    Pure: reads only the text. Facts come in the order they were said, one per memory_key and
    value; two different values for one key in one message are both kept at low confidence,
    marked `metadata["conflict"] = "contradiction_in_message"`.
    """
    if speaker != "person" or not text or not text.strip():
        return []
    safe = _normalise(redact(text).text)
    out = _Facts()
    for sentence in _SENTENCE_SPLIT.split(safe):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue  # a question states nothing
        body = sentence.rstrip(" .!")
        # "My daughter is coming, I think": a hedge anywhere hedges the whole sentence.
        sentence_hedged = _HEDGE.search(body) is not None
        prepared = _prepare(body)
        if prepared is not None:
            for rule in _SENTENCE_RULES:
                rule(_Clause(prepared[0], prepared[1], sentence), out)
        for clause_text in _clauses(body):
            prepared = _prepare(clause_text, hedged=sentence_hedged)
            if prepared is None:
                continue
            clause = _Clause(prepared[0], prepared[1], sentence)
            for rule in _CLAUSE_RULES:
                rule(clause, out)
    return _settle(out.facts)


def _settle(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """One fact per (key, value), the most confident; contradictions inside the message marked."""
    best: dict[tuple[str, str], ExtractedFact] = {}
    for fact in facts:
        slot = (fact.memory_key, fact.value)
        if slot not in best or fact.confidence > best[slot].confidence:
            best[slot] = fact
    values_per_key: dict[str, set[str]] = {}
    for key, value in best:
        values_per_key.setdefault(key, set()).add(value)
    settled = []
    for fact in best.values():
        if len(values_per_key[fact.memory_key]) > 1:
            fact = replace(
                fact,
                confidence=min(fact.confidence, CONTRADICTION_CONFIDENCE),
                metadata={**fact.metadata, "conflict": "contradiction_in_message"},
            )
        settled.append(fact)
    return settled
