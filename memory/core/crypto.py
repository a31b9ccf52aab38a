"""Encryption at rest for what identifies or describes a person, and keyed hashes for matching.

Keys come from the environment only (`CLARA_ENCRYPTION_KEYS`, read by clara/settings.py), never
from the database, so a copy of the database (a backup, a stolen disk, a read-only SQL account)
holds ciphertext and nothing that opens it. The setting is a list: the first key encrypts, every
key decrypts, so keys rotate without downtime (add the new key first, run
`manage.py rotate_keys`, then drop the old one).

Why AES-256-GCM with a key id, not Fernet/MultiFernet (both are in `cryptography`):
- the key id in each value sends decryption straight to its key; MultiFernet tries the keys in
  turn, paying a failed HMAC per older key on every read while a rotation is under way;
- `rotate_keys` can tell which rows still use an old key by reading the id, without decrypting;
- 28 bytes of overhead (nonce and tag) against Fernet's 57-73, and no embedded creation time
  (Fernet tokens carry one in clear); AES-256 rather than Fernet's AES-128.
The price is the random 96-bit nonce: one key should encrypt fewer than 2^32 values (about
a billion exchanges); rotate long before that.

A value is `enc:v1:<key id>:<base64url(nonce | ciphertext | tag)>` (in a binary column, the same
header followed by the raw nonce | ciphertext | tag, `encrypt_bytes`). The prefix makes ciphertext
recognisable, so rows written before encryption existed still read (as plaintext) until the data
migration or `rotate_keys` reaches them; anything with the prefix that does not decrypt raises
`DecryptionError`: a wrong or missing key fails loudly, never as silent garbage.

Matching without plaintext: `fingerprint_tokens` turns each word of a repetition fingerprint
into a keyed hash (HMAC-SHA256) under a key of its own for each person (`fingerprint_scope`:
derived from each encryption key's hash key and the person's id, or an anonymous session's id),
so one person's equal words give equal tokens. Jaccard on the token sets equals Jaccard on the
word sets and exact equality in SQL still works, but the words themselves are not in the
database, and the same word of two people gives two unrelated tokens: counting tokens across
people (frequency analysis) or matching one person's question with another's tells nothing.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.core.exceptions import ImproperlyConfigured

# Three kinds of value, each recognisable by its prefix (all seven characters):
# - v1: written before values were bound to their place; the associated data is the header only.
#   Still read; `rotate_keys` and migration 0017 rewrite them as v2.
# - v2: AES-256-GCM with associated data header | NUL | context, where the context names the
#   table and column the value belongs in ("memories.content"): a value copied into another
#   column or table no longer decrypts.
# - r1: as v2, and bound to one row too: `enc:r1:<key id>:<row>:`, the row (a primary key, or
#   for rows whose key the database assigns, the person they belong to) inside the header and
#   so inside the associated data. Readers compare it with the row they read
#   (memory/core/fields.py, memory/conversations/sql.py): a value moved between rows is refused.
# - d1: deterministic AES-SIV (RFC 5297) with the same context, for the few values that must be
#   both matched in SQL (equality, unique constraints) and shown: memory keys. Equal plaintexts in
#   one column give equal values; nothing else about the plaintext shows. The synthetic IV is a
#   keyed PRF of the plaintext (the keyed hash), and the rest is the encryption.
PREFIX = "enc:v1:"
BOUND_PREFIX = "enc:v2:"
ROW_PREFIX = "enc:r1:"
LOOKUP_PREFIX = "enc:d1:"
PREFIXES = (PREFIX, BOUND_PREFIX, ROW_PREFIX, LOOKUP_PREFIX)
_PREFIX_CHARS = len(PREFIX)
KEY_BYTES = 32
# Opened text values kept per process (Keyring._open): a few sessions' windows, ~1 MB.
OPENED_CACHE_SIZE = 4096
NONCE_BYTES = 12
KID_CHARS = 8
# Fingerprint tokens: 80 bits of the HMAC written as 20 letters a-p (hex digits moved into the
# alphabet): no two words of a language collide, and a token looks like a word to code that
# splits, trims or lower-cases fingerprints (no digits, no spaces, no upper case).
TOKEN_BYTES = 10
_HEX_TO_LETTERS = str.maketrans("0123456789abcdef", "abcdefghijklmnop")
# Fingerprint keys kept per process (one per person or session seen lately, a few hundred bytes).
SCOPE_CACHE_SIZE = 4096


class DecryptionError(ValueError):
    """A value looks encrypted but no configured key opens it (wrong key, or tampered)."""


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def generate_key() -> str:
    """A new random key in the form CLARA_ENCRYPTION_KEYS takes (32 bytes, base64url)."""
    return _b64encode(os.urandom(KEY_BYTES))


def parse_key(text: str) -> bytes:
    """The 32 key bytes of one entry of CLARA_ENCRYPTION_KEYS; ImproperlyConfigured if malformed."""
    try:
        raw = _b64decode(text.strip())
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != KEY_BYTES:
        # Never echo the value: it may be a real key with a typo.
        raise ImproperlyConfigured(
            "Each CLARA_ENCRYPTION_KEYS entry must be 32 random bytes in base64url "
            "(python -c 'from memory.core.crypto import generate_key; print(generate_key())')."
        )
    return raw


# The SECRET_KEY settings fall back on with DEBUG on (`make run`): public, in this repository.
DEVELOPMENT_SECRET_KEY = "django-insecure-clara-development-only"


def development_key(secret_key: str) -> str:
    """A key derived from SECRET_KEY, for DEBUG only (settings refuse it in production).

    Stable across restarts of `make run` with the same SECRET_KEY; anyone who knows
    SECRET_KEY can derive it, which is why production must set CLARA_ENCRYPTION_KEYS.
    """
    digest = hmac.new(
        secret_key.encode(), b"clara-memory development encryption key", hashlib.sha256
    ).digest()
    return _b64encode(digest)


def _derive(master: bytes, purpose: bytes, length: int = 32) -> bytes:
    # HKDF separates the cipher key, the hash key and the key id: none reveals another.
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=purpose).derive(master)


def _key_id(master: bytes) -> str:
    return _derive(master, b"clara-memory key id v1", 4).hex()


def development_key_ids(secret_key: str) -> frozenset[str]:
    """Ids of the keys DEBUG derives when CLARA_ENCRYPTION_KEYS is unset: from the public
    development SECRET_KEY (`make run`), and from `secret_key`. Anyone can derive the first."""
    return frozenset(
        _key_id(parse_key(development_key(secret)))
        for secret in {DEVELOPMENT_SECRET_KEY, secret_key}
    )


def refuse_development_keys(raw_keys: Sequence[str], *, secret_key: str) -> None:
    """ImproperlyConfigured if CLARA_ENCRYPTION_KEYS lists a development key (for DEBUG off)."""
    development = development_key_ids(secret_key)
    if any(_key_id(parse_key(text)) in development for text in raw_keys):
        raise ImproperlyConfigured(
            "CLARA_ENCRYPTION_KEYS lists a development key (the one DEBUG derives from "
            "SECRET_KEY), which protects nothing with DEBUG off. Set CLARA_ENCRYPTION_KEYS to "
            "keys of your own (python -c 'from memory.crypto import generate_key; "
            "print(generate_key())')."
        )


@dataclass(frozen=True)
class _Key:
    kid: str
    aead: AESGCM
    hash_key: bytes
    # HMAC state after the fingerprint domain prefix: each scope's key is made from a copy.
    fingerprint_mac: hmac.HMAC
    header: str  # PREFIX + kid + ":", the associated data of v1 values
    bound_header: str  # BOUND_PREFIX + kid + ":", then the context, the associated data of v2
    lookup_header: str  # LOOKUP_PREFIX + kid + ":"
    siv: AESSIV


class Keyring:
    """The configured keys: the first encrypts, all decrypt, each has a keyed-hash twin."""

    def __init__(self, raw_keys: Sequence[str]) -> None:
        if not raw_keys:
            raise ImproperlyConfigured("CLARA_ENCRYPTION_KEYS is empty.")
        keys = []
        for text in raw_keys:
            master = parse_key(text)
            kid = _key_id(master)
            hash_key = _derive(master, b"clara-memory keyed hash v1")
            keys.append(
                _Key(
                    kid=kid,
                    aead=AESGCM(_derive(master, b"clara-memory aes-256-gcm v1")),
                    hash_key=hash_key,
                    fingerprint_mac=hmac.new(hash_key, b"fingerprint\x00", hashlib.sha256),
                    header=f"{PREFIX}{kid}:",
                    bound_header=f"{BOUND_PREFIX}{kid}:",
                    lookup_header=f"{LOOKUP_PREFIX}{kid}:",
                    siv=AESSIV(_derive(master, b"clara-memory aes-siv v1", 64)),
                )
            )
        self.keys: tuple[_Key, ...] = tuple(keys)
        self.by_kid = {key.kid: key for key in keys}
        if len(self.by_kid) != len(keys):
            # (Or two keys share a 32-bit id, about one chance in four billion: make another.)
            raise ImproperlyConfigured("CLARA_ENCRYPTION_KEYS lists the same key twice.")
        self.primary = keys[0]
        # Opened values, by (value, context): each turn reads the same window of its session's
        # messages again, and a stored value never changes (a new value has a new nonce), so
        # each is opened once per process. Failures are not cached (they raise every time); the
        # row check stays with the caller; a new keyring (keys changed) starts empty.
        self._open = functools.lru_cache(maxsize=OPENED_CACHE_SIZE)(self._decrypt_bound)
        # Each scope's fingerprint key, by (key id, scope): made once per person per process.
        self._scope_macs: dict[tuple[str, str], hmac.HMAC] = {}

    # --- Encryption --------------------------------------------------------------------------

    def _key_for(self, value: str) -> _Key:
        kid = value[_PREFIX_CHARS : _PREFIX_CHARS + KID_CHARS]
        key = self.by_kid.get(kid)
        if key is None:
            raise DecryptionError(
                f"Encrypted with key {kid}, which is not in CLARA_ENCRYPTION_KEYS."
                + _development_note(kid)
            )
        return key

    def _header(self, key: _Key, row: str | None) -> str:
        if row is None:
            return key.bound_header
        if ":" in row:
            raise ValueError("A row id cannot contain ':'.")
        return f"{ROW_PREFIX}{key.kid}:{row}:"

    def encrypt(self, text: str, *, context: str = "", row: str | None = None) -> str:
        """A value of `text` bound to `context` ("table.column"; "" for values kept outside the
        database's columns, such as the recovery log) and, given `row`, to that row: an r1
        value, whose header names the row (authenticated: it cannot be edited)."""
        key = self.primary
        header = self._header(key, row)
        nonce = os.urandom(NONCE_BYTES)
        sealed = key.aead.encrypt(nonce, text.encode("utf-8"), _bound_aad(header, context))
        return header + _b64encode(nonce + sealed)

    def decrypt(self, value: str, *, context: str = "") -> str:
        """Plaintext of `value`; a value without a prefix is returned as it is (legacy row)."""
        return self.decrypt_bound(value, context=context)[0]

    def decrypt_bound(self, value: str, *, context: str = "") -> tuple[str, str | None]:
        """(plaintext, the row it is bound to or None).

        A v2, r1 or d1 value only opens with the context it was written for: one moved to
        another column or table raises DecryptionError, as a wrong key does. The row comes from
        the value's authenticated header: the caller compares it with the row it read."""
        if value[:_PREFIX_CHARS] not in PREFIXES:
            return value, None
        return self._open(value, context)

    def _decrypt_bound(self, value: str, context: str) -> tuple[str, str | None]:
        prefix = value[:_PREFIX_CHARS]
        key = self._key_for(value)
        row = None
        try:
            if prefix == LOOKUP_PREFIX:
                blob = _b64decode(value[len(key.lookup_header) :])
                plain = key.siv.decrypt(blob, [key.lookup_header.encode(), context.encode()])
            else:
                if prefix == PREFIX:
                    header = key.header
                    aad = header.encode("ascii")
                else:
                    header = key.bound_header
                    if prefix == ROW_PREFIX:
                        row, _, _ = value[len(header) :].partition(":")
                        header = f"{ROW_PREFIX}{key.kid}:{row}:"
                    aad = _bound_aad(header, context)
                blob = _b64decode(value[len(header) :])
                plain = key.aead.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], aad)
        except (InvalidTag, binascii.Error, ValueError) as exc:
            raise DecryptionError(f"A value under key {key.kid} does not decrypt.") from exc
        return plain.decode("utf-8"), row

    def is_current(self, value: str | None, *, row: str | None = None) -> bool:
        """Whether a stored value needs no rewrite: NULL, or under the primary key and bound as
        asked (to `row`, or to its column only)."""
        return value is None or value.startswith(self._header(self.primary, row))

    # --- Deterministic values (matched in SQL, and shown) ------------------------------------

    def seal_lookup(self, text: str, *, context: str, key: _Key | None = None) -> str:
        """The d1 value of `text` in `context`: the same text always gives the same value."""
        key = key or self.primary
        sealed = key.siv.encrypt(
            text.encode("utf-8"), [key.lookup_header.encode(), context.encode()]
        )
        return key.lookup_header + _b64encode(sealed)

    def lookup_variants(self, text: str, *, context: str) -> list[str]:
        """`text` sealed under every configured key, the primary's first: rows written before a
        rotation keep matching until `rotate_keys` rewrites them."""
        return [self.seal_lookup(text, context=context, key=key) for key in self.keys]

    def is_current_lookup(self, value: str | None) -> bool:
        return value is None or value == "" or value.startswith(self.primary.lookup_header)

    # --- Bytes (a BLOB column: the same envelope, without base64) ----------------------------

    def encrypt_bytes(self, data: bytes, *, context: str = "", row: str | None = None) -> bytes:
        """The same header as `encrypt`, then nonce | ciphertext | tag, raw: for binary columns."""
        key = self.primary
        header = self._header(key, row)
        nonce = os.urandom(NONCE_BYTES)
        sealed = key.aead.encrypt(nonce, bytes(data), _bound_aad(header, context))
        return header.encode("ascii") + nonce + sealed

    def decrypt_bytes(self, value: bytes, *, context: str = "") -> bytes:
        """Plaintext of an `encrypt_bytes` value; a value without the prefix is returned as it is
        (written before encryption, as `decrypt` does for text)."""
        return self.decrypt_bytes_bound(value, context=context)[0]

    def decrypt_bytes_bound(self, value: bytes, *, context: str = "") -> tuple[bytes, str | None]:
        """(plaintext, the row it is bound to or None), as `decrypt_bound` for text."""
        value = bytes(value)
        prefix = value[:_PREFIX_CHARS].decode("ascii", "replace")
        if prefix not in (PREFIX, BOUND_PREFIX, ROW_PREFIX):
            return value, None
        key = self._key_for(value[: _PREFIX_CHARS + KID_CHARS].decode("ascii", "replace"))
        row = None
        if prefix == PREFIX:
            header = key.header
            aad = header.encode("ascii")
        else:
            header = key.bound_header
            if prefix == ROW_PREFIX:
                end = value.find(b":", len(header))
                row = value[len(header) : end].decode("ascii", "replace") if end > 0 else ""
                header = f"{ROW_PREFIX}{key.kid}:{row}:"
            aad = _bound_aad(header, context)
        # A view, not a copy: a search snapshot is one value of ~150 MB (memory/facts/snapshots.py).
        blob = memoryview(value)[len(header.encode("ascii")) :]
        try:
            return key.aead.decrypt(bytes(blob[:NONCE_BYTES]), blob[NONCE_BYTES:], aad), row
        except (InvalidTag, ValueError) as exc:
            raise DecryptionError(f"A value under key {key.kid} does not decrypt.") from exc

    def is_current_bytes(self, value: bytes | None, *, row: str | None = None) -> bool:
        """Whether a stored binary value needs no rewrite (as `is_current`)."""
        return value is None or bytes(value).startswith(
            self._header(self.primary, row).encode("ascii")
        )

    # --- Keyed hashes ------------------------------------------------------------------------

    def keyed_hash(self, value: str, *, purpose: str, key: _Key | None = None) -> str:
        """HMAC-SHA256 of `value` (hex), domain-separated by `purpose`, under the primary key."""
        key = key or self.primary
        message = purpose.encode() + b"\x00" + value.encode("utf-8")
        return hmac.new(key.hash_key, message, hashlib.sha256).hexdigest()

    def keyed_digest(self, value: str, *, purpose: str, key: _Key | None = None) -> str:
        """`<key id>:<keyed_hash>`: for a secret that is only ever matched and cannot be hashed
        again later (nothing stored holds it), so a rotation can tell which key made it."""
        key = key or self.primary
        return f"{key.kid}:{self.keyed_hash(value, purpose=purpose, key=key)}"

    def keyed_digest_variants(self, value: str, *, purpose: str) -> list[str]:
        """`keyed_digest` under every configured key, the primary's first."""
        return [self.keyed_digest(value, purpose=purpose, key=key) for key in self.keys]

    def is_current_digest(self, value: str | None) -> bool:
        return not value or value.startswith(f"{self.primary.kid}:")

    def keyed_hash_variants(self, value: str, *, purpose: str) -> list[str]:
        """`keyed_hash` under every configured key, the primary's first (a rotation under way)."""
        return [self.keyed_hash(value, purpose=purpose, key=key) for key in self.keys]

    def _fingerprint_mac(self, key: _Key, scope: str) -> hmac.HMAC:
        """The HMAC state keyed for `scope`'s fingerprints under `key`: copied per word (cheaper
        than a new HMAC). Kept per process for the people seen lately (`_scope_macs`)."""
        found = self._scope_macs.get((key.kid, scope))
        if found is None:
            if not scope:
                raise ValueError("A fingerprint is keyed for a person or a session: no scope.")
            # HMAC(hash key, "fingerprint" NUL "scope" NUL scope): never equal to a word's
            # token made directly under the hash key (the single key of the code before).
            derive = key.fingerprint_mac.copy()
            derive.update(b"scope\x00" + scope.encode("utf-8"))
            found = hmac.new(derive.digest(), b"", hashlib.sha256)
            if len(self._scope_macs) >= SCOPE_CACHE_SIZE:
                self._scope_macs.clear()
            self._scope_macs[(key.kid, scope)] = found
        return found

    def fingerprint_tokens(self, words: str, *, scope: str, key: _Key | None = None) -> str:
        """A fingerprint's words as keyed tokens under `scope`'s key (`fingerprint_scope`),
        sorted and space-joined ("" stays "")."""
        key = key or self.primary
        if not words:
            return ""
        base = self._fingerprint_mac(key, scope)
        tokens = set()
        for word in words.split():
            mac = base.copy()
            mac.update(word.encode("utf-8"))
            tokens.add(mac.digest()[:TOKEN_BYTES].hex().translate(_HEX_TO_LETTERS))
        return " ".join(sorted(tokens))

    def fingerprint_variants(self, words: str, *, scope: str) -> list[str]:
        """The fingerprint under every configured key, the primary's first.

        Rows written before a rotation keep their old tokens until `rotate_keys` rewrites them;
        comparing against every variant keeps repetition detection whole meanwhile.
        """
        return [self.fingerprint_tokens(words, scope=scope, key=key) for key in self.keys]


