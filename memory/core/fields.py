"""Model fields that keep their value encrypted in the database (memory/core/crypto.py).

Every ORM write encrypts (`get_prep_value`) and every ORM read decrypts (`from_db_value`), so
`.save()`, `.create()`, `.update()` (see below), `values()`, `values_list()` and aggregates
over the column (`Max("content")` takes the field as its output field) all see plaintext; only
the database sees ciphertext. The per-turn raw SQL in memory/conversations/sql.py calls the same
functions of memory.core.crypto by hand.

Column types stay what they were: an encrypted text is a TEXT column, an encrypted JSON value is
a JSON string inside the JSON column (jsonb on PostgreSQL), so switching a field to its encrypted
twin changes no column (encryption needs no schema change). Only
VARCHAR columns must become TEXT, because the ciphertext is longer than the plaintext limit.

Each value is bound to its table and column (AES-GCM associated data, `context` below): a
ciphertext copied into another column or table fails to decrypt, loudly. The randomised fields
bind each value to its row too (`row_attname`): written through a model instance (`save()`,
`create()`, `bulk_create`), the value names its row in its authenticated header; loaded into an
instance (every ORM read that builds objects, `select_related` included), it is compared with the
row it was read from, and a value moved between rows raises DecryptionError. A write with no
instance (`QuerySet.update`, `bulk_update`) knows no row, so it is refused with a FieldError
unless the value says its row (`for_row(value, row)`); `None` is always accepted. Reads with no
instance (`values()`) are not checked; `rotate_keys` (memory/reencrypt.py) binds every stored
value to its row, including those written before this rule.

A person's name must be both bound to its row and found by its exact text (the admin's search):
`FindableTextField` is a row-bound text whose `=` and `IN` lookups compare a keyed hash kept in
a sibling column (`LookupHashField`, refreshed on every save). Recovery codes, only ever
matched, are kept as keyed hashes that name their key (`KeyedDigestField`).

Nothing can be compared in SQL on ciphertext (each value has its own random nonce), so the
lookups that would quietly never match are refused with a FieldError. `icontains` is kept, and
matches nothing, so that Django admin search boxes that list such a column keep working for their
other fields.
"""

from __future__ import annotations

import json
import uuid

from django.core.exceptions import FieldError
from django.db import models
from django.db.models import Lookup
from django.db.models.expressions import Col
from django.db.models.lookups import IContains

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


# --- Rows -----------------------------------------------------------------------------------


_ROWS: dict[type, tuple[str | None, tuple]] = {}


def _rows_of(model) -> tuple[str | None, tuple]:
    """(row_attname, the row-bound fields) of a model, worked out once per class (loads and
    saves ask on every row)."""
    found = _ROWS.get(model)
    if found is None:
        bound = tuple(f for f in model._meta.concrete_fields if isinstance(f, _RowBound))
        found = _ROWS[model] = (_row_attname(model), bound)
    return found


def row_attname(model) -> str | None:
    """The attribute a model's encrypted values are bound to: its primary key when code makes
    it before the insert (uuid7/uuid4 defaults, memory/core/ids.py), else the person, alert or
    login the row belongs to (`OWNER_ATTNAMES`: keys the database assigns are unknown until the
    insert); None if none of these."""
    return _rows_of(model)[0]


# What a row whose key the database assigns is bound to instead, first found: the person it is
# about, else the alert it belongs to (an alert's timeline), else the login it belongs to (a
# second factor's secret). Each is known before the insert and never changes.
OWNER_ATTNAMES = ("person_id", "alert_id", "user_id")


def _row_attname(model) -> str | None:
    pk = model._meta.pk
    if pk.has_default():
        return pk.attname
    attnames = {f.attname for f in model._meta.concrete_fields}
    return next((name for name in OWNER_ATTNAMES if name in attnames), None)


def row_text(value) -> str | None:
    """A row id as values are bound to it, whatever form it was read in (UUID, hex text)."""
    if value is None:
        return None
    if isinstance(value, uuid.UUID):
        return str(value)
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        return str(value)


