"""Nothing that identifies or describes the person is stored in plaintext (issue 15, item 2).

A realistic run (the demo `prepare_run` loads: conversations through the services, the jobs that
summarise them and read facts from them, trends and alerts) plus what caregivers enter (someone in
the person's life, a routine), then every column of every table is read with plain SQL and
searched for what the run wrote: the person's sentences, Clara's replies, names, what caregivers
typed, the sentences facts came from, entity labels, memory keys and the embeddings' vectors;
and a login's second factor (its authenticator's secret, its recovery codes); a story caregivers
wrote about the person, and the bot's idempotency keys (issue 30). Repetition fingerprints are
keyed per person: two people's share no token.
Runs on whichever engine the suite runs on (SQLite, and PostgreSQL with DATABASE_URL).
"""

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection

from dashboard import services as dashboard_services
from dashboard.models import CareRole, CareTeamMembership
from dashboard.notes import services as notes_services
from memory import demo
from memory.models import ChatMessage, Memory, Person, RepetitionRecord

PEOPLE, DAYS, SEED = 2, 3, 7
CAREGIVER_NAME, CAREGIVER_RELATION = "Rosalind Featherstonehaugh", "goddaughter from Tobermory"
ROUTINE = "Walks the terrier along Quillfeather Lane at nine"
CAREGIVER_NOTE = "Asked twice for Marguerite Pennywhistle after tea, settled with the photos"
STORY_TITLE = "The summer at Llanbedrog with Bartholomew"
STORY_TEXT = "Every August the family rented the striped hut by the Llanbedrog lifeboat slip."
IDEMPOTENCY_KEY = "bot-turn-Quillfeather-90210"
# Both people say this: their fingerprints of it must still differ.
SAID_BY_BOTH = "I want my blue cardigan with the wooden buttons"


def _every_value() -> dict[str, tuple[str, bytes]]:
    """Per table, all its values as one text (str columns, JSON, numbers) and one byte string
    (binary columns), read with plain SQL: what a copy of the database holds."""
    quote = connection.ops.quote_name
    found = {}
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {quote(table)}")  # noqa: S608 - names from the database
            texts, blobs = [], []
            for row in cursor.fetchall():
                for value in row:
                    if isinstance(value, bytes | bytearray | memoryview):
                        blobs.append(bytes(value))
                    elif isinstance(value, dict | list):
                        texts.append(json.dumps(value, ensure_ascii=False))
                    elif value is not None:
                        texts.append(str(value))
            found[table] = ("\n".join(texts), b"\n".join(blobs))
    return found


def _word(needle: str) -> re.Pattern:
    # A whole word or phrase: a short name may occur inside base64 ciphertext by chance, but
    # never with a non-base64 character (space, quote, punctuation) on each side.
    return re.compile(rf"(?<![\w-]){re.escape(needle)}(?![\w-])")


def _realistic_run() -> dict:
    """Load the demo and what caregivers enter; return what the scan looks for."""
    # Committed for real (a transactional test): the jobs each commit queues (summaries, facts,
    # promises) run as loading goes, as `prepare_run` runs them.
    call_command("load_demo", "--people", str(PEOPLE), "--days", str(DAYS), "--seed", str(SEED))
    plan = demo.build_plan(seed=SEED, people=PEOPLE, days=DAYS)
    person = Person.objects.order_by("created_at").first()
    user = get_user_model().objects.create_user("atrest-staff", password="x" * 20)
    dashboard_services.person_in_life_add(
        person=person, name=CAREGIVER_NAME, relation=CAREGIVER_RELATION, note="", user=user
    )
    dashboard_services.routine_add(person=person, routine=ROUTINE, user=user)
    # A note between caregivers (dashboard/notes): the caregivers' words about the person.
    membership = CareTeamMembership.objects.create(user=user, person=person, role=CareRole.STAFF)
    notes_services.note_add(
        person=person, membership=membership, text=CAREGIVER_NOTE, visibility="staff"
    )

    # A story about the person (issue 30), and what both people say, one with the bot's key.
    from memory.conversations import services as conversation_services
    from memory.models import Narrative

    Narrative.objects.create(
        title=STORY_TITLE, text=STORY_TEXT, category="reminiscence", person=person
    )
    for index, someone in enumerate(Person.objects.order_by("created_at")[:2]):
        session = someone.sessions.order_by("created_at").first()
        conversation_services.exchange_record(
            session_id=session.id,
            user_message=SAID_BY_BOTH,
            assistant_message="They are in the wardrobe, dear.",
            idempotency_key=IDEMPOTENCY_KEY if index == 0 else None,
        )

    # The login's second factor: an authenticator app's secret and recovery codes.
    from base64 import b32encode

    from dashboard.second_factor.services import recovery_codes_issue
    from tests.support.otp import totp_device

    device = totp_device(user)
    second_factor = {
        device.key,
        b32encode(device.bin_key).decode().rstrip("="),
        *recovery_codes_issue(user=user),
    }

    sentences = {e.person_message for s in plan.sessions for e in s.exchanges}
    sentences |= set(
        ChatMessage.objects.filter(role=ChatMessage.Role.ASSISTANT).values_list(
            "content", flat=True
        )
    )
    names = set()
    for p in Person.objects.all():
        names |= {p.display_name, p.caregiver_context.get("preferredName", "")}
    labels, keys, sources, vectors = set(), set(), set(), []
    for m in Memory.objects.all():
        sentences.add(m.content)
        labels |= set(m.entity_labels.values())
        keys |= {m.key, m.memory_key, *m.entity_refs}
        if m.metadata.get("source_text"):
            sources.add(m.metadata["source_text"])
        if m.embedding:
            vectors.append(bytes(m.embedding))
    fingerprints = {}
    for person_id, fingerprint in RepetitionRecord.objects.values_list("person_id", "fingerprint"):
        fingerprints.setdefault(person_id, set()).update(fingerprint.split())
    return {
        "fingerprints": list(fingerprints.values()),
        "tables": _every_value(),
        "sentences": {s for s in sentences if s and len(s) >= 12},
        "names": {n for n in names | labels if n},
        "keys": {k for k in keys if k and len(k) >= 8},
        "sources": sources,
        "vectors": vectors,
        "second_factor": second_factor,
    }