def _bound_aad(header: str, context: str) -> bytes:
    return header.encode("ascii") + b"\x00" + context.encode("utf-8")


def _development_note(kid: str) -> str:
    from django.conf import settings

    if kid not in development_key_ids(settings.SECRET_KEY):
        return ""
    return (
        " It is a development key: this database was written with DEBUG on and no "
        f"CLARA_ENCRYPTION_KEYS (e.g. by `make run`). {DEVELOPMENT_DATA_HINT}"
    )


_keyring: Keyring | None = None


def keyring() -> Keyring:
    """The keyring built from settings.CLARA_ENCRYPTION_KEYS (cached; reset on setting change)."""
    global _keyring
    if _keyring is None:
        from django.conf import settings

        _keyring = Keyring(settings.CLARA_ENCRYPTION_KEYS)
    return _keyring


def reset() -> None:
    """Forget the cached keyring (tests change CLARA_ENCRYPTION_KEYS with override_settings)."""
    global _keyring
    _keyring = None


def is_encrypted(value: object) -> bool:
    return isinstance(value, str) and value[:_PREFIX_CHARS] in PREFIXES


def encrypt(text: str, *, context: str = "", row: str | None = None) -> str:
    return keyring().encrypt(text, context=context, row=row)


def decrypt(value: str, *, context: str = "") -> str:
    return keyring().decrypt(value, context=context)


