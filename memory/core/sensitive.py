"""The sensitive-data filter: secrets and identity numbers are redacted, never stored.

People living with dementia are the people scammers call, and they may read a card number,
a PIN or the key-safe code out to a friendly voice. Whatever the person (or the companion)
says, `redact` runs before a message or a memory reaches the database, the recovery log or a
log line: passwords, PINs, security and access codes, government ID numbers, payment card
numbers and bank details are replaced with a plain placeholder ("[card number removed]") so
the sentence still reads naturally and the conversation around it keeps its meaning.

Two kinds of rules:

* **In context**: a keyword says what follows is secret ("my password is ...", "the PIN is
  4321", "passport number: ..."). The value is removed whatever it looks like, except words
  that plainly are not a secret ("my password is in the drawer").
* **By shape and checksum**, with no keyword: payment cards (13-19 digits, Luhn), IBANs
  (mod 97), NHS numbers (mod 11), UK National Insurance numbers (allocation rules), US Social
  Security numbers (dashed, valid ranges), a sort code next to an account number.

Checksums keep ordinary numbers alone: phone numbers, years, times, ages, house numbers and
prices are not touched. The filter is pure, deterministic and idempotent (a placeholder is
never matched again), so a stored text redacts to itself: `redact(redact(x).text) == redact(x)`.
"""

import re
from dataclasses import dataclass

# --- Placeholders, one per kind --------------------------------------------------------------

PLACEHOLDERS: dict[str, str] = {
    "password": "[password removed]",
    "pin": "[PIN removed]",
    "security_code": "[security code removed]",
    "access_code": "[code removed]",
    "card_number": "[card number removed]",
    "bank_account": "[bank details removed]",
    "iban": "[bank details removed]",
    "national_insurance": "[National Insurance number removed]",
    "ssn": "[Social Security number removed]",
    "nhs_number": "[NHS number removed]",
    "passport": "[passport number removed]",
    "driving_licence": "[licence number removed]",
}

KINDS: tuple[str, ...] = tuple(PLACEHOLDERS)


@dataclass(frozen=True)
class Redaction:
    """A text with its secrets replaced. `kinds` lists each kind found once, sorted."""

    text: str
    kinds: tuple[str, ...]
    changed: bool


# --- Checksums ---------------------------------------------------------------------------------


def luhn_valid(digits: str) -> bool:
    """The Luhn (mod 10) check that every payment card number passes."""
    if not digits.isdigit():
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """ISO 13616: country letters, two check digits, 11-30 more; mod 97 of the rearranged is 1."""
    compact = re.sub(r"[\s-]", "", iban).upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", compact):
        return False
    rearranged = compact[4:] + compact[:4]
    numeric = "".join(str(int(char, 36)) for char in rearranged)
    return int(numeric) % 97 == 1


def nhs_number_valid(digits: str) -> bool:
    """NHS (and CHI) numbers: ten digits, the last a mod-11 check over weights 10..2."""
    if len(digits) != 10 or not digits.isdigit():
        return False
    total = sum(
        int(digit) * weight for digit, weight in zip(digits[:9], range(10, 1, -1), strict=True)
    )
    check = 11 - total % 11
    if check == 11:
        check = 0
    return check != 10 and check == int(digits[9])


def ssn_valid(area: str, group: str, serial: str) -> bool:
    """US SSN ranges never issued: area 000, 666 or 9xx; group 00; serial 0000."""
    return (
        area not in {"000", "666"}
        and not area.startswith("9")
        and group != "00"
        and serial != "0000"
    )


# UK NINO allocation rules (HMRC NIM39110): letters never used, prefixes never issued.
_NINO_FIRST = "ABCEGHJKLMNOPRSTWXYZ"
_NINO_SECOND = "ABCEGHJKLMNPRSTWXYZ"
_NINO_NOT_ISSUED = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}


def nino_valid(prefix: str) -> bool:
    prefix = prefix.upper()
    return prefix[0] in _NINO_FIRST and prefix[1] in _NINO_SECOND and prefix not in _NINO_NOT_ISSUED


# --- In-context rules -------------------------------------------------------------------------

