"""Word lists for the meaning-based repeat detector (memory/conversations/meaning.py).

Three kinds of knowledge the sentence model lacks or gets backwards:

- `CANONICAL`: regional and colloquial words rewritten to one common form before embedding, so
  "telly" and "TV", "loo" and "toilet", "specs" and "glasses" look alike to MiniLM, which learned
  its English mostly from American web text (it scores "Can you put the telly on?" against "I want
  to watch the TV" at 0.12).
- `CLASSES`: closed sets whose members are different things however alike they sound. A sentence
  model ranks "husband" and "wife" (0.87) above "coat" and "jacket" (0.78): it knows they are
  related, not that asking for one is not asking for the other. Two messages that each name a
  member of the same class, and no member in common, are about different things.
- `ANTONYMS` and `NEGATIONS`: "I want to go home" and "I don't want to go home" score 0.84.

The lists are general English about the everyday life of an older person at home or in care,
not phrases from the evaluation set; extend them when a new word turns up in the field.
"""

from __future__ import annotations

# Multi-word forms first (matched on word boundaries, longest first), then single words.
PHRASES: dict[str, str] = {
    "foot lady": "chiropodist",
    "foot man": "chiropodist",
    "foot doctor": "chiropodist",
    "false teeth": "teeth",
    "my boy": "my son",
    "my lad": "my son",
    "my girl": "my daughter",
    "the boys": "the sons",
    "the girls": "the daughters",
    "mobile phone": "phone",
    "cell phone": "phone",
    "the box": "the tv",
    "water tablet": "water pill",
    "water tablets": "water pills",
    "sitting room": "lounge",
    "living room": "lounge",
    "front room": "lounge",
    "day center": "day centre",
    "care home": "nursing home",
    "old people's home": "nursing home",
    "old folks home": "nursing home",
    "post office": "postoffice",
    "cup of tea": "tea",
    "cups of tea": "tea",
    "packed lunch": "lunch",
    "packed lunches": "lunch",
    "evening meal": "dinner",
    "lie down": "rest",
    "fed up": "unhappy",
    "feeling low": "feeling sad",
    "feel low": "feel sad",
    "feeling down": "feeling sad",
    "feel down": "feel sad",
    "all alone": "lonely",
    "on my own": "alone",
    "worn out": "exhausted",
}