def encrypt_optional(text: str | None, *, context: str = "", row: str | None = None) -> str | None:
    return None if text is None else keyring().encrypt(text, context=context, row=row)


def decrypt_optional(value: str | None, *, context: str = "", row: str | None = None) -> str | None:
    """Plaintext of a stored value; given `row`, a value bound to another row is refused."""
    if value is None:
        return None
    plain, bound = keyring().decrypt_bound(value, context=context)
    check_row(bound, row, context=context)
    return plain


def check_row(bound: str | None, expected: str | None, *, context: str) -> None:
    """DecryptionError if a value bound to a row sits in another row (it was moved)."""
    if bound is not None and expected is not None and bound != expected:
        raise DecryptionError(f"A value of {context} is bound to another row: it was moved.")


def is_encrypted_bytes(value: object) -> bool:
    return isinstance(value, bytes | bytearray | memoryview) and bytes(value)[:_PREFIX_CHARS] in (
        PREFIX.encode("ascii"),
        BOUND_PREFIX.encode("ascii"),
        ROW_PREFIX.encode("ascii"),
    )


def encrypt_bytes(data: bytes, *, context: str = "", row: str | None = None) -> bytes:
    return keyring().encrypt_bytes(data, context=context, row=row)


def decrypt_bytes(value: bytes, *, context: str = "") -> bytes:
    return keyring().decrypt_bytes(value, context=context)


