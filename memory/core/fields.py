"""Model fields that keep their value encrypted in the database (memory/core/crypto.py).

Every ORM write encrypts (`get_prep_value`) and every ORM read decrypts (`from_db_value`), so
`.save()`, `.create()`, `.update()`, `bulk_update`, `values()`, `values_list()` and aggregates
over the column (`Max("content")` takes the field as its output field) all see plaintext; only
the database sees ciphertext. The per-turn raw SQL in memory/conversations/sql.py calls the same
functions of memory.core.crypto by hand.

Column types stay what they were: an encrypted text is a TEXT column, an encrypted JSON value is
a JSON string inside the JSON column (jsonb on PostgreSQL), so switching a field to its encrypted
twin changes no column (encryption needs no schema change). Only
VARCHAR columns must become TEXT, because the ciphertext is longer than the plaintext limit.

Each value is bound to its table and column (AES-GCM associated data, `context` below): a
ciphertext copied into another column or table fails to decrypt, loudly.

Nothing can be compared in SQL on ciphertext (each value has its own random nonce), so the
lookups that would quietly never match are refused with a FieldError. `icontains` is kept, and
matches nothing, so that Django admin search boxes that list such a column keep working for their
other fields.
"""

from __future__ import annotations

import json

from django.core.exceptions import FieldError
from django.db import models
from django.db.models import Lookup

from memory.core import crypto


class FingerprintTokens(str):
    """A fingerprint already in keyed-token form (read from the database): never hashed again."""

    __slots__ = ()


class _MatchesNothing(Lookup):
    """`icontains` on ciphertext: always false (a substring of ciphertext means nothing)."""

    lookup_name = "icontains"
    prepare_rhs = False

    def as_sql(self, compiler, connection):
        return "1 = 0", []


def context_of(field: models.Field) -> str:
    """What a value of `field` is bound to: "<table>.<column>" (the same in migrations'
    historical models, which keep the table name)."""
    return f"{field.model._meta.db_table}.{field.column}"


def _refuse(field: models.Field, lookup_name: str):
    raise FieldError(
        f"{field.model.__name__}.{field.name} is encrypted at rest: '{lookup_name}' cannot be "
        "evaluated in SQL. Filter on another column and compare in Python."
    )


class EncryptedTextField(models.TextField):
    """Text stored as AES-256-GCM ciphertext; `max_length` (if given) still limits form input."""

    description = "Text encrypted at rest"

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if value is None or hasattr(value, "as_sql"):
            return value
        return crypto.encrypt(str(value), context=context_of(self))

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        return crypto.decrypt(value, context=context_of(self))

    def get_lookup(self, lookup_name):
        if lookup_name == "isnull":
            return super().get_lookup(lookup_name)
        if lookup_name == "icontains":
            return _MatchesNothing
        _refuse(self, lookup_name)

    def get_transform(self, lookup_name):
        return None


class EncryptedBinaryField(models.BinaryField):
    """Bytes stored as AES-256-GCM ciphertext in a binary column (`crypto.encrypt_bytes`: the
    same key header as the text fields, then the raw sealed bytes, so no base64 inflates it).
    Reads give `bytes`; a value stored before encryption (no header) reads as it is."""

    description = "Bytes encrypted at rest"

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is not None and not hasattr(value, "as_sql"):
            value = crypto.encrypt_bytes(bytes(value), context=context_of(self))
        return super().get_db_prep_value(value, connection, prepared)

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        return crypto.decrypt_bytes(bytes(value), context=context_of(self))

    def get_lookup(self, lookup_name):
        if lookup_name == "isnull":
            return super().get_lookup(lookup_name)
        _refuse(self, lookup_name)

    def get_transform(self, lookup_name):
        return None


