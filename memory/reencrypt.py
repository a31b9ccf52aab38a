"""Rewrite every encrypted column under the primary key: the data migration and `rotate_keys`.

Reads and writes the columns with plain SQL, not through the fields, so it sees what is really
stored (plaintext from before encryption, ciphertext under an old key, or current ciphertext)
and works the same with the historical models of a migration. A value is rewritten only when it
is not already ciphertext under the primary key, so running it twice changes nothing the second
time. Each batch is read, then written in its own transaction (a savepoint inside a migration),
and each UPDATE only
applies if the stored value is still the one read (compare-and-set), so a row a live request
changed meanwhile is left alone and picked up by the next run.

Repetition fingerprints cannot be decrypted (they are keyed hashes); they are recomputed from the
record's original message, which is the text they were made from, under the key of the record's
person (or anonymous session). A repetition record's meaning
(a binary column) carries keyed hashes of its words too: under an old key it is made again from
the original message (one MiniLM pass a record, ~11 ms of CPU: about 3 hours per million of the
person's messages on a 2-core machine), so old and new messages still compare by meaning; rows
are read and planned outside a transaction and written with compare-and-set.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import connection, models, transaction

from memory.core import crypto
from memory.core.fields import (
    EncryptedBinaryField,
    EncryptedJSONField,
    EncryptedKeyField,
    EncryptedTextField,
    FingerprintField,
    KeyedDigestField,
    LookupHashField,
    context_of,
    row_attname,
    row_text,
)
from memory.core.progress import Progress

_ENCRYPTED_FIELDS = (
    EncryptedTextField,
    EncryptedJSONField,
    EncryptedBinaryField,
    EncryptedKeyField,
    FingerprintField,
    LookupHashField,
    KeyedDigestField,
)

BATCH_SIZE = 1000
# Tables whose rows are large, read a few at a time: a search snapshot holds a whole scope's
# vectors (150 MB at 100k memories, memory/facts/snapshots.py).
_BATCH_LIMITS = {"memory_snapshots": 1}


@dataclass
class ColumnCount:
    """What one pass did to one column."""

    table: str
    column: str
    rows: int = 0
    rewritten: int = 0
    # Keyed digests under an old key (`KeyedDigestField`): they cannot be made again here.
    stale: int = 0


def encrypted_models(all_models: Iterable[type[models.Model]]) -> list[tuple[type, list]]:
    """(model, its encrypted or fingerprint fields) for every model that has any."""
    found = []
    for model in all_models:
        fields = [
            field for field in model._meta.concrete_fields if isinstance(field, _ENCRYPTED_FIELDS)
        ]
        if fields:
            found.append((model, fields))
    return found


def _parse_json(raw):
    return json.loads(raw) if isinstance(raw, str | bytes) else raw


def _json_param(value):
    return connection.ops.adapt_json_value(value, None)


def _json_match_param(raw, parsed):
    # SQLite stores JSON as text: compare with the very text read. PostgreSQL compares jsonb.
    return _json_param(parsed) if connection.vendor == "postgresql" else raw


# Fingerprints are made again from the record's original message, read alongside.
_ORIGINAL = "repetition_tracking.original_message"


@dataclass
class _Change:
    new: object
    old: object


def _reencrypt_bytes(raw, ring: crypto.Keyring, context: str, bound: str | None) -> bytes:
    return ring.encrypt_bytes(ring.decrypt_bytes(raw, context=context), context=context, row=bound)


def _same_key(raw, ring: crypto.Keyring) -> bool:
    """Whether a binary value is under the primary key already (then only its binding changes,
    and a derived value need not be made again)."""
    kid = bytes(raw)[len(crypto.PREFIX) : len(crypto.PREFIX) + crypto.KID_CHARS]
    return kid == ring.primary.kid.encode("ascii")


def _clear_column(field) -> str | None:
    """The column that says whether a row's value of `field` is shared text (stored as it is),
    for an `EncryptedTextField(clear_unless=...)`; else None."""
    attname = getattr(field, "clear_unless", None)
    return None if attname is None else field.model._meta.get_field(attname).column


def _is_clear(field, row: dict) -> bool:
    column = _clear_column(field)
    return column is not None and row.get(column) is None


def _bound_row(field, row: dict) -> str | None:
    """The row `field`'s values are bound to in `row` (memory/core/fields.py `row_attname`)."""
    if isinstance(field, EncryptedKeyField | FingerprintField | LookupHashField):
        return None  # compared across rows: bound to the column only
    attname = row_attname(field.model)
    return row_text(row.get(field.model._meta.get_field(attname).column)) if attname else None


def _meaning_again(row: dict, ring: crypto.Keyring, bound: str | None) -> bytes | None:
    """A repetition record's meaning made again from its original message, under the primary
    key and bound to `bound` (the record's id): the meaning carries keyed hashes of its words,
    which must match the new messages'. None when the embedder cannot analyse (then the old
    meaning is kept, re-encrypted)."""
    from memory.conversations import meaning, repeats

    original = row.get("original_message")
    if original is None:
        return None
    found = repeats.meaning_of(ring.decrypt(original, context=_ORIGINAL))
    if found is None:
        return None
    return ring.encrypt_bytes(meaning.to_stored(found), context=repeats.MEANING_CONTEXT, row=bound)


