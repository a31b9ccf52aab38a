"""People in the person's life, as the profile shows them: what caregivers entered merged with
what Clara heard in conversation, each saying where it came from, disagreements flagged.

Three sources name someone: the settings' list (`CaregiverContext.family`, entered when the
person was set up), memories the care team added on the profile (`Memory.Source.CAREGIVER`:
confirmed when staff added them, waiting for staff when family did), and memories the fact
reader took from the person's words (unconfirmed until staff confirm them). They are one person
when their entity refs are the same ("person:claire"). Two different relations for one person
("daughter" / "niece") is a disagreement for a human to resolve: nothing here picks a winner.
"""

from dataclasses import dataclass, field

from memory.core.person import CaregiverContext
from memory.facts import store
from memory.models import Memory, Person

SETTINGS = "settings"
CARE_TEAM = "care team"
CONVERSATION = "conversation"
SOURCE_WORDS = {
    SETTINGS: "entered when {name} was set up",
    CARE_TEAM: "entered by the care team",
    CONVERSATION: "heard in conversation",
}
_ENTERED = {Memory.Source.CAREGIVER, Memory.Source.SEEDED_PROFILE}


@dataclass
class Mention:
    """One source saying someone is in the person's life."""

    source: str  # SETTINGS, CARE_TEAM or CONVERSATION
    relation: str  # "daughter"; "" when this source does not say
    confirmed: bool
    content: str = ""
    memory: Memory | None = None
    index: int | None = None  # the position in the settings' list (SETTINGS only)
    visit_day: str = ""

    @property
    def entered(self) -> bool:
        return self.source != CONVERSATION


@dataclass
class LifePerson:
    ref: str  # "person:claire"
    name: str
    mentions: list[Mention] = field(default_factory=list)

    @property
    def relations(self) -> list[str]:
        """The different relations the sources give, as first said."""
        seen: dict[str, str] = {}
        for mention in self.mentions:
            if mention.relation:
                seen.setdefault(mention.relation.casefold(), mention.relation)
        return list(seen.values())

    @property
    def relation(self) -> str:
        """The relation a confirmed source gives, else any ("" when none says)."""
        for mention in sorted(self.mentions, key=lambda m: not m.confirmed):
            if mention.relation:
                return mention.relation
        return ""

    @property
    def conflict(self) -> bool:
        return len(self.relations) > 1

    @property
    def confirmed(self) -> bool:
        return any(mention.confirmed for mention in self.mentions)

    @property
    def entered(self) -> bool:
        return any(mention.entered for mention in self.mentions)

    @property
    def learned(self) -> bool:
        return any(not mention.entered for mention in self.mentions)


def _relation_of(memory: Memory, ref: str) -> str:
    if memory.memory_key != f"people|{ref}|relationship":
        return ""
    value = (memory.metadata or {}).get("value")
    return str(value).strip() if isinstance(value, str) else ""


def people_in_life(*, person: Person) -> list[LifePerson]:
    """Everyone in the person's life that the settings or Clara's memory name, disagreements
    first, then by name. Reads the person's live memories once (decrypted in Python)."""
    about = CaregiverContext.of(person)
    found: dict[str, LifePerson] = {}

    def entry(ref: str, name: str) -> LifePerson:
        if ref not in found:
            found[ref] = LifePerson(ref=ref, name=name)
        return found[ref]

    for index, contact in enumerate(about.family):
        ref = store.entity_ref("person", contact.name)
        entry(ref, contact.name).mentions.append(
            Mention(
                source=SETTINGS,
                relation=contact.relation,
                confirmed=True,
                index=index,
                visit_day=contact.visit_day,
            )
        )
    # Memories about the person themself may name them ("person:pat"): not someone in their life.
    themself = {"person:self"} | {
        store.entity_ref("person", n) for n in (about.preferred_name, about.display_name) if n
    }
    for memory in store.memory_list_for_person(person.id):
        labels = memory.entity_labels or {}
        refs = list(memory.entity_refs or [])
        # A relationship memory names its person in its key too ("people|person:sarah|…").
        key = (memory.memory_key or "").split("|")
        if len(key) == 3 and key[0] == "people" and key[2] == "relationship" and key[1] not in refs:
            refs.append(key[1])
        for ref in refs:
            if not isinstance(ref, str) or not ref.startswith("person:") or ref in themself:
                continue
            label = str(labels.get(ref) or ref.split(":", 1)[1].replace("_", " ").title())
            source = CARE_TEAM if memory.source in _ENTERED else CONVERSATION
            entry(ref, label).mentions.append(
                Mention(
                    source=source,
                    relation=_relation_of(memory, ref),
                    confirmed=memory.confirmed,
                    content=memory.content,
                    memory=memory,
                )
            )
    return sorted(found.values(), key=lambda p: (not p.conflict, p.name.casefold()))


def conflict_sentence(life: LifePerson, *, name: str) -> str:
    """What disagrees, for the caregiver who will resolve it."""
    said = []
    for relation in life.relations:
        sources = sorted(
            {
                SOURCE_WORDS[m.source].format(name=name)
                for m in life.mentions
                if m.relation.casefold() == relation.casefold()
            }
        )
        said.append(f"{name}'s {relation} ({' and '.join(sources)})")
    return (
        f"These disagree: {life.name} is " + ", or ".join(said) + ". "
        "Check with the family, then confirm the right one and forget or remove the other."
    )