class _ForRow:
    """A value on its way to the database, with the row it is bound to (from `pre_save`)."""

    __slots__ = ("row", "value")

    def __init__(self, value, row: str | None):
        self.value, self.row = value, row


def for_row(value, row) -> _ForRow:
    """`value` bound to `row` (the model's `row_attname` value: its id, or its person's), for
    a write that has no instance: `Model.objects.filter(id=x).update(text=for_row(t, x))`."""
    return _ForRow(value, row_text(row))


def _unwrap(value, field=None):
    """(value, row). Given `field`, a row-bound field of a model whose rows values are bound to,
    a value that does not say its row (a `QuerySet.update()` or `bulk_update()`) is refused:
    it would be bound to its column only, and could be moved between rows unnoticed."""
    if isinstance(value, _ForRow):
        return value.value, value.row
    if (
        field is not None
        and value is not None
        and not hasattr(value, "as_sql")
        and row_attname(field.model) is not None
    ):
        raise FieldError(
            f"{field.model.__name__}.{field.name} is encrypted and bound to its row, which "
            "QuerySet.update() and bulk_update() do not know: save the instance, or pass "
            "memory.core.fields.for_row(value, row)."
        )
    return value, None


class BoundText(str):
    """Decrypted text that remembers the row its ciphertext named (`clara_row`)."""


class BoundBytes(bytes):
    """Decrypted bytes that remember their row."""


class BoundDict(dict):
    """A decrypted JSON object that remembers its row."""


class BoundList(list):
    """A decrypted JSON array that remembers its row."""


_BOUND_TYPES = {str: BoundText, bytes: BoundBytes, dict: BoundDict, list: BoundList}


def _bound(value, row: str | None):
    kind = _BOUND_TYPES.get(type(value)) if row is not None else None
    if kind is None:
        return value
    value = kind(value)
    value.clara_row = row
    return value


def _checked_from_db(cls, db, field_names, values):
    """Model.from_db, then: every row-bound value loaded names this row (or no row)."""
    instance = models.Model.from_db.__func__(cls, db, field_names, values)
    attname, bound = _rows_of(cls)
    loaded = instance.__dict__
    if attname is not None and attname in loaded:
        expected = None
        for field in bound:
            row = getattr(loaded.get(field.attname), "clara_row", None)
            if row is not None:
                if expected is None:
                    expected = row_text(loaded[attname])
                crypto.check_row(row, expected, context=context_of(field))
    return instance


class _RowBound:
    """For the randomised encrypted fields: bind values to their row (see the module's doc)."""

    def contribute_to_class(self, cls, name, *args, **kwargs):
        super().contribute_to_class(cls, name, *args, **kwargs)
        # Every model with such a field checks rows on load, without each model class having
        # to remember a base class (models of other parts, migrations' historical models).
        if "from_db" not in cls.__dict__:
            cls.from_db = classmethod(_checked_from_db)

    def pre_save(self, model_instance, add):
        value = super().pre_save(model_instance, add)
        if value is None or hasattr(value, "as_sql"):
            return value
        attname = row_attname(type(model_instance))
        row = row_text(getattr(model_instance, attname)) if attname else None
        return _ForRow(value, row)


def context_of(field: models.Field) -> str:
    """What a value of `field` is bound to: "<table>.<column>" (the same in migrations'
    historical models, which keep the table name)."""
    return f"{field.model._meta.db_table}.{field.column}"


def _refuse(field: models.Field, lookup_name: str):
    raise FieldError(
        f"{field.model.__name__}.{field.name} is encrypted at rest: '{lookup_name}' cannot be "
        "evaluated in SQL. Filter on another column and compare in Python."
    )


class _ContainsInClearRows(IContains):
    """`icontains` on an `EncryptedTextField(clear_unless=...)`: compared in SQL in the rows
    whose text is stored as it is (the shared library), never in the encrypted ones."""

    def as_sql(self, compiler, connection):
        sql, params = super().as_sql(compiler, connection)
        field = self.lhs.output_field
        clear = field.model._meta.get_field(field.clear_unless)
        column, column_params = compiler.compile(Col(self.lhs.alias, clear))
        return f"({sql} AND {column} IS NULL)", [*params, *column_params]


