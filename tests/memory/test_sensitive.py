"""The sensitive-data filter: secrets go, ordinary numbers stay, and redacting twice is harmless."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.core.sensitive import (
    PLACEHOLDERS,
    iban_valid,
    luhn_valid,
    nhs_number_valid,
    nino_valid,
    redact,
    ssn_valid,
)

# --- What must go ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        ("My password is hunter2.", "hunter2", "password"),
        ("my password's Fluffy1938", "Fluffy1938", "password"),
        ("The wifi password is still bluebell42", "bluebell42", "password"),
        ("Password: fluffy", "fluffy", "password"),
        ("my password for the computer is Rover", "Rover", "password"),
        ("don't say the password Fluffy1938 out loud", "Fluffy1938", "password"),
        ("the passcode: 7712", "7712", "password"),
        ("My memorable word is Biscuit", "Biscuit", "password"),
        ("the password is 'correct horse battery'", "correct horse", "password"),
        ("The PIN is 4321", "4321", "pin"),
        ("my pin number's 4321, don't tell anyone", "4321", "pin"),
        ("PIN 0852 for the Halifax card", "0852", "pin"),
        ("the pin for my bank card is 9 8 7 6", "9 8 7 6", "pin"),
        ("The code for the key safe is 1234", "1234", "access_code"),
        ("the key safe code is 4590", "4590", "access_code"),
        ("Our door code is 2580", "2580", "access_code"),
        ("the alarm code: 13579", "13579", "access_code"),
        ("The CVV is 123", "123", "security_code"),
        ("the security code on the back is 737", "737", "security_code"),
        ("the three digits on the back of my card are 415", "415", "security_code"),
        ("My card number is 4111 1111 1111 1111", "4111 1111 1111 1111", "card_number"),
        ("It's 5500-0000-0000-0004, the long number", "5500-0000-0000-0004", "card_number"),
        ("he asked for 4012888888881881 so I read it out", "4012888888881881", "card_number"),
        ("amex 3782 822463 10005 expires soon", "3782 822463 10005", "card_number"),
        # A card number with a typo is still a card number when the person says it is one.
        ("my card number is 4111 1111 1111 1112", "4111 1111 1111 1112", "card_number"),
        ("IBAN GB82 WEST 1234 5698 7654 32 thanks", "GB82 WEST 1234 5698 7654 32", "iban"),
        ("send it to DE89370400440532013000 please", "DE89370400440532013000", "iban"),
        ("sort code 20-00-00 account 12345678", "20-00-00", "bank_account"),
        ("sort code 20-00-00 account 12345678", "12345678", "bank_account"),
        ("It's 40-12-76 31926819 at Barclays", "40-12-76 31926819", "bank_account"),
        ("my account number is 31926819", "31926819", "bank_account"),
        ("My National Insurance number is QQ 12 34 56 C", "QQ 12 34 56 C", "national_insurance"),
        ("my NI number: AB123456C", "AB123456C", "national_insurance"),
        ("They wanted JT 48 29 17 A from me", "JT 48 29 17 A", "national_insurance"),
        ("my social security number is 078-05-1120", "078-05-1120", "ssn"),
        ("SSN 219 09 9999", "219 09 9999", "ssn"),
        ("it was 536-22-1234 on the form", "536-22-1234", "ssn"),
        ("my NHS number is 943 476 5919", "943 476 5919", "nhs_number"),
        ("the number on the letter was 401 023 2137", "401 023 2137", "nhs_number"),
        ("4010232137 is on my prescription", "4010232137", "nhs_number"),
        ("My passport number is 925076473", "925076473", "passport"),
        ("passport no. AB1234567", "AB1234567", "passport"),
        ("my driving licence number is MORGA657054SM9IJ", "MORGA657054SM9IJ", "driving_licence"),
    ],
)
def test_secret_is_replaced_by_its_placeholder(text, secret, kind):
    result = redact(text)

    assert secret not in result.text
    assert PLACEHOLDERS[kind] in result.text
    assert kind in result.kinds
    assert result.changed


def test_the_sentence_around_a_secret_still_reads_naturally():
    result = redact("My card is 4111 1111 1111 1111 and the PIN is 4321, love.")

    assert result.text == "My card is [card number removed] and the PIN is [PIN removed], love."
    assert result.kinds == ("card_number", "pin")


def test_several_secrets_in_one_message_all_go():
    text = (
        "The man on the phone wanted my card 4111-1111-1111-1111, the CVV 123, "
        "my password is Rover2 and the key safe code is 4590."
    )
    result = redact(text)

    for secret in ("4111", "123", "Rover2", "4590"):
        assert secret not in result.text
    assert result.kinds == ("access_code", "card_number", "password", "security_code")


# --- What must stay ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I have 3 grandchildren and 2 great-grandchildren.",
        "I was born in 1938, in the war.",
        "I'm 87 years old, you know.",
        "It's 10:30 already?",
        "Lunch is at 12.30 and tea at 4",
        "I live at 42 Acacia Avenue, Leeds LS6 2AB.",
        "My phone number is 0113 496 0000.",
        "Ring my daughter on 07700 900123 please.",
        "Her number's +44 20 7946 0958",
        "My brother in New York is on (212) 555-0100 or 212-555-0100.",
        "I was born on 12-03-1941 and married on 14/06/1962.",
        "We paid £12.50 for the taxi and 3,500 for the car in 1975.",
        "Count with me: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",
        "The bus number is 42 and the room is 12B.",
        "I forgot my password again.",
        "The password reset letter came today.",
        "My password expired on Monday.",
        "My password is in the drawer by the bed.",
        "my password is written on the fridge",
        "What's the PIN for, dear?",
        "The PIN is something I can never remember.",
        "My bank account is overdrawn again.",
        "I had a safety pin in my cardigan.",
        "The code is on the fridge.",
        "My passport expired years ago.",
        "We got married in 1962 and had 4 children by 1970.",
        "The lottery numbers were 4 11 23 35 42 49.",
        "We moved in 1962 1965 1970 1975 and then here.",
        "I walked 10000 steps on 3 March 2024.",
        "My postcode is SW1A 1AA.",
        "Flight BA 117 leaves at 09 45.",
    ],
)
def test_ordinary_numbers_and_words_are_left_alone(text):
    result = redact(text)

    assert result.text == text
    assert result.kinds == ()
    assert not result.changed


def test_a_placeholder_is_never_redacted_again():
    once = redact("my password is hunter2 and my pin is 4321").text

    again = redact(once)

    assert again.text == once
    assert not again.changed


# --- Checksums --------------------------------------------------------------------------------


def test_luhn_accepts_known_test_cards_and_rejects_one_digit_off():
    assert luhn_valid("4111111111111111")
    assert luhn_valid("378282246310005")
    assert not luhn_valid("4111111111111112")
    assert not luhn_valid("41111x1111111111")


def test_iban_checksum():
    assert iban_valid("GB82 WEST 1234 5698 7654 32")
    assert iban_valid("de89370400440532013000")
    assert not iban_valid("GB82 WEST 1234 5698 7654 33")
    assert not iban_valid("GB82")


def test_nhs_number_mod_11():
    assert nhs_number_valid("9434765919")
    assert nhs_number_valid("4010232137")
    assert not nhs_number_valid("9434765918")
    # A check digit of 10 never occurs: those numbers are not issued.
    assert not any(nhs_number_valid(f"401023213{d}") for d in range(10) if d != 7)


def test_ssn_and_nino_issuing_rules():
    assert ssn_valid("078", "05", "1120")
    assert not ssn_valid("000", "12", "3456")
    assert not ssn_valid("666", "12", "3456")
    assert not ssn_valid("912", "12", "3456")
    assert not ssn_valid("123", "00", "3456")
    assert not ssn_valid("123", "45", "0000")
    assert nino_valid("AB")
    assert not nino_valid("GB")
    assert not nino_valid("DA")
    assert not nino_valid("AO")


def test_invalid_identity_shapes_without_a_keyword_stay():
    # Fail their issuing rules or checksums, and nothing says they are ID numbers.
    for text in ("ref GB 12 34 56 A", "code 666-12-3456", "943 476 5918", "4111 1111 1111 1112"):
        assert redact(text).text == text


# --- Properties -------------------------------------------------------------------------------


def _luhn_check_digit(body: str) -> str:
    for digit in "0123456789":
        if luhn_valid(body + digit):
            return digit
    raise AssertionError("unreachable")


@st.composite
def card_numbers(draw) -> str:
    length = draw(st.integers(13, 19))
    first = draw(st.sampled_from("23456"))
    body = first + draw(st.text("0123456789", min_size=length - 2, max_size=length - 2))
    return body + _luhn_check_digit(body)


@st.composite
def card_formats(draw) -> str:
    """A card number as people write it: one run, or groups of four (last group 3-4+)."""
    digits = draw(card_numbers())
    style = draw(st.sampled_from(["run", "space", "dash"]))
    if style == "run":
        return digits
    groups = [digits[i : i + 4] for i in range(0, len(digits), 4)]
    if len(groups[-1]) < 3:  # 13 or 17 digits: the short tail joins the group before it
        groups[-2:] = [groups[-2] + groups[-1]]
    return (" " if style == "space" else "-").join(groups)


# Surrounding talk without digits, so only the card's own digits are in the message.
talk = st.text(
    alphabet=st.characters(categories=["L", "Zs"], include_characters=".,!?'"), max_size=40
)


def _card_like_spans(text: str) -> list[str]:
    """Brute force: every group-aligned span of a digit run that is a Luhn-valid card number."""
    found = []
    for run in re.finditer(r"(?<!\d)\d+(?:[ -]\d+)*(?!\d)", text):
        groups = re.findall(r"\d+", run.group())
        for i in range(len(groups)):
            for j in range(i, len(groups)):
                chosen = groups[i : j + 1]
                if len(chosen) > 1 and any(len(g) < 3 for g in chosen):
                    continue
                digits = "".join(chosen)
                windows = [digits] if len(digits) <= 19 else []
                if len(chosen) == 1 and len(digits) > 19:
                    windows = [
                        digits[k : k + n] for n in range(13, 20) for k in range(len(digits) - n + 1)
                    ]
                found += [
                    w for w in windows if 13 <= len(w) <= 19 and w[0] != "0" and luhn_valid(w)
                ]
    return found


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(before=talk, card=card_formats(), after=talk)
def test_a_card_number_in_any_message_is_removed(before, card, after):
    result = redact(f"{before} {card} {after}")

    assert re.sub(r"\D", "", card) not in re.sub(r"[ -]", "", result.text)
    assert "card_number" in result.kinds


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(
        alphabet=st.sampled_from("0123456789 -abc.:"),
        max_size=80,
    )
)
def test_redacted_text_never_contains_a_luhn_valid_card_number(text):
    assert _card_like_spans(redact(text).text) == []


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(max_size=120)
    | st.builds(lambda a, c, b: f"{a} {c} {b}", talk, card_formats(), talk)
)
def test_redaction_is_idempotent(text):
    once = redact(text)
    twice = redact(once.text)

    assert twice.text == once.text
    assert not twice.changed


@st.composite
def ibans(draw) -> str:
    country = draw(st.sampled_from(["GB", "DE", "FR", "NL", "IE", "ES"]))
    bban = draw(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=12, max_size=26))
    numeric = "".join(str(int(char, 36)) for char in bban + country + "00")
    check = 98 - int(numeric) % 97
    compact = f"{country}{check:02d}{bban}"
    if draw(st.booleans()):
        return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    return compact


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(iban=ibans())
def test_an_iban_is_removed(iban):
    assert iban_valid(iban)

    result = redact(f"pay it into {iban} please")

    assert result.text == "pay it into [bank details removed] please"


@st.composite
def nhs_numbers(draw) -> str:
    body = draw(st.sampled_from("467")) + draw(st.text("0123456789", min_size=8, max_size=8))
    for digit in "0123456789":
        if nhs_number_valid(body + digit):
            number = body + digit
            return f"{number[:3]} {number[3:6]} {number[6:]}"
    return draw(nhs_numbers())


@settings(max_examples=200)
@given(number=nhs_numbers())
def test_an_nhs_number_with_a_valid_check_digit_is_removed(number):
    result = redact(f"it says {number} on the letter")

    assert result.text == "it says [NHS number removed] on the letter"


# Phone numbers as written in the UK, years, ages, times, house numbers, prices, dates.
ordinary_numbers = st.one_of(
    st.builds(lambda n: f"0{n}", st.integers(1000000000, 9999999999)),
    st.builds(lambda a, b: f"0{a} {b:06d}", st.integers(1000, 9999), st.integers(0, 999999)),
    st.builds(
        lambda a, b, c: f"0{a} {b:03d} {c:04d}",
        st.integers(100, 999),
        st.integers(0, 999),
        st.integers(0, 9999),
    ),
    st.builds(str, st.integers(1900, 2030)),
    st.builds(lambda h, m: f"{h}:{m:02d}", st.integers(0, 23), st.integers(0, 59)),
    st.builds(lambda n: f"{n} years old", st.integers(60, 105)),
    st.builds(lambda n: f"number {n}", st.integers(1, 999)),
    st.builds(lambda p, q: f"£{p}.{q:02d}", st.integers(0, 999), st.integers(0, 99)),
    st.builds(
        lambda d, m, y: f"{d}/{m}/{y}",
        st.integers(1, 31),
        st.integers(1, 12),
        st.integers(1920, 2030),
    ),
)
ordinary_words = st.sampled_from(
    [
        "I",
        "my",
        "daughter",
        "rang",
        "on",
        "at",
        "in",
        "the",
        "house",
        "was",
        "born",
        "and",
        "tea",
        "is",
    ]
)


@settings(max_examples=300)
@given(parts=st.lists(st.tuples(ordinary_words, ordinary_numbers), min_size=1, max_size=5))
def test_ordinary_numbers_in_talk_are_never_redacted(parts):
    # Numbers in talk come between words: "I rang 0113 496 0000 in 1962 at 10:30".
    text = " ".join(f"{word} {number}" for word, number in parts)

    assert redact(text).text == text