# A placeholder starts with "[": never a value, so redacting twice changes nothing.
_NOT_PLACEHOLDER = r"(?!\[)"
# Words between a keyword and its value: "number", "for the bank", "on the back of my card".
_QUALIFIER = r"(?:\s+(?:number|no\.?|num|code|#))?"
_FOR_WHAT = r"(?:\s+(?:for|to|of|on)\s+(?:the\s+|my\s+|our\s+|your\s+)?[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3}?)?"
# "is", "was", ":", "=", "'s", optionally "still"/"now"; or nothing but a space (digits only).
_IS = r"(?:\s*[:=#]\s*|'s\s+|\s+(?:is|was|are|were|=)\s*(?::\s*)?(?:(?:still|now|just|actually|always)\s+)?)"
_IS_OR_SPACE = rf"(?:{_IS}|\s+)"


def _digits(low: int, high: int) -> str:
    """`low`-`high` digits, each pair optionally split by one space or dash; no digit either side."""
    return rf"(?<![\d-])\d(?:[ -]?\d){{{low - 1},{high - 1}}}(?!\d|-\d)"


_PASSWORD_WORDS = (
    r"(?:(?:wi-?fi|online\s+banking|computer|laptop|email|e-mail|bank|login|log-?in)\s+)?"
    r"(?:password|passcode|pass\s+code|passphrase|pass\s+phrase|pass\s+word|pwd"
    r"|memorable\s+(?:word|information|info|answer)|secret\s+word)"
)
# Every password keyword holds one of these; a plain `in` check skips the rule otherwise.
_PASSWORD_STEMS = ("pass", "pwd", "memorable", "secret")
_PIN_WORDS = r"\bpin(?:\s+(?:number|no\.?|code))?"
_SECURITY_CODE_WORDS = (
    r"(?:\b(?:cvv2?|cvc2?|cv2|csc|card\s+verification(?:\s+(?:value|code|number))?)\b"
    r"|(?<!social\s)\bsecurity\s+(?:code|number|digits)"
    r"|\b(?:three|3|four|4)[ -]digit(?:s|\s+(?:code|number))?(?:\s+on\s+the\s+back(?:\s+of\s+(?:my|the)\s+card)?)?"
    r"|\b(?:number|digits)\s+on\s+the\s+back(?:\s+of\s+(?:my|the)\s+card)?)"
)
_ACCESS_CODE_WORDS = (
    r"(?:\b(?:key\s*safe|keysafe|key\s+box|lock\s*box|front\s+door|back\s+door|door|alarm"
    r"|burglar\s+alarm|gate|lock|entry|access|building|garage|one[- ]time|verification"
    r"|login|log-?in|bank|sms|text)\s+code\b"
    r"|\bcode\s+(?:for|to|of|on)\s+(?:the\s+|my\s+|our\s+)?"
    r"(?:key\s*safe|keysafe|key\s+box|lock\s*box|front\s+door|back\s+door|door|alarm|gate|lock"
    r"|building|garage|safe)\b)"
)

# What follows "my password is" without being the password itself.
_NOT_A_SECRET = frozenset(
    """
    in on at under behind inside beside near with without written wrote somewhere anywhere
    the a an my your his her our their its it that this these those there here what which
    not no too so very really quite far pretty rather
    hard easy difficult simple long short wrong right correct incorrect weak strong
    forgotten forgot lost changed changing expired locked blocked saved stored kept taped
    stuck noted same different new old secret private safe something nothing all
    needed required case-sensitive sensitive fine ok okay good bad broken working
    and but or because for to of from by up down reset set being going gone been
    unknown missing somebody someone nobody everyone
    """.split()
)

_TRAILING_PUNCTUATION = ".,;:!?)"


def _password_value(match: re.Match) -> tuple[int, int] | None:
    """Where the secret is, in a match of the password rule, or None if it is plainly not one."""
    if match.group("quoted") is not None:
        return match.span("quoted_all")
    token = match.group("token")
    start, end = match.span("token")
    stripped = token.rstrip(_TRAILING_PUNCTUATION)
    end -= len(token) - len(stripped)
    if not stripped:
        return None
    # "my password is in the drawer" is not a secret; after a colon ("Password: fluffy") any
    # word is. The list holds only plain words, so a token with a digit or symbol always goes.
    connector = match.group("is")
    if not connector.strip():
        # "the password Fluffy1938": with no "is", only a token no word could be counts.
        if stripped.isalpha():
            return None
    elif not re.search(r"[:=]", connector) and stripped.lower() in _NOT_A_SECRET:
        return None
    return start, end