class _Clear(str):
    """A value `EncryptedTextField(clear_unless=...)` stores as it is (shared text)."""

    __slots__ = ()


class EncryptedTextField(_RowBound, models.TextField):
    """Text stored as AES-256-GCM ciphertext; `max_length` (if given) still limits form input.

    `clear_unless` names an attribute (a person's id) that says whether a row is about someone:
    a row where it is None is shared text about no one (a narrative of the team's library) and
    is stored as it is, written through an instance (`save()`, `create()`) and by `rotate_keys`;
    every other row is encrypted and bound as usual.
    """

    description = "Text encrypted at rest"

    def __init__(self, *args, clear_unless: str | None = None, **kwargs):
        self.clear_unless = clear_unless
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if self.clear_unless is not None:
            kwargs["clear_unless"] = self.clear_unless
        return name, path, args, kwargs

    def is_clear_in(self, model_instance) -> bool:
        """Whether this row's value is shared text, stored as it is."""
        return self.clear_unless is not None and getattr(model_instance, self.clear_unless) is None

    def pre_save(self, model_instance, add):
        if self.is_clear_in(model_instance):
            value = getattr(model_instance, self.attname)
            return None if value is None else _Clear(value)
        return super().pre_save(model_instance, add)

    def get_prep_value(self, value):
        if isinstance(value, _Clear):
            return str(value)
        value, row = _unwrap(value, self)
        value = super().get_prep_value(value)
        if value is None or hasattr(value, "as_sql"):
            return value
        return crypto.encrypt(str(value), context=context_of(self), row=row)

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        return _bound(*crypto.keyring().decrypt_bound(value, context=context_of(self)))

    def get_lookup(self, lookup_name):
        if lookup_name == "isnull":
            return super().get_lookup(lookup_name)
        if lookup_name == "icontains":
            return _MatchesNothing if self.clear_unless is None else _ContainsInClearRows
        _refuse(self, lookup_name)

    def get_transform(self, lookup_name):
        return None


class EncryptedBinaryField(_RowBound, models.BinaryField):
    """Bytes stored as AES-256-GCM ciphertext in a binary column (`crypto.encrypt_bytes`: the
    same key header as the text fields, then the raw sealed bytes, so no base64 inflates it).
    Reads give `bytes`; a value stored before encryption (no header) reads as it is."""

    description = "Bytes encrypted at rest"

    def get_db_prep_value(self, value, connection, prepared=False):
        value, row = _unwrap(value, self)
        if value is not None and not hasattr(value, "as_sql"):
            value = crypto.encrypt_bytes(bytes(value), context=context_of(self), row=row)
        return super().get_db_prep_value(value, connection, prepared)

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        return _bound(*crypto.keyring().decrypt_bytes_bound(bytes(value), context=context_of(self)))

    def get_lookup(self, lookup_name):
        if lookup_name == "isnull":
            return super().get_lookup(lookup_name)
        _refuse(self, lookup_name)

    def get_transform(self, lookup_name):
        return None


class EncryptedJSONField(_RowBound, models.JSONField):
    """A JSON value stored as an encrypted JSON string in the same JSON column.

    SQL NULL stays NULL (so `__isnull` still works); anything else is serialised, encrypted and
    written as a JSON string. Rows written before encryption hold a JSON object and read as such.
    """

    description = "JSON encrypted at rest"

    def get_db_prep_value(self, value, connection, prepared=False):
        value, row = _unwrap(value, self)
        if not prepared:
            value = self.get_prep_value(value)
        if isinstance(value, models.expressions.Value) and isinstance(
            value.output_field, models.JSONField
        ):
            value, inner_row = _unwrap(value.value, None if row else self)
            row = row or inner_row
        elif hasattr(value, "as_sql"):
            return value
        if value is None:
            return None
        token = crypto.encrypt(
            json.dumps(value, cls=self.encoder), context=context_of(self), row=row
        )
        return connection.ops.adapt_json_value(token, None)

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        if isinstance(value, str | bytes):
            value = json.loads(value)
        if crypto.is_encrypted(value):
            plain, row = crypto.keyring().decrypt_bound(value, context=context_of(self))
            return _bound(json.loads(plain, cls=self.decoder), row)
        return value

    def get_lookup(self, lookup_name):
        if lookup_name == "isnull":
            return super().get_lookup(lookup_name)
        _refuse(self, lookup_name)

    def get_transform(self, lookup_name):
        # No key lookups (caregiver_context__timezone): the keys are inside the ciphertext.
        return None


