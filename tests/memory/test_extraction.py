"""Rule-based extraction of candidate facts from the person's own words."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.facts.extraction import (
    ENTITY_REF_RE,
    FACT_TYPES,
    MEMORY_TYPES,
    SLUG_MAX,
    ExtractedFact,
    entity_ref,
    entity_slug,
    extract_facts,
)


def _one(text: str, **filters) -> ExtractedFact:
    facts = [
        f
        for f in extract_facts(text)
        if all(getattr(f, name) == value for name, value in filters.items())
    ]
    assert len(facts) == 1, (text, extract_facts(text))
    return facts[0]


def _keys(text: str) -> set[tuple[str, str]]:
    return {(f.memory_key, f.value) for f in extract_facts(text)}


# --- What is extracted ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "type_", "content", "key", "value", "refs"),
    [
        # Names
        (
            "My name is Margaret.",
            "profile",
            "Name is Margaret",
            "profile|self|name",
            "margaret",
            (),
        ),
        ("my name's joan", "profile", "Name is Joan", "profile|self|name", "joan", ()),
        ("Hello, I'm Joan.", "profile", "Name is Joan", "profile|self|name", "joan", ()),
        (
            "Everyone calls me Nana.",
            "profile",
            "Likes to be called Nana",
            "profile|self|preferred_name",
            "nana",
            (),
        ),
        (
            "Please don't call me Maggie, I never liked it.",
            "preference",
            "Does not like being called Maggie",
            "preference|self|called:maggie",
            "dislikes",
            (),
        ),
        # People and relationships
        (
            "My daughter Sarah rang this morning.",
            "people",
            "Daughter's name is Sarah",
            "people|person:sarah|relationship",
            "daughter",
            ("person:sarah",),
        ),
        (
            "Sarah's my daughter, you know.",
            "people",
            "Daughter's name is Sarah",
            "people|person:sarah|relationship",
            "daughter",
            ("person:sarah",),
        ),
        (
            "My neighbour Mrs Patel is very kind.",
            "people",
            "Neighbour's name is Mrs Patel",
            "people|person:mrs_patel|relationship",
            "neighbour",
            ("person:mrs_patel",),
        ),
        (
            "I've got a little dog called Benji.",
            "people",
            "Dog's name is Benji",
            "people|pet:benji|relationship",
            "dog",
            ("pet:benji",),
        ),
        (
            "I have three grandchildren.",
            "people",
            "Has three grandchildren",
            "people|self|count:grandchildren",
            "3",
            (),
        ),
        # Preferences
        (
            "I love a nice cup of tea.",
            "preference",
            "Loves a nice cup of tea",
            "preference|self|likes:nice_cup_of_tea",
            "likes",
            (),
        ),
        (
            "I don't like loud music.",
            "preference",
            "Does not like loud music",
            "preference|self|likes:loud_music",
            "dislikes",
            (),
        ),
        (
            "I can't stand the cold.",
            "preference",
            "Cannot stand the cold",
            "preference|self|likes:cold",
            "dislikes",
            (),
        ),
        (
            "I'm ever so fond of Frank Sinatra.",
            "preference",
            "Is fond of Frank Sinatra",
            "preference|self|likes:frank_sinatra",
            "likes",
            (),
        ),
        (
            "My favourite flowers are roses.",
            "preference",
            "Favourite flowers is roses",
            "preference|self|favourite:flowers",
            "roses",
            (),
        ),
        (
            "I take my tea with milk and two sugars.",
            "preference",
            "Takes their tea with milk and two sugars",
            "preference|self|how:tea",
            "with_milk_and_two_sugars",
            (),
        ),
        # Routines
        (
            "I walk the dog every morning.",
            "routine",
            "Walks the dog every morning",
            "routine|self|walk_dog",
            "every_morning",
            (),
        ),
        (
            "On Sundays, I go to church.",
            "routine",
            "Goes to church on Sundays",
            "routine|self|go_to_church",
            "on_sundays",
            (),
        ),
        (
            "Oh yes, I always have a nap after lunch.",
            "routine",
            "Always has a nap after lunch",
            "routine|self|have_nap",
            "always_after_lunch",
            (),
        ),
        (
            "I don't go to bingo any more.",
            "routine",
            "No longer goes to bingo",
            "routine|self|go_to_bingo",
            "stopped",
            (),
        ),
        # Feelings
        (
            "I feel lonely today.",
            "feeling",
            "Feels lonely today",
            "feeling|self|current",
            "lonely",
            (),
        ),
        ("I'm feeling a bit low.", "feeling", "Feels a bit low", "feeling|self|current", "low", ()),
        (
            "I'm not feeling very well today.",
            "feeling",
            "Does not feel well today",
            "feeling|self|current",
            "unwell",
            (),
        ),
        (
            "I'm worried about my son.",
            "feeling",
            "Feels worried about their son",
            "feeling|self|current",
            "worried",
            (),
        ),
        # Events
        (
            "My grandson is visiting on Saturday.",
            "event",
            "Grandson is visiting on Saturday",
            "event|person:grandson|visit",
            "on_saturday",
            ("person:grandson",),
        ),
        (
            "I'm going to the hospital on Tuesday.",
            "event",
            "Is going to the hospital on Tuesday",
            "event|self|go:to_hospital",
            "on_tuesday",
            (),
        ),
        (
            "I've got the hairdresser on Thursday morning.",
            "event",
            "Has the hairdresser on Thursday morning",
            "event|self|appointment:hairdresser",
            "on_thursday_morning",
            (),
        ),
        (
            "It's my birthday next week.",
            "event",
            "Their birthday is next week",
            "event|self|birthday",
            "next_week",
            (),
        ),
        # Life story and profile
        (
            "I was a nurse.",
            "life_story",
            "Worked as a nurse",
            "life_story|self|occupation",
            "nurse",
            (),
        ),
        (
            "I was a district nurse for thirty years.",
            "life_story",
            "Worked as a district nurse for thirty years",
            "life_story|self|occupation",
            "district_nurse",
            (),
        ),
        (
            "I grew up in Leeds.",
            "life_story",
            "Grew up in Leeds",
            "life_story|self|grew_up",
            "leeds",
            ("place:leeds",),
        ),
        (
            "I worked at the mill for 20 years.",
            "life_story",
            "Worked at the mill for 20 years",
            "life_story|self|worked_at:mill",
            "mill",
            (),
        ),
        (
            "I was in the Land Army during the war.",
            "life_story",
            "Served in the land army during the war",
            "life_story|self|service",
            "land_army",
            (),
        ),
        (
            "I was married to Albert for 52 years.",
            "life_story",
            "Was married to Albert for 52 years",
            "life_story|self|married",
            "albert",
            ("person:albert",),
        ),
        (
            "Me and my husband used to go dancing every Saturday.",
            "life_story",
            "Used to go dancing every Saturday",
            "life_story|self|used_to:go_dancing_every_saturday",
            "past",
            (),
        ),
        (
            "I worked on the railway for forty years.",
            "life_story",
            "Worked on the railway for forty years",
            "life_story|self|worked_at:railway",
            "railway",
            (),
        ),
        (
            "I sang in the church choir for years and years.",
            "life_story",
            "Sang in the church choir for years and years",
            "life_story|self|did:sang_in_church_choir",
            "past",
            (),
        ),
        (
            "I was in the navy when I was young, you know.",
            "life_story",
            "Served in the navy when they were young",
            "life_story|self|service",
            "navy",
            (),
        ),
        (
            "I miss my mum.",
            "feeling",
            "Misses their mother",
            "feeling|self|misses:person:mother",
            "misses",
            ("person:mother",),
        ),
        ("I feel so alone here.", "feeling", "Feels so alone", "feeling|self|current", "alone", ()),
        (
            "I feel quite calm today, thank you.",
            "feeling",
            "Feels quite calm today",
            "feeling|self|current",
            "calm",
            (),
        ),
        (
            "I live with my daughter.",
            "profile",
            "Lives with their daughter",
            "profile|self|lives_with",
            "person:daughter",
            ("person:daughter",),
        ),
        ("I'm 92 years old.", "profile", "Is 92 years old", "profile|self|age", "92", ()),
        (
            "My birthday is in June.",
            "profile",
            "Birthday is in June",
            "profile|self|birthday",
            "june",
            (),
        ),
    ],
)
def test_a_plain_statement_gives_its_fact(text, type_, content, key, value, refs):
    fact = _one(text, memory_key=key)

    assert (fact.type, fact.content, fact.value, fact.entity_refs) == (type_, content, value, refs)
    assert 0.5 <= fact.confidence <= 1
    assert fact.metadata["rule"]
    assert fact.metadata["source_text"]


def test_one_message_can_give_several_facts():
    facts = extract_facts(
        "My name is Edna and I grew up in Hull. I was a teacher, and I love gardening."
    )

    assert {f.memory_key for f in facts} == {
        "profile|self|name",
        "life_story|self|grew_up",
        "life_story|self|occupation",
        "preference|self|likes:gardening",
    }


def test_entity_labels_and_subtype_describe_the_entity():
    fact = _one("My grandson Tom is coming to see me tomorrow.", type="people")

    assert fact.entity_refs == ("person:tom",)
    assert fact.entity_labels == {"person:tom": "Tom"}
    assert fact.subtype == {"entity_type": "person", "fact_type": "relationship"}
    assert fact.importance == 2


def test_the_event_about_a_named_relative_uses_the_same_entity():
    event = _one("My grandson Tom is coming to see me tomorrow.", type="event")

    assert event.entity_refs == ("person:tom",)
    assert event.content == "Grandson Tom is coming to see them tomorrow"
    assert event.value == "tomorrow"


# --- Same fact, same key; contradiction, same key, other value ---------------------------------


@pytest.mark.parametrize(
    "sayings",
    [
        [
            "My daughter Sarah lives nearby.",
            "Sarah is my daughter.",
            "My daughter is called Sarah.",
            "My daughter's name is Sarah.",
        ],
        ["I love tea.", "I really like tea.", "Oh, I do love tea, dear.", "I adore tea."],
        [
            "I walk the dog every morning.",
            "Every morning I walk my dog.",
            "Every morning, I walk the dog.",
        ],
        ["My name is Margaret.", "my name's Margaret", "I'm called Margaret."],
        ["I was a nurse.", "I used to be a nurse.", "I worked as a nurse."],
    ],
)
def test_the_same_fact_said_differently_gives_the_same_key_and_value(sayings):
    keys = [_keys(saying) for saying in sayings]

    assert all(k == keys[0] for k in keys), list(zip(sayings, keys, strict=True))
    assert keys[0]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I love tea.", "I don't like tea any more, I hate it."),
        ("My favourite colour is blue.", "My favourite colour is green."),
        ("I walk the dog every morning.", "I walk the dog every evening."),
        ("I walk the dog every morning.", "I don't walk the dog any more."),
        ("Sarah is my daughter.", "Sarah is my granddaughter."),
        ("My grandson is visiting on Saturday.", "My grandson is visiting on Sunday."),
        ("I feel lonely today.", "I feel happy today."),
    ],
)
def test_a_contradiction_gives_the_same_key_with_another_value(first, second):
    before = {f.memory_key: f.value for f in extract_facts(first)}
    after = {f.memory_key: f.value for f in extract_facts(second)}

    shared = set(before) & set(after)
    assert shared, (before, after)
    assert all(before[key] != after[key] for key in shared)


# --- What is not extracted --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # Questions and the companion's kind of talk
        "Is my daughter coming today?",
        "Where am I?",
        "Do you think I like tea?",
        "What's my name?",
        # Uncertain, hypothetical, wished for
        "I think maybe my daughter is called Sarah.",
        "I'm not sure if my son is coming.",
        "Maybe I'll go to church on Sunday.",
        "I might have been a nurse, I can't remember.",
        "If I had a dog I'd walk it every day.",
        "I'd love a cup of tea.",
        "I would like to go home.",
        "I wish I could see my mother.",
        "I hope my daughter comes today.",
        "I don't know if I like it here.",
        "I can't remember if my son came.",
        # Negated claims that mean nothing on their own
        "I don't have a daughter.",
        "Sarah isn't my daughter.",
        "I'm not a nurse.",
        # Not about a fact of the person's life
        "I love you.",
        "I like it here.",
        "I love my daughter.",
        "I feel like a cup of tea.",
        "I'm afraid I don't know.",
        "I'm sorry.",
        "I'm English.",
        "I was a bit tired yesterday.",
        "I worked hard all my life.",
        "I'm 5 minutes late.",
        "The weather is lovely today.",
        "Pizza is great.",
        "I have to take my tablets every morning.",
        "Please call me back later.",
        "Call me tomorrow.",
        "The nurse is called Linda.",
        "",
        "   ",
        # A secret: the clause that held it gives nothing, and nothing repeats it
        "My password is Fluffy1938.",
        "My PIN is 4321.",
    ],
)
def test_nothing_is_extracted(text):
    assert extract_facts(text) == []


def test_the_companions_words_give_nothing():
    assert extract_facts("My name is Clara and I love tea.", speaker="assistant") == []
    assert extract_facts("My name is Clara and I love tea.", speaker="person") != []


def test_ownership_another_persons_liking_is_theirs_not_the_persons():
    facts = extract_facts("My son likes football.")

    assert [f.type for f in facts] == ["people"]
    fact = facts[0]
    assert fact.entity_refs == ("person:son",)
    assert fact.memory_key == "people|person:son|likes:football"
    assert fact.content == "Son likes football"
    assert fact.subtype == {"entity_type": "person", "fact_type": "preference"}
    assert not any(f.memory_key.startswith("preference|self") for f in facts)


def test_ownership_a_named_relatives_liking_goes_to_them():
    fact = _one("My friend Doris loves knitting.", memory_key="people|person:doris|likes:knitting")

    assert fact.entity_refs == ("person:doris",)
    assert fact.content == "Friend Doris loves knitting"


# --- Confidence -------------------------------------------------------------------------------


def test_a_hedged_statement_is_kept_at_lower_confidence():
    plain = _one("My daughter is called Sarah.")
    hedged = _one("I think my daughter is called Sarah.")
    trailing = _one("My daughter is coming on Sunday, I believe.")

    assert hedged.memory_key == plain.memory_key
    assert hedged.confidence < plain.confidence
    assert hedged.metadata["hedged"] and not plain.metadata["hedged"]
    assert trailing.metadata["hedged"]
    assert trailing.confidence < 0.5


def test_a_late_husband_coming_home_is_not_believed():
    facts = extract_facts("My late husband John is coming home tonight.")
    by_rule = {f.metadata["rule"]: f for f in facts}

    assert by_rule["people.late"].content == "Husband John has died"
    assert by_rule["people.late"].importance == 3
    event = by_rule["event.coming"]
    assert event.entity_refs == ("person:john",)
    assert event.confidence <= 0.1
    assert event.metadata["conflict"] == "deceased_person_expected"


def test_a_death_said_in_the_same_message_weighs_on_its_events():
    facts = extract_facts("My husband passed away in 1998. My husband is coming to get me later.")
    event = next(f for f in facts if f.type == "event")

    assert event.metadata["conflict"] == "deceased_person_expected"
    assert event.confidence <= 0.1


def test_a_parent_expected_is_barely_believed():
    event = _one("Mum is coming to get me.")

    assert event.type == "event"
    assert event.confidence <= 0.3
    assert event.metadata["caution"] == "parent_expected"


def test_two_values_for_one_attribute_in_one_message_are_both_doubted():
    facts = extract_facts("I love tea. I hate tea.")

    assert {f.value for f in facts} == {"likes", "dislikes"}
    assert all(f.confidence <= 0.3 for f in facts)
    assert all(f.metadata["conflict"] == "contradiction_in_message" for f in facts)


def test_the_same_fact_twice_in_one_message_is_one_fact():
    facts = extract_facts("I love tea. I really do love tea.")

    assert len(facts) == 1
    assert facts[0].confidence == 0.8


# --- Sensitive data ---------------------------------------------------------------------------


def test_a_secret_never_reaches_a_fact_and_the_rest_still_counts():
    facts = extract_facts(
        "My PIN is 4321 and I love tea. The card is 4111 1111 1111 1111, my daughter Sarah knows."
    )

    assert ("preference|self|likes:tea", "likes") in {(f.memory_key, f.value) for f in facts}
    for fact in facts:
        text = repr(fact)
        assert "4321" not in text and "4111" not in text


# --- Entity refs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "slug"),
    [
        ("Sarah", "sarah"),
        ("Mary-Jane O'Brien", "mary_jane_obrien"),
        ("Zoë  Ünsal", "zoe_unsal"),
        ("Mrs. Patel", "mrs_patel"),
        ("St James's Hospital, Leeds", "st_jamess_hospital_leeds"),
        ("!!!", ""),
    ],
)
def test_entity_slug_rules(label, slug):
    assert entity_slug(label) == slug


def test_entity_slugs_are_bounded_and_refs_are_well_formed():
    long = entity_slug("Bartholomew " * 20)

    assert len(long) <= SLUG_MAX
    assert not long.endswith("_")
    assert ENTITY_REF_RE.match(entity_ref("person", "Mary-Jane"))
    assert entity_ref("person", "???") is None


# --- Properties -------------------------------------------------------------------------------

_WORDS = (
    "I my me we you he she is am was were not don't never love like hate feel lonely tired "
    "daughter son husband late mum Sarah Tom John called name every morning on Sundays walk "
    "the dog tea church coming visiting tomorrow today I'm I've got have a an three nurse "
    "grew up in Leeds born 1938 maybe think if would favourite colour blue and but , . ? !"
).split()


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(
        st.text(max_size=200),
        st.lists(st.sampled_from(_WORDS), max_size=25).map(" ".join),
    )
)
def test_any_text_gives_well_formed_facts(text):
    facts = extract_facts(text)

    assert facts == extract_facts(text)  # deterministic
    for fact in facts:
        assert fact.type in MEMORY_TYPES
        assert fact.subtype["fact_type"] in FACT_TYPES
        assert fact.content and fact.content[0].isupper()
        assert 0 < fact.confidence <= 1
        assert 0 <= fact.importance <= 3
        assert 0 < len(fact.memory_key) <= 300
        assert fact.memory_key.split("|")[0] == fact.type
        assert set(fact.entity_labels) == set(fact.entity_refs)
        assert all(ENTITY_REF_RE.match(ref) for ref in fact.entity_refs)
        assert "removed]" not in fact.content