# Binary columns derived from another column with keyed hashes: (table, column) → how to make
# the value again under the primary key (from the row, which holds original_message).
_DERIVED: dict[tuple[str, str], Callable[[dict, crypto.Keyring, str | None], bytes | None]] = {
    ("repetition_tracking", "meaning"): _meaning_again,
}


def _plan_encrypt(field, raw, row: dict, ring: crypto.Keyring) -> _Change | None:
    """The new stored value of `field` for the current primary key, or None if it is current.

    Values from before binding (v1, or plaintext) are rewritten bound to their table and column.
    """
    if raw is None or isinstance(field, KeyedDigestField):
        return None  # nothing stored holds a digest's secret: counted, never rewritten
    context = context_of(field)
    if _is_clear(field, row):
        # Shared text about no one (the narratives' library): kept as it is.
        if not crypto.is_encrypted(raw):
            return None
        return _Change(ring.decrypt(raw, context=context), raw)
    bound = _bound_row(field, row)
    if isinstance(field, EncryptedBinaryField):
        if ring.is_current_bytes(raw, row=bound):
            return None
        derive = _DERIVED.get((field.model._meta.db_table, field.column))
        if derive is not None and crypto.is_encrypted_bytes(raw) and not _same_key(raw, ring):
            # Made with an old key's keyed hashes: made again under the primary key (later,
            # outside the batch's transaction), or, if that cannot be done, re-encrypted as is.
            return _Change(
                lambda: derive(row, ring, bound) or _reencrypt_bytes(raw, ring, context, bound),
                raw,
            )
        return _Change(_reencrypt_bytes(raw, ring, context, bound), raw)
    if isinstance(field, LookupHashField):
        # Made again from the plaintext of its source column (read in the same row).
        source = field.source_field()
        text = row.get(source.column)
        text = "" if text is None else ring.decrypt(text, context=context_of(source))
        digest = ring.keyed_hash(text, purpose=context_of(source)) if text else ""
        return None if digest == raw else _Change(digest, raw)
    if isinstance(field, EncryptedKeyField):
        if ring.is_current_lookup(raw):
            return None
        sealed = ring.seal_lookup(ring.decrypt(raw, context=context), context=context)
        return _Change(sealed, raw)
    if isinstance(field, FingerprintField):
        from memory.conversations import repetition

        original = row.get("original_message")
        original = "" if original is None else ring.decrypt(original, context=_ORIGINAL)
        words = repetition.fingerprint(original)
        if not words:
            return None if raw == "" else _Change("", raw)
        scope = repetition.scope_of(
            person_id=row.get("person_id"), session_id=row.get("session_id")
        )
        tokens = ring.fingerprint_tokens(words, scope=scope)
        return None if tokens == raw else _Change(tokens, raw)
    if isinstance(field, EncryptedJSONField):
        parsed = _parse_json(raw)
        if isinstance(parsed, str) and ring.is_current(parsed, row=bound):
            return None
        plain = (
            json.loads(ring.decrypt(parsed, context=context))
            if crypto.is_encrypted(parsed)
            else parsed
        )
        token = ring.encrypt(json.dumps(plain), context=context, row=bound)
        return _Change(_json_param(token), _json_match_param(raw, parsed))
    if ring.is_current(raw, row=bound):
        return None
    return _Change(
        ring.encrypt(ring.decrypt(raw, context=context), context=context, row=bound), raw
    )


def _plan_decrypt(field, raw, row: dict, ring: crypto.Keyring) -> _Change | None:
    """The plaintext stored value of `field` (the reverse migration), or None if already plain."""
    if raw is None or isinstance(field, LookupHashField | KeyedDigestField):
        return None  # a keyed hash has no plaintext form; it stays as it is
    context = context_of(field)
    if isinstance(field, EncryptedBinaryField):
        plain = ring.decrypt_bytes(raw, context=context)
        return None if plain == bytes(raw) else _Change(plain, raw)
    if isinstance(field, FingerprintField):
        from memory.conversations import repetition

        original = row.get("original_message")
        original = "" if original is None else ring.decrypt(original, context=_ORIGINAL)
        words = repetition.fingerprint(original)
        return None if words == raw else _Change(words, raw)
    if isinstance(field, EncryptedJSONField):
        parsed = _parse_json(raw)
        if not crypto.is_encrypted(parsed):
            return None
        plain = json.loads(ring.decrypt(parsed, context=context))
        return _Change(_json_param(plain), _json_match_param(raw, parsed))
    if not crypto.is_encrypted(raw):
        return None
    return _Change(ring.decrypt(raw, context=context), raw)