class _IndexedExact(Lookup):
    """`=` on a `FindableTextField`: compared in SQL on its keyed-hash column (`index_field`),
    with the value hashed under every configured key (two while a rotation is under way)."""

    lookup_name = "exact"
    prepare_rhs = False

    def as_sql(self, compiler, connection):
        field = self.lhs.output_field
        if hasattr(self.rhs, "as_sql") or not isinstance(self.lhs, Col):
            _refuse(field, f"{self.lookup_name} against an expression")
        index = field.model._meta.get_field(field.index_field)
        lhs, lhs_params = compiler.compile(Col(self.lhs.alias, index))
        values = self.rhs if self.lookup_name == "in" else [self.rhs]
        hashes: list[str] = []
        for value in values:
            if value is not None:
                hashes.extend(index_variants(str(value), context=context_of(field)))
        hashes = list(dict.fromkeys(hashes))
        if not hashes:
            return "1 = 0", []
        marks = ", ".join(["%s"] * len(hashes))
        return f"{lhs} IN ({marks})", [*lhs_params, *hashes]


class _IndexedIn(_IndexedExact):
    lookup_name = "in"


def index_variants(text: str, *, context: str) -> list[str]:
    """The keyed hashes `text` may be stored as in a `LookupHashField` ("" for "")."""
    if text == "":
        return [""]
    return crypto.keyring().keyed_hash_variants(text, purpose=context)


class FindableTextField(EncryptedTextField):
    """Encrypted text bound to its row, like `EncryptedTextField`, that is still found by its
    exact value: a person's name (the admin's search box). The match is made on a keyed hash of
    the text kept in the `index_field` column (a `LookupHashField`), so the text itself can be
    randomised and bound to its row; only equality shows, as a deterministic value would.

    The index is kept in step by every write: `save()` (with `update_fields` naming this field,
    the index is added to them by the model mixin `KeepsLookupIndexes`), and
    `QuerySet.update(name=for_row(...))` through `FindableQuerySet`, which writes the index beside
    it. A model with such a field uses both (memory.conversations.models.Person).
    """

    description = "Text encrypted at rest and bound to its row, found by equality"

    def __init__(self, *args, index_field: str, **kwargs):
        self.index_field = index_field
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        kwargs["index_field"] = self.index_field
        return name, path, args, kwargs

    def get_lookup(self, lookup_name):
        if lookup_name == "exact":
            return _IndexedExact
        if lookup_name == "in":
            return _IndexedIn
        return super().get_lookup(lookup_name)


def _findable_fields(model) -> list[FindableTextField]:
    return [f for f in model._meta.concrete_fields if isinstance(f, FindableTextField)]


class FindableQuerySet(models.QuerySet):
    """`update()` that keeps each `FindableTextField`'s lookup hash in step: updating the text
    without its index would leave the row found under its old value and not under the new one.
    The hash does not depend on the row, so one value serves every row the update touches."""

    def update(self, **kwargs):
        for field in _findable_fields(self.model):
            if field.name not in kwargs or field.index_field in kwargs:
                continue
            value = kwargs[field.name]
            if hasattr(value, "resolve_expression") or hasattr(
                getattr(value, "value", None), "resolve_expression"
            ):
                raise FieldError(
                    f"{self.model.__name__}.{field.name} is found by a keyed hash of its text, "
                    "which an SQL expression cannot give: save the instances instead."
                )
            plaintext = value.value if isinstance(value, _ForRow) else value
            index = self.model._meta.get_field(field.index_field)
            kwargs[field.index_field] = index.hash_of(plaintext)
        return super().update(**kwargs)