def seal_lookup(text: str, *, context: str) -> str:
    return keyring().seal_lookup(text, context=context)


def lookup_variants(text: str, *, context: str) -> list[str]:
    return keyring().lookup_variants(text, context=context)


def keyed_hash(value: str, *, purpose: str) -> str:
    return keyring().keyed_hash(value, purpose=purpose)


def keyed_digest(value: str, *, purpose: str) -> str:
    return keyring().keyed_digest(value, purpose=purpose)


def fingerprint_scope(*, person_id, session_id) -> str:
    """Whose key a repetition fingerprint is made with: its person's, or, for an anonymous
    session (no person yet), that session's; linking the session to a person re-keys its rows.
    Ids in any form they are read in (UUID, text with or without dashes)."""
    if person_id is not None:
        return f"person:{_id_text(person_id)}"
    if session_id is None:
        raise ValueError("A fingerprint belongs to a person or a session.")
    return f"session:{_id_text(session_id)}"


def _id_text(value) -> str:
    if isinstance(value, uuid.UUID):
        return str(value)
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        return str(value)


def fingerprint_tokens(words: str, *, scope: str) -> str:
    return keyring().fingerprint_tokens(words, scope=scope)


def fingerprint_variants(words: str, *, scope: str) -> list[str]:
    return keyring().fingerprint_variants(words, scope=scope)


def _on_setting_changed(*, setting: str, **kwargs) -> None:
    if setting in ("CLARA_ENCRYPTION_KEYS", "SECRET_KEY"):
        reset()


def _connect_signals() -> None:
    from django.core.signals import setting_changed

    setting_changed.connect(_on_setting_changed, dispatch_uid="memory.core.crypto.reset")


# How the development-data check (memory/checks.py) tells what it found, and what to do about it.
DEVELOPMENT_DATA_HINT = (
    "Set DATABASE_URL to a new database, or re-encrypt this one under a key of your own first: "
    "with DEBUG=1, the SECRET_KEY it was written with and CLARA_ENCRYPTION_KEYS=<your key>,"
    "<development key> (memory.core.crypto.development_key(SECRET_KEY)), run `manage.py rotate_keys`."
)


_connect_signals()