def _hits(tables: dict, needles, *, whole_word: bool = False) -> list[str]:
    hits = []
    for needle in sorted(needles):
        pattern = _word(needle) if whole_word else None
        for table, (text, _blob) in tables.items():
            if pattern.search(text) if pattern else needle in text:
                hits.append(f"{table}: {needle!r}")
    return hits


def _vector_hits(tables: dict, vectors: list[bytes]) -> list[str]:
    # The first 32 bytes (8 float32s) of a vector are as good as the vector for confirming a
    # guessed sentence with the public model.
    return [
        f"{table}: vector {i}"
        for i, vector in enumerate(vectors)
        for table, (_text, blob) in tables.items()
        if vector[:32] in blob
    ]


@pytest.mark.django_db(transaction=True)
def test_a_database_copy_after_a_realistic_run_holds_no_sentence_name_key_or_vector():
    run = _realistic_run()
    tables = run["tables"]
    # The run wrote what the scan looks for (a scan of nothing would pass).
    assert len(run["sentences"]) > 50
    assert CAREGIVER_NAME in run["names"] and len(run["names"]) >= 2 * PEOPLE + 1
    assert run["sources"], "no fact was read from the conversations"
    assert run["vectors"], "nothing was embedded"
    assert any("person:" in key for key in run["keys"])
    assert sum(len(text) + len(blob) for text, blob in tables.values()) > 100_000

    assert "caregiver_notes" in tables  # the notes between caregivers are scanned too
    said = run["sentences"] | run["sources"] | {ROUTINE, CAREGIVER_RELATION, CAREGIVER_NOTE}
    said |= {STORY_TITLE, STORY_TEXT, IDEMPOTENCY_KEY, SAID_BY_BOTH}
    assert _hits(tables, said) == []
    assert _hits(tables, run["names"], whole_word=True) == []
    assert _hits(tables, run["keys"]) == []
    assert _vector_hits(tables, run["vectors"]) == []
    # No second factor's secret: neither the TOTP key (hex or base32) nor a recovery code.
    assert "dashboard_totp_devices" in tables and "dashboard_recovery_codes" in tables
    assert len(run["second_factor"]) == 12
    assert _hits(tables, run["second_factor"]) == []
    # Fingerprints keyed per person: the same words of two people give no common token.
    assert "narratives" in tables and len(run["fingerprints"]) == PEOPLE
    first, second = run["fingerprints"]
    assert first and second and not first & second

    # Matching still works where it must: a person by the exact name (its keyed hash).
    person = Person.objects.order_by("created_at").first()
    assert Person.objects.get(display_name=person.display_name) == person
    assert not Person.objects.filter(display_name=person.display_name + " ").exists()


def test_the_scan_finds_plaintext_when_it_is_there():
    vector = bytes(range(64))
    planted = {"planted": ("note: Rosalind was here, said Where is my coat?", b"xx" + vector)}
    assert _hits(planted, ["Rosalind"], whole_word=True) == ["planted: 'Rosalind'"]
    assert _hits(planted, ["Where is my coat?"]) == ["planted: 'Where is my coat?'"]
    assert _vector_hits(planted, [vector]) == ["planted: vector 0"]
    # ...and a name inside base64 ciphertext is not a hit.
    assert _hits({"t": ("enc:v2:ab12cd34:xRosalindy", b"")}, ["Rosalind"], whole_word=True) == []