class EncryptedJSONField(models.JSONField):
    """A JSON value stored as an encrypted JSON string in the same JSON column.

    SQL NULL stays NULL (so `__isnull` still works); anything else is serialised, encrypted and
    written as a JSON string. Rows written before encryption hold a JSON object and read as such.
    """

    description = "JSON encrypted at rest"

    def get_db_prep_value(self, value, connection, prepared=False):
        if not prepared:
            value = self.get_prep_value(value)
        if isinstance(value, models.expressions.Value) and isinstance(
            value.output_field, models.JSONField
        ):
            value = value.value
        elif hasattr(value, "as_sql"):
            return value
        if value is None:
            return None
        token = crypto.encrypt(json.dumps(value, cls=self.encoder), context=context_of(self))
        return connection.ops.adapt_json_value(token, None)

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        if isinstance(value, str | bytes):
            value = json.loads(value)
        if crypto.is_encrypted(value):
            return json.loads(crypto.decrypt(value, context=context_of(self)), cls=self.decoder)
        return value

    def get_lookup(self, lookup_name):
        if lookup_name == "isnull":
            return super().get_lookup(lookup_name)
        _refuse(self, lookup_name)

    def get_transform(self, lookup_name):
        # No key lookups (caregiver_context__timezone): the keys are inside the ciphertext.
        return None


class _SealedExact(Lookup):
    """`=` on a deterministically encrypted column: the value sealed under every configured key
    (one during normal running; two while a rotation is under way)."""

    lookup_name = "exact"
    prepare_rhs = False

    def _sealed(self) -> list[str]:
        field = self.lhs.output_field
        if hasattr(self.rhs, "as_sql"):
            _refuse(field, f"{self.lookup_name} against an expression")
        values = self.rhs if self.lookup_name == "in" else [self.rhs]
        sealed: list[str] = []
        for value in values:
            if value is None:
                continue
            value = str(value)
            # "" is stored as "" (no identity to hide), so `memory_key=""` still works.
            if value == "":
                sealed.append("")
            else:
                sealed.extend(crypto.lookup_variants(value, context=context_of(field)))
        return list(dict.fromkeys(sealed))

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        sealed = self._sealed()
        if not sealed:
            return "1 = 0", []
        if len(sealed) == 1:
            return f"{lhs} = %s", [*lhs_params, sealed[0]]
        marks = ", ".join(["%s"] * len(sealed))
        return f"{lhs} IN ({marks})", [*lhs_params, *sealed]


class _SealedIn(_SealedExact):
    lookup_name = "in"


class EncryptedKeyField(models.TextField):
    """Text that must be both matched in SQL and shown: a memory's key and fact identity
    (`people|person:claire|relationship` names who the person misses).

    Stored as deterministic AES-SIV (`crypto.seal_lookup`) bound to its table and column, so
    equal texts are equal values: `field=value`, `field__in=[...]` and unique constraints keep
    working, and reads decrypt. Only equality shows (which a keyed hash would show too); prefix,
    range and ordering lookups are refused. "" stays "" (the "no identity" value).
    """

    description = "Text encrypted at rest, deterministically (equality lookups work)"

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if value is None or value == "" or hasattr(value, "as_sql"):
            return value
        return crypto.seal_lookup(str(value), context=context_of(self))

    def from_db_value(self, value, expression, connection):
        if value is None or value == "":
            return value
        return crypto.decrypt(value, context=context_of(self))

    def get_lookup(self, lookup_name):
        if lookup_name == "isnull":
            return super().get_lookup(lookup_name)
        if lookup_name == "exact":
            return _SealedExact
        if lookup_name == "in":
            return _SealedIn
        if lookup_name == "icontains":
            return _MatchesNothing
        _refuse(self, lookup_name)

    def get_transform(self, lookup_name):
        return None


class FingerprintField(models.TextField):
    """A repetition fingerprint stored as keyed tokens (memory/core/crypto.py), never as words.

    Assign the plain fingerprint (content words, space-joined) and the field stores one keyed
    token per word, sorted, so equal word sets are equal strings (exact equality in SQL, and
    `fingerprint=` lookups, still work) and Jaccard on the tokens equals Jaccard on the words.
    Reads return `FingerprintTokens`, which are written back unchanged. "" stays "" (a message of
    only common words has nothing to compare).
    """

    description = "Repetition fingerprint as keyed-hash tokens"

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if value is None or hasattr(value, "as_sql") or isinstance(value, FingerprintTokens):
            return value
        return crypto.fingerprint_tokens(str(value))

    def from_db_value(self, value, expression, connection):
        return None if value is None else FingerprintTokens(value)