CANONICAL: dict[str, str] = {
    # Family (the class below holds the canonical forms)
    "mum": "mother",
    "mam": "mother",
    "mom": "mother",
    "mummy": "mother",
    "mommy": "mother",
    "ma": "mother",
    "dad": "father",
    "daddy": "father",
    "pa": "father",
    "papa": "father",
    "hubby": "husband",
    "missus": "wife",
    "kids": "children",
    "kiddies": "children",
    "child": "children",
    "grandkids": "grandchildren",
    "grandchild": "grandchildren",
    "grandson": "grandchildren",
    "granddaughter": "grandchildren",
    "nan": "grandmother",
    "nana": "grandmother",
    "nanna": "grandmother",
    "gran": "grandmother",
    "granny": "grandmother",
    "grandma": "grandmother",
    "grandad": "grandfather",
    "granddad": "grandfather",
    "grandpa": "grandfather",
    "sons": "son",
    "daughters": "daughter",
    "brothers": "brother",
    "sisters": "sister",
    "neighbours": "neighbour",
    "neighbor": "neighbour",
    "neighbors": "neighbour",
    "friends": "friend",
    # Care and visitors
    "gp": "doctor",
    "doc": "doctor",
    "doctors": "doctor",
    "consultant": "specialist",
    "podiatrist": "chiropodist",
    "carers": "carer",
    "caregiver": "carer",
    "nurses": "nurse",
    "chemist": "pharmacy",
    "chemists": "pharmacy",
    "pharmacist": "pharmacy",
    "drugstore": "pharmacy",
    # Medicine
    "tablet": "medicine",
    "tablets": "medicine",
    "pill": "medicine",
    "pills": "medicine",
    "meds": "medicine",
    "medication": "medicine",
    "medications": "medicine",
    "medicines": "medicine",
    "puffer": "inhaler",
    "jab": "injection",
    "jabs": "injection",
    # Things
    "telly": "tv",
    "television": "tv",
    "specs": "glasses",
    "spectacles": "glasses",
    "jumper": "sweater",
    "pullover": "sweater",
    "cardie": "cardigan",
    "jacket": "coat",
    "anorak": "coat",
    "mac": "coat",
    "handbag": "bag",
    "mobile": "phone",
    "cellphone": "phone",
    "telephone": "phone",
    "dentures": "teeth",
    "brolly": "umbrella",
    "photographs": "photos",
    "photo": "photos",
    "photograph": "photos",
    "pictures": "photos",
    "key": "keys",
    "shoe": "shoes",
    "slipper": "slippers",
    "glove": "gloves",
    "nappy": "diaper",
    "goldfish": "fish",
    "puppy": "dog",
    "pup": "dog",
    "doggy": "dog",
    "kitten": "cat",
    "kitty": "cat",
    "pussycat": "cat",
    "nappies": "diaper",
    # Places
    "loo": "toilet",
    "lav": "toilet",
    "lavatory": "toilet",
    "lavvy": "toilet",
    "wc": "toilet",
    "restroom": "toilet",
    "bathroom": "toilet",
    "newspaper": "paper",
    "toilets": "toilet",
    "office": "work",
    "job": "work",
    "shops": "shop",
    "store": "shop",
    "centre": "centre",
    "center": "centre",
    "hospitals": "hospital",
    "surgery": "doctor",
    # Food and drink
    "cuppa": "tea",
    "brew": "tea",
    "supper": "dinner",
    "tea-time": "teatime",
    "peckish": "hungry",
    "starving": "hungry",
    "famished": "hungry",
    "parched": "thirsty",
    # Feelings and the body
    "frightened": "scared",
    "afraid": "scared",
    "terrified": "scared",
    "freezing": "cold",
    "chilly": "cold",
    "frozen": "cold",
    "boiling": "hot",
    "roasting": "hot",
    "sweltering": "hot",
    "knackered": "exhausted",
    "poorly": "ill",
    "unwell": "ill",
    "tummy": "stomach",
    "belly": "stomach",
    "feet": "foot",
    "legs": "leg",
    "arms": "arm",
    "hands": "hand",
    "eyes": "eye",
    "ears": "ear",
    # Money and doing
    "quid": "pounds",
    "bucks": "dollars",
    "pinched": "stolen",
    "nicked": "stolen",
    "rang": "phoned",
    "rung": "phoned",
    # Spelling
    "recognise": "recognize",
    "colour": "color",
    "favourite": "favorite",
    "realise": "realize",
    "organise": "organize",
}

