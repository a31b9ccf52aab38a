"""The shared parts of the extractor: the fact type, entity refs, vocabulary and grammar."""

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

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
    alone
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
    r"|nowadays|at\s+all|you\s+know|dear|love|darling|of\s+course|thank\s+you|thanks))+$",
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
    (r"\b[Ii] was\b", "they were"),
    (r"\b[Ii] am\b", "they are"),
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


# Shared by several rule families.
_LATE = r"(?P<late>late\s+|dear\s+late\s+|poor\s+late\s+)?"
_TIME_RE = re.compile(rf"\b(?P<time>{_TIME})\b", re.I)
_PAST_TIME_RE = re.compile(rf"\b(?P<time>{_PAST_TIME})\b", re.I)
_RELATIVE_TIME = re.compile(
    rf"^(?:today|tonight|tomorrow|next\b|this\b|soon|later|on\s+{_DAY}\b)", re.I
)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _habit_verb(verb: str) -> bool:
    lower = verb.lower()
    return lower not in _NOT_HABIT_VERBS and not lower.endswith("ed") and lower.isalpha()