class KeepsLookupIndexes(models.Model):
    """A model mixin: `save(update_fields=[...])` naming a `FindableTextField` writes its lookup
    hash too (`LookupHashField.pre_save` computes it only when its column is written)."""

    class Meta:
        abstract = True

    def save(self, *args, update_fields=None, **kwargs):
        if update_fields is not None:
            update_fields = list(update_fields)
            for field in _findable_fields(type(self)):
                if field.name in update_fields and field.index_field not in update_fields:
                    update_fields.append(field.index_field)
        super().save(*args, update_fields=update_fields, **kwargs)


class LookupHashField(models.CharField):
    """The keyed hash (HMAC-SHA256 under the primary key's hash key, memory/core/crypto.py) of
    another field's plaintext (`source`), refreshed on every save: what `FindableTextField`
    matches on. Nothing can be read back from it; `rotate_keys` makes it again under a new key."""

    description = "Keyed hash of another field, for equality lookups"

    def __init__(self, *args, source: str, **kwargs):
        self.source = source
        kwargs.setdefault("max_length", 64)
        kwargs.setdefault("editable", False)
        kwargs.setdefault("blank", True)
        kwargs.setdefault("default", "")
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        kwargs["source"] = self.source
        for key, value in (("max_length", 64), ("editable", False), ("blank", True)):
            if kwargs.get(key) == value:
                del kwargs[key]
        if kwargs.get("default") == "":
            del kwargs["default"]
        return name, path, args, kwargs

    def source_field(self) -> models.Field:
        return self.model._meta.get_field(self.source)

    def hash_of(self, text: str | None) -> str:
        """The stored value for `text` under the primary key."""
        if not text:
            return ""
        return crypto.keyed_hash(str(text), purpose=context_of(self.source_field()))

    def pre_save(self, model_instance, add):
        value = self.hash_of(getattr(model_instance, self.source_field().attname))
        setattr(model_instance, self.attname, value)
        return value


class KeyedDigestField(models.CharField):
    """A keyed hash of a secret that is only ever matched, never shown again (a recovery code):
    `<key id>:<HMAC-SHA256>` (`crypto.keyed_digest`), written by code. Nothing stored holds the
    secret, so `rotate_keys` cannot remake the value under a new key: it counts those still
    under an old one (memory/reencrypt.py), whose secrets stop matching once that key is gone."""

    description = "Keyed hash of a secret, with the id of the key that made it"

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("max_length", 80)
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if kwargs.get("max_length") == 80:
            del kwargs["max_length"]
        return name, path, args, kwargs


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

    Assign the plain fingerprint (content words, space-joined) and saving the instance stores one
    keyed token per word, sorted, under the key of the row's person (or, with no person, of its
    session: `crypto.fingerprint_scope`, from the row's `person_id` and `session_id`). One
    person's equal word sets are equal strings (exact equality in SQL, and `fingerprint=`
    lookups with stored tokens, still work) and Jaccard on the tokens equals Jaccard on the
    words; two people's equal words differ. Reads return `FingerprintTokens`, which are written
    back unchanged. "" stays "" (a message of only common words has nothing to compare). Plain
    words without an instance (`QuerySet.update`, a lookup) name no person: refused.
    """

    description = "Repetition fingerprint as keyed-hash tokens, keyed per person"

    def pre_save(self, model_instance, add):
        value = super().pre_save(model_instance, add)
        if not value or hasattr(value, "as_sql") or isinstance(value, FingerprintTokens):
            return value
        scope = crypto.fingerprint_scope(
            person_id=getattr(model_instance, "person_id", None),
            session_id=getattr(model_instance, "session_id", None),
        )
        return FingerprintTokens(crypto.fingerprint_tokens(str(value), scope=scope))

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if not value or hasattr(value, "as_sql") or isinstance(value, FingerprintTokens):
            return value
        raise FieldError(
            f"{self.model.__name__}.{self.name} is keyed per person: plain words name no "
            "person here. Save the instance, or pass stored tokens (FingerprintTokens)."
        )

    def from_db_value(self, value, expression, connection):
        return None if value is None else FingerprintTokens(value)