# Members of each class, in their canonical form. "who" also takes personal names (capitalised
# words the model does not know as anything else), so "Tom" and "my husband" are different people:
# the memory cannot know that Tom is the husband.
CLASSES: dict[str, frozenset[str]] = {
    "who": frozenset(
        """
        mother father husband wife son daughter brother sister grandmother grandfather
        grandchildren aunt uncle cousin niece nephew children baby partner boyfriend girlfriend
        fiance fiancee neighbour friend doctor dentist nurse carer specialist chiropodist
        optician hairdresser barber physio plumber electrician postman milkman paperboy vicar
        priest minister rabbi imam manager boss teacher police policeman lodger landlord
        landlady warden cleaner gardener
        """.split()
    ),
    "animal": frozenset(
        """
        dog cat budgie parrot bird birds fish rabbit hamster horse pony chickens hens hen
        tortoise guinea
        """.split()
    ),
    "meal": frozenset("breakfast lunch dinner brunch elevenses teatime".split()),
    "day": frozenset(
        """
        monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday
        tonight christmas easter birthday
        """.split()
    ),
    "daypart": frozenset("morning afternoon evening night midday noon midnight".split()),
    "month": frozenset(
        """
        january february march april june july august september october november december
        spring summer autumn fall winter
        """.split()
    ),
    "unit": frozenset("day time year month date week".split()),
    "number": frozenset(
        """
        one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty
        forty fifty hundred half quarter
        """.split()
    ),
    "food": frozenset(
        """
        egg eggs toast bread cereal porridge soup sandwich sandwiches biscuit biscuits cake
        chips potatoes fish meat chicken beef ham cheese jam fruit apple banana orange
        coffee milk juice water wine beer sherry whisky tea
        """.split()
    ),
    "body": frozenset(
        """
        head knee leg arm back chest stomach foot hand eye ear hip shoulder neck tooth teeth
        throat wrist ankle finger toe
        """.split()
    ),
    "thing": frozenset(
        """
        coat hat scarf gloves shoes slippers boots socks sweater cardigan dress skirt trousers
        glasses keys bag purse wallet phone watch ring necklace teeth stick umbrella book
        remote photos tv radio kettle light hearing paper newspaper post letters bins chair
        bed blanket cup
        """.split()
    ),
    "place": frozenset(
        """
        hospital school church chapel bank shop work library postoffice pharmacy hotel
        nursing clinic station airport pub market park garden kitchen bathroom toilet bedroom
        lounge seaside beach cinema theatre dentist hairdresser
        """.split()
    ),
}

# Pairs of words that mean the opposite; either order. Canonical forms.
ANTONYMS: frozenset[frozenset[str]] = frozenset(
    frozenset(pair.split("/"))
    for pair in """
    hot/cold warm/cold happy/sad happy/upset happy/unhappy better/worse open/close open/closed
    open/shut found/lost early/late full/hungry like/hate love/hate good/bad well/ill calm/upset
    calm/angry on/off in/out up/down remember/forget dressed/undressed arrive/leave
    arrived/left before/after awake/asleep light/dark safe/scared alive/dead start/finish
    started/finished
    """.split()
)

# Contractions typed without their apostrophe ("wheres my coat", "im cold"). Only forms that
# are not words of their own ("its", "were", "ill", "well", "shed" are left alone).
CONTRACTIONS: dict[str, str] = {
    w.replace("'", ""): w
    for w in """
    where's what's who's how's when's there's that's here's i'm i've you're you've you'll
    we've they're they've don't doesn't didn't can't couldn't won't
    wouldn't shouldn't isn't aren't wasn't weren't haven't hasn't hadn't let's she's he's
    """.split()
}

# Clauses that carry no request of their own, as regular expressions over the canonical text;
# dropped when they stand alone between punctuation ("oh dear, I don't know, where's my coat").
# "I don't know where I am" keeps its "I don't know": it is not a clause on its own there.
FILLERS = (
    r"(?:oh|ah|um+|er+m?|well|so|now|right|look|sorry|please|dear|love|oh dear|oh no|"
    r"oh well|dear me|dear oh dear|oh dear oh dear|oh my|goodness|oh goodness|my goodness|"
    r"i don't know|i dont know|i just don't know|you know|i mean|i think|i'm not sure|"
    r"hang on|wait|excuse me|hello|hi|hey)(?:\s+(?:oh|dear|now|well|love))*",
)

# Words that turn what follows into its opposite.
NEGATIONS = frozenset(
    """
    not no never nobody nothing nowhere none nor neither cannot without
    dont doesnt didnt cant couldnt wont wouldnt shouldnt isnt arent wasnt werent havent hasnt
    hadnt aint forgot forgotten
    """.split()
)

# A negation right before these asks for something rather than denying it: "I can't find my
# glasses" asks where they are; "I don't know where I am" asks where I am.
SEEKING_VERBS = frozenset(
    """
    find found know knew remember understand recognize see seen hear heard tell think cope
    manage sleep stop help
    """.split()
)