def _sweep(
    all_models: Iterable[type[models.Model]],
    plan: Callable,
    *,
    batch_size: int,
    progress: Callable[[str], None] | None,
    dry_run: bool = False,
    meter: Progress | None = None,
) -> list[ColumnCount]:
    ring = crypto.keyring()
    quote = connection.ops.quote_name
    counts: list[ColumnCount] = []
    all_batch_size = batch_size
    swept = encrypted_models(all_models)
    if meter is not None:
        # Rows of every table to sweep, counted first so the meter knows the whole.
        with connection.cursor() as cursor:
            for model, _ in swept:
                cursor.execute(f"SELECT COUNT(*) FROM {quote(model._meta.db_table)}")  # noqa: S608 - a model's table
                meter.add_total(cursor.fetchone()[0])
    for model, fields in swept:
        table = model._meta.db_table
        batch_size = min(all_batch_size, _BATCH_LIMITS.get(table, all_batch_size))
        pk = model._meta.pk.column
        # A fingerprint is made from the original message, under its person's (or session's)
        # key: read them alongside.
        columns = [f.column for f in fields]
        if any(isinstance(f, FingerprintField) for f in fields):
            columns += [
                c for c in ("original_message", "person_id", "session_id") if c not in columns
            ]
        for field in fields:
            if isinstance(field, LookupHashField) and field.source_field().column not in columns:
                columns.append(field.source_field().column)
            clear = _clear_column(field)
            if clear is not None and clear not in columns:
                columns.append(clear)
        # Values are bound to their row: read what they are bound to (when not the pk).
        attname = row_attname(model)
        if attname is not None:
            bound_column = model._meta.get_field(attname).column
            if bound_column != pk and bound_column not in columns:
                columns.append(bound_column)
        names = [pk, *columns]
        select = ", ".join(quote(name) for name in names)
        by_column = {f.column: ColumnCount(table, f.column) for f in fields}
        last = None
        while True:
            where = f"WHERE {quote(pk)} > %s " if last is not None else ""
            sql = f"SELECT {select} FROM {quote(table)} {where}ORDER BY {quote(pk)} LIMIT %s"  # noqa: S608 - names from the models
            # Read and planned outside a transaction (making a meaning again runs the model,
            # which must not hold the write lock); the updates compare-and-set.
            with connection.cursor() as cursor:
                cursor.execute(sql, [last, batch_size] if last is not None else [batch_size])
                rows = cursor.fetchall()
            changes: dict[str, list] = {f.column: [] for f in fields}
            for values in rows:
                row = dict(zip(names, values, strict=True))
                for field in fields:
                    if isinstance(field, KeyedDigestField) and not ring.is_current_digest(
                        row[field.column]
                    ):
                        by_column[field.column].stale += 1
                    change = plan(field, row[field.column], row, ring)
                    if change is not None:
                        new = change.new
                        if callable(new) and not dry_run:
                            new = new()
                        changes[field.column].append([new, row[pk], change.old])
            with transaction.atomic(), connection.cursor() as cursor:
                for column, params in changes.items():
                    by_column[column].rows += len(rows)
                    if dry_run:
                        by_column[column].rewritten += len(params)
                    elif params:
                        cursor.executemany(
                            f"UPDATE {quote(table)} SET {quote(column)} = %s "  # noqa: S608
                            f"WHERE {quote(pk)} = %s AND {quote(column)} = %s",
                            params,
                        )
                        by_column[column].rewritten += max(cursor.rowcount, 0)
            if meter is not None:
                meter.update(len(rows))
            if progress and rows:
                done = ", ".join(f"{c.column} {c.rewritten}/{c.rows}" for c in by_column.values())
                progress(f"{table}: {done}")
            if len(rows) < batch_size:
                break
            last = rows[-1][0]
        counts.extend(by_column.values())
    return counts


def reencrypt_all(
    all_models: Iterable[type[models.Model]] | None = None,
    *,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[str], None] | None = None,
    dry_run: bool = False,
    meter: Progress | None = None,
) -> list[ColumnCount]:
    """Encrypt every encrypted column's values under the primary key (plaintext rows included).

    Returns per column how many rows were read and how many rewritten (with `dry_run`: how many
    would be, and nothing is written). `meter` counts the rows read against every table's.
    """
    return _sweep(
        _models(all_models),
        _plan_encrypt,
        batch_size=batch_size,
        progress=progress,
        dry_run=dry_run,
        meter=meter,
    )


def decrypt_all(
    all_models: Iterable[type[models.Model]] | None = None,
    *,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[str], None] | None = None,
) -> list[ColumnCount]:
    """Write every encrypted column back as plaintext (reversing migration 0011 only)."""
    return _sweep(_models(all_models), _plan_decrypt, batch_size=batch_size, progress=progress)


def _models(all_models):
    if all_models is not None:
        return list(all_models)
    from django.apps import apps

    # Every app's: the dashboard's notes, handover notes and suggestions, and the second
    # factor's secrets are encrypted too, and must not be left under a key about to be dropped.
    return list(apps.get_models())
