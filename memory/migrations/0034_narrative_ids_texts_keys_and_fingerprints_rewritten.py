"""Personal text at rest, round three (issue 30, step 5): the rows.

Forward, in this order:
1. A story about a person whose id a person chose (a slug, e.g. "nan-wedding-day") gets an id
   made by code (`uuid7_text`), so another organisation can neither guess nor confirm it; the
   usages and messages that name it follow (plain text columns, no foreign key). The shared
   library keeps its ids (the same rows for every organisation). Session summaries written
   before keep the old id in their list of stories told (shown as its words, as for any story
   no longer found).
2. Every narrative's title and text are encrypted and bound to the row (the `rotate_keys` pass,
   memory/reencrypt.py).
3. Every idempotency key is replaced by its keyed digest (memory/conversations/sql.py
   `db_idempotency_key`: the key and its session), so a retry still finds its exchange; so is
   every queued message's client key (memory/companion/turns.py `client_key_digests`: the key
   and its person).
4. Every repetition fingerprint is made again from its record's original message under its
   person's own key (or its anonymous session's): equal words of two people now differ. The
   fingerprints kept with agreed answers in a person's profile are made again the same way.

Reverse: titles and texts are written back as plaintext; fingerprints (records' and agreed
answers') are made again under the one key of all people, as the code before made them. The new
ids stay (valid slugs) and the idempotency and client keys stay digests (a digest cannot be undone: a retry
of an exchange stored before this migration, under the code before, is stored again).
"""

import re

from django.db import migrations

_DIGEST = re.compile(r"^[0-9a-f]{8}:[0-9a-f]{64}$")
_UUID_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _rename_person_narratives(apps, schema_editor):
    from memory.core.ids import uuid7_text

    Narrative = apps.get_model("memory", "Narrative")
    quote = schema_editor.connection.ops.quote_name
    ids = Narrative.objects.filter(person__isnull=False).values_list("id", flat=True)
    renames = [(uuid7_text(), old) for old in ids if not _UUID_TEXT.match(old)]
    if not renames:
        return
    with schema_editor.connection.cursor() as cursor:
        for table in ("narratives", "narrative_usage", "chat_messages"):
            column = "id" if table == "narratives" else "narrative_id"
            cursor.executemany(
                f"UPDATE {quote(table)} SET {quote(column)} = %s WHERE {quote(column)} = %s",  # noqa: S608 - names fixed here
                renames,
            )


def _hash_idempotency_keys(apps, schema_editor):
    from memory.conversations import sql as storage
    from memory.core import crypto

    kids = set(crypto.keyring().by_kid)
    ChatMessage = apps.get_model("memory", "ChatMessage")
    rows = ChatMessage.objects.filter(idempotency_key__isnull=False).values_list(
        "id", "session_id", "idempotency_key"
    )
    changes = [
        (storage.db_idempotency_key(key, session_id=session_id), message_id, key)
        for message_id, session_id, key in rows.iterator()
        if not (_DIGEST.match(key) and key[:8] in kids)
    ]
    quote = schema_editor.connection.ops.quote_name
    pk = ChatMessage._meta.pk
    with schema_editor.connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {quote('chat_messages')} SET {quote('idempotency_key')} = %s "  # noqa: S608
            f"WHERE {quote('id')} = %s AND {quote('idempotency_key')} = %s",
            [
                (new, pk.get_db_prep_value(message_id, schema_editor.connection), old)
                for new, message_id, old in changes
            ],
        )


def _hash_client_keys(apps, schema_editor):
    from memory.companion.turns import client_key_digests
    from memory.core import crypto

    kids = set(crypto.keyring().by_kid)
    PendingMessage = apps.get_model("memory", "PendingMessage")
    for pending in PendingMessage.objects.only("id", "person_id", "client_key").iterator():
        key = pending.client_key
        if _DIGEST.match(key) and key[:8] in kids:
            continue
        pending.client_key = client_key_digests(key, person_id=pending.person_id)[0]
        pending.save(update_fields=["client_key"])


def _legacy_tokens(words: str) -> str:
    """A fingerprint as the code before this migration made it: one key for all people."""
    from memory.core import crypto

    key = crypto.keyring().primary
    tokens = set()
    for word in words.split():
        mac = key.fingerprint_mac.copy()
        mac.update(word.encode("utf-8"))
        tokens.add(mac.digest()[: crypto.TOKEN_BYTES].hex().translate(crypto._HEX_TO_LETTERS))
    return " ".join(sorted(tokens))


def _agreed_fingerprints(apps, make) -> None:
    """The fingerprints kept with a person's agreed answers, made again by `make(words, person)`."""
    from memory.conversations import repetition

    Person = apps.get_model("memory", "Person")
    for person in Person.objects.exclude(caregiver_context__isnull=True).iterator():
        about = person.caregiver_context
        agreed = about.get("agreedQuestions") if isinstance(about, dict) else None
        if not isinstance(agreed, list) or not agreed:
            continue
        for item in agreed:
            if isinstance(item, dict) and item.get("fingerprint"):
                words = repetition.fingerprint(str(item.get("question") or ""))
                item["fingerprint"] = make(words, person) if words else ""
        person.caregiver_context = about
        person.save(update_fields=["caregiver_context"])


def forward(apps, schema_editor):
    from memory import reencrypt
    from memory.conversations import repetition
    from memory.core import crypto

    _rename_person_narratives(apps, schema_editor)
    _hash_idempotency_keys(apps, schema_editor)
    _hash_client_keys(apps, schema_editor)
    reencrypt.reencrypt_all(
        [apps.get_model("memory", "Narrative"), apps.get_model("memory", "RepetitionRecord")]
    )
    _agreed_fingerprints(
        apps,
        lambda words, person: crypto.fingerprint_tokens(
            words, scope=repetition.scope_of(person_id=person.id, session_id=None)
        ),
    )


def backward(apps, schema_editor):
    from memory import reencrypt
    from memory.conversations import repetition

    reencrypt.decrypt_all([apps.get_model("memory", "Narrative")])
    RepetitionRecord = apps.get_model("memory", "RepetitionRecord")
    quote = schema_editor.connection.ops.quote_name
    changes = []
    for record_id, original, stored in RepetitionRecord.objects.values_list(
        "id", "original_message", "fingerprint"
    ).iterator():
        tokens = _legacy_tokens(repetition.fingerprint(original or ""))
        if tokens != stored:
            changes.append(
                (
                    tokens,
                    RepetitionRecord._meta.pk.get_db_prep_value(
                        record_id, schema_editor.connection
                    ),
                )
            )
    with schema_editor.connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {quote('repetition_tracking')} SET {quote('fingerprint')} = %s "  # noqa: S608
            f"WHERE {quote('id')} = %s",
            changes,
        )
    _agreed_fingerprints(apps, lambda words, person: _legacy_tokens(words))


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0033_narratives_encrypted_idempotency_keys_hashed"),
    ]

    operations = [
        migrations.RunPython(forward, backward, elidable=True),
    ]
