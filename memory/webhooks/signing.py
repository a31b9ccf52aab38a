"""Signing deliveries the Standard Webhooks way (https://www.standardwebhooks.com).

A secret is `whsec_` + the standard base64 (with padding) of random bytes; those bytes are the
HMAC-SHA256 key. Each attempt carries:

- `webhook-id`: the delivery id, the same on every retry (receivers deduplicate on it);
- `webhook-timestamp`: Unix seconds when this attempt was signed;
- `webhook-signature`: `v1,<base64 HMAC of "<id>.<timestamp>.<body>">`, and while a rotated
  secret's predecessor is still valid a second one made with it, space-separated.

Secrets made before Clara followed the standard were `whsec_` + URL-safe text keyed as the whole
string; migration 0040 rewrote each as `whsec_` + base64 of that very string, so its key bytes
(and the legacy signature below) are unchanged for receivers that keep the old string.

The deprecated `X-Clara-*` headers are still sent beside them while
CLARA_WEBHOOK_LEGACY_HEADERS is on (until 2027-05-31: docs/webhooks.md).
"""

import base64
import binascii
import hashlib
import hmac
import secrets

from django.conf import settings

PREFIX = "whsec_"
SECRET_BYTES = 32


def secret_new() -> str:
    """A fresh secret in the standard's form: `whsec_` + base64 of 32 random bytes."""
    return PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def key_of(secret: str) -> bytes:
    """The HMAC key a secret stands for (what the standard's libraries decode it to)."""
    try:
        return base64.b64decode(secret.removeprefix(PREFIX), validate=True)
    except binascii.Error as exc:
        raise ValueError("A webhook secret is not whsec_ + standard base64.") from exc


def signature(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64>`: HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with the secret's bytes."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key_of(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def legacy_signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """Deprecated `X-Clara-Signature`: `sha256=<hex>` of `<timestamp>.<body>`, same key bytes."""
    digest = hmac.new(key_of(secret), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


def headers(
    *,
    message_id: str,
    event: str,
    timestamp: int,
    body: bytes,
    secret: str,
    previous_secret: str | None = None,
) -> dict[str, str]:
    """Every signing header of one attempt; `previous_secret` (still valid) signs too."""
    signatures = [
        signature(secret=s, message_id=message_id, timestamp=timestamp, body=body)
        for s in (secret, previous_secret)
        if s
    ]
    out = {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signatures),
    }
    if settings.CLARA_WEBHOOK_LEGACY_HEADERS:
        out |= {
            "X-Clara-Delivery": message_id,
            "X-Clara-Event": event,
            "X-Clara-Timestamp": str(timestamp),
            # The current secret only: the old format has room for one signature.
            "X-Clara-Signature": legacy_signature(secret=secret, timestamp=timestamp, body=body),
        }
    return out
