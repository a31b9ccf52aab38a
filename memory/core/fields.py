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
        return crypto.encrypt(str(value))

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        return crypto.decrypt(value)

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
            value = crypto.encrypt_bytes(bytes(value))
        return super().get_db_prep_value(value, connection, prepared)

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        return crypto.decrypt_bytes(bytes(value))

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
        token = crypto.encrypt(json.dumps(value, cls=self.encoder))
        return connection.ops.adapt_json_value(token, None)

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        if isinstance(value, str | bytes):
            value = json.loads(value)
        if crypto.is_encrypted(value):
            return json.loads(crypto.decrypt(value), cls=self.decoder)
        return value

    def get_lookup(self, lookup_name):
        if lookup_name == "isnull":
            return super().get_lookup(lookup_name)
        _refuse(self, lookup_name)

    def get_transform(self, lookup_name):
        # No key lookups (caregiver_context__timezone): the keys are inside the ciphertext.
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