_PASSWORD_RULE = re.compile(
    rf"\b{_PASSWORD_WORDS}\b{_FOR_WHAT}(?P<is>{_IS}|\s+)"
    rf"(?:(?P<quoted_all>(?P<q>[\"'])(?P<quoted>[^\"'\n]{{1,64}})(?P=q))"
    rf"|{_NOT_PLACEHOLDER}(?P<token>[^\s\[\]]{{1,64}}))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _ContextRule:
    kind: str
    pattern: re.Pattern[str]
    # Substrings one of which the lower-cased text must hold for the rule to run: a plain `in`
    # is far cheaper than trying the pattern at every position of a long message.
    triggers: tuple[str, ...]


def _context(kind: str, words: str, value: str, triggers: tuple[str, ...]) -> _ContextRule:
    """A keyword, then "number"/"for the bank" and "is"/":" (or a space), then the value."""
    pattern = re.compile(
        rf"(?:{words}){_QUALIFIER}{_FOR_WHAT}{_IS_OR_SPACE}{_NOT_PLACEHOLDER}(?P<value>{value})",
        re.IGNORECASE,
    )
    return _ContextRule(kind, pattern, triggers)


_ALNUM_ID = r"(?=[a-z]{0,12}\d)[a-z0-9]{5,18}\b"

_CONTEXT_RULES: list[_ContextRule] = [
    _context("pin", _PIN_WORDS + r"\b", _digits(4, 8), ("pin",)),
    _context(
        "security_code",
        _SECURITY_CODE_WORDS,
        _digits(3, 4),
        ("cv", "csc", "verification", "security", "digit", "back"),
    ),
    _context(
        "access_code",
        _ACCESS_CODE_WORDS,
        _digits(3, 10) + r"|[a-z]?\d[a-z0-9]{2,9}\b",
        ("code",),
    ),
    _context(
        "card_number",
        r"\b(?:(?:credit|debit|bank|payment)\s+)?card\s+(?:number|no\.?|num|details)",
        _digits(12, 19),
        ("card",),
    ),
    _context("bank_account", r"\bsort\s*code", r"\d{2}[ -]?\d{2}[ -]?\d{2}(?!\d)", ("sort",)),
    _context(
        "bank_account",
        r"\b(?:bank\s+)?(?:account|acct|a/c)(?:\s+(?:number|no\.?|num|#))?",
        _digits(6, 17),
        ("acc", "a/c"),
    ),
    _context(
        "bank_account",
        r"\b(?:routing|aba)(?:\s+(?:number|no\.?))?",
        r"\d{9}(?!\d)",
        ("routing", "aba"),
    ),
    _context(
        "national_insurance",
        r"\b(?:national\s+insurance|ni|nino)(?:\s+(?:number|no\.?))?(?=\s|:|=|'s)",
        r"[a-z]{2}\s?\d{2}\s?\d{2}\s?\d{2}(?:\s?[a-d])?\b",
        ("insurance", "ni"),
    ),
    _context(
        "ssn",
        r"\b(?:social\s+security|ssn|social\s+insurance)(?:\s+(?:number|no\.?))?",
        r"(?<!\d)\d{3}[ -]?\d{2}[ -]?\d{4}(?!\d)",
        ("social", "ssn"),
    ),
    _context(
        "nhs_number",
        r"\b(?:nhs|chi|health(?:\s+service)?(?:\s+and\s+care)?|h&c)(?:\s+(?:number|no\.?))?",
        r"(?<!\d)\d{3}[ -]?\d{3}[ -]?\d{4}(?!\d)",
        ("nhs", "chi", "health", "h&c"),
    ),
    _context(
        "passport",
        r"\bpassport(?:\s+(?:number|no\.?|num|#))?",
        r"\d(?:\s?\d){5,9}(?!\d)|" + _ALNUM_ID,
        ("passport",),
    ),
    _context(
        "driving_licence",
        r"\b(?:driving|driver'?s?)\s+licen[cs]e(?:\s+(?:number|no\.?|num|#))?",
        _ALNUM_ID,
        ("licen",),
    ),
]


# --- Shape-and-checksum rules ----------------------------------------------------------------

# An IBAN candidate; the longest prefix that passes mod 97 is the IBAN.
_IBAN_CANDIDATE = re.compile(r"\b[a-z]{2}\d{2}(?:[ -]?[a-z0-9]){11,30}", re.IGNORECASE)
# A sort code written as 12-34-56 is a date too; it is a sort code next to an account number.
_SORT_CODE_AND_ACCOUNT = re.compile(r"(?<![\d-])\d{2}-\d{2}-\d{2}(?:\s*,?\s*|\s+and\s+)\d{8}(?!\d)")
# Without a keyword, only as printed (capitals): "on 12 12 12 a" is not a NINO.
_NINO = re.compile(r"\b(?P<prefix>[A-Z]{2}) ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b")
_SSN = re.compile(r"(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d-])")
# NHS England/Wales numbers start 4 or 6-7, Northern Ireland's 3; written 3-3-4 or as one run.
_NHS = re.compile(r"(?<![\d-])([3-7]\d{2})( ?)(\d{3})\2(\d{4})(?![\d-])")
# A run of digit groups, each split from the next by one space or dash.
_DIGIT_RUN = re.compile(r"(?<!\d)\d+(?:[ -]\d+)*(?!\d)")
_GROUP = re.compile(r"\d+")

CARD_MIN_DIGITS, CARD_MAX_DIGITS = 13, 19
# Cards are printed in groups of 4 (or 4-6-5): groups of one or two digits are counting or
# dates ("1 2 3 4 5 ..."), not a card, and stay apart from the span.
CARD_MIN_GROUP = 3


def _card_spans(run: str) -> list[tuple[int, int]]:
    """Spans of `run` (digit groups) that are a Luhn-valid card number, longest first."""
    groups = [(m.start(), m.end()) for m in _GROUP.finditer(run)]
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(groups):
        found = None
        start = groups[index][0]
        first_len = groups[index][1] - start
        if first_len > CARD_MAX_DIGITS:
            # One long unbroken number: if any window of it is a card, all of it goes.
            digits = run[start : groups[index][1]]
            if _has_card_window(digits):
                found = index
        else:
            # At most six groups of three or more digits fit in 19 digits.
            last = min(len(groups) - 1, index + CARD_MAX_DIGITS // CARD_MIN_GROUP)
            for end_index in range(last, index - 1, -1):
                chosen = groups[index : end_index + 1]
                if len(chosen) > 1 and any(b - a < CARD_MIN_GROUP for a, b in chosen):
                    continue
                digits = "".join(run[a:b] for a, b in chosen)
                if (
                    CARD_MIN_DIGITS <= len(digits) <= CARD_MAX_DIGITS
                    and digits[0] != "0"
                    and not _all_years(run, chosen)
                    and luhn_valid(digits)
                ):
                    found = end_index
                    break
        if found is None:
            index += 1
            continue
        spans.append((start, groups[found][1]))
        index = found + 1
    return spans


def _all_years(run: str, groups: list[tuple[int, int]]) -> bool:
    """ "We moved in 1962 1965 1970 1975": no card network issues numbers that start 19xx/20xx."""
    return len(groups) > 1 and all(b - a == 4 and 1900 <= int(run[a:b]) <= 2099 for a, b in groups)


def _has_card_window(digits: str) -> bool:
    for size in range(CARD_MIN_DIGITS, CARD_MAX_DIGITS + 1):
        for start in range(0, len(digits) - size + 1):
            window = digits[start : start + size]
            if window[0] != "0" and luhn_valid(window):
                return True
    return False


# --- The filter --------------------------------------------------------------------------------


class _Redactor:
    def __init__(self, text: str) -> None:
        self.text = text
        self.kinds: set[str] = set()

    def replace(self, spans: list[tuple[int, int, str]]) -> None:
        """Replace non-overlapping (start, end, kind) spans, right to left so offsets hold."""
        for start, end, kind in sorted(spans, reverse=True):
            self.text = self.text[:start] + PLACEHOLDERS[kind] + self.text[end:]
            self.kinds.add(kind)

    def passwords(self) -> None:
        lowered = self.text.lower()
        if not any(stem in lowered for stem in _PASSWORD_STEMS):
            return
        spans = []
        for match in _PASSWORD_RULE.finditer(self.text):
            value = _password_value(match)
            if value is not None:
                spans.append((*value, "password"))
        self.replace(spans)

    def in_context(self) -> None:
        lowered = self.text.lower()
        for rule in _CONTEXT_RULES:
            if not any(trigger in lowered for trigger in rule.triggers):
                continue
            spans = [
                (*match.span("value"), rule.kind) for match in rule.pattern.finditer(self.text)
            ]
            self.replace(spans)

    def ibans(self) -> None:
        spans = []
        for match in _IBAN_CANDIDATE.finditer(self.text):
            candidate = match.group()
            # Longest first: trailing words or numbers may have joined the candidate.
            for end in range(len(candidate), 14, -1):
                # Cut only between groups, never inside a word that joined the candidate.
                following = self.text[match.start() + end : match.start() + end + 1]
                if following.isalnum():
                    continue
                piece = candidate[:end]
                # Written in one run, or in groups of at most four: "please" after one is a word.
                groups = re.split(r"[ -]", piece)
                if len(groups) > 1 and any(len(group) > 4 for group in groups):
                    continue
                if iban_valid(piece):
                    spans.append((match.start(), match.start() + end, "iban"))
                    break
        self.replace(spans)

    def sort_codes(self) -> None:
        self.replace(
            [(*m.span(), "bank_account") for m in _SORT_CODE_AND_ACCOUNT.finditer(self.text)]
        )

    def cards(self) -> None:
        spans = []
        for match in _DIGIT_RUN.finditer(self.text):
            run = match.group()
            # Most runs (years, phone numbers) are too short to hold a card: skip them cheaply.
            if len(run) < CARD_MIN_DIGITS or sum(c.isdigit() for c in run) < CARD_MIN_DIGITS:
                continue
            for start, end in _card_spans(run):
                spans.append((match.start() + start, match.start() + end, "card_number"))
        self.replace(spans)

    def ninos(self) -> None:
        self.replace(
            [
                (*m.span(), "national_insurance")
                for m in _NINO.finditer(self.text)
                if nino_valid(m.group("prefix"))
            ]
        )

    def ssns(self) -> None:
        self.replace(
            [
                (*m.span(), "ssn")
                for m in _SSN.finditer(self.text)
                if ssn_valid(m.group(1), m.group(3), m.group(4))
            ]
        )

    def nhs_numbers(self) -> None:
        self.replace(
            [
                (*m.span(), "nhs_number")
                for m in _NHS.finditer(self.text)
                if nhs_number_valid(m.group(1) + m.group(3) + m.group(4))
            ]
        )


# Every rule but the password rule needs a digit in its value; most talk has neither, and
# these two plain checks are ten times cheaper than the rules.
_DIGIT = re.compile(r"\d")


def _worth_a_look(text: str) -> bool:
    if _DIGIT.search(text):
        return True
    lowered = text.lower()
    return any(stem in lowered for stem in _PASSWORD_STEMS)


def redact(text: str) -> Redaction:
    """Replace every secret in `text` with a placeholder; pure, deterministic and idempotent."""
    if not _worth_a_look(text):
        return Redaction(text=text, kinds=(), changed=False)
    redactor = _Redactor(text)
    # Keyword rules first: they know what a value is, whatever its shape. Then shapes, most
    # specific first, so an IBAN's digits are not taken for a card.
    redactor.passwords()
    redactor.in_context()
    redactor.ibans()
    redactor.sort_codes()
    redactor.cards()
    redactor.ninos()
    redactor.ssns()
    redactor.nhs_numbers()
    return Redaction(
        text=redactor.text,
        kinds=tuple(sorted(redactor.kinds)),
        changed=redactor.text != text,
    )


def redact_text(text: str) -> str:
    """`redact(text).text`, for callers that only need the safe text."""
    return redact(text).text
