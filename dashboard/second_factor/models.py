"""The second factor's own secrets, kept so that a copy of the database does not give them away.

django-otp's TOTP device stores its secret (`key`, hex) and its static device stores recovery
codes (`token`) as plain text: anyone holding a copy of the database (a backup, a read-only SQL
login) could compute every admin's codes. The two devices here are django-otp devices all the
same (`django_otp.models.Device`: `match_token`, `user_has_device`, `django_otp.login` and the
session's persistent id find them like any other) and verify with django-otp's own code; only
what they keep differs:

- `AuthenticatorDevice.key` is an `EncryptedTextField` (AES-256-GCM, memory/core/crypto.py), bound to
  its table, column and login (a secret copied onto another login's device does not open);
  `AuthenticatorDevice.verify_token` is django-otp's, unchanged (drift, replay guard, throttling);
- a recovery code is only ever matched, never shown again after it is issued, so each is kept as
  a keyed hash (HMAC-SHA256 under the key derived from CLARA_ENCRYPTION_KEYS): nothing stored
  opens it, and a guess cannot be checked offline without the key. During a key rotation a code
  is matched under every configured key; `rotate_keys` cannot remake the hashes (it has no
  codes): it counts those made under an old key, whose logins make new codes before it goes.

django-otp's own plugins stay installed (their tables are where migration 0013 moves existing
devices from, and they are empty afterwards); their admin pages are replaced by this app's.
"""

from django.conf import settings
from django.db import models
from django_otp.models import Device, ThrottlingMixin, TimestampMixin
from django_otp.plugins.otp_totp import models as otp_totp
from django_otp.util import random_hex

from memory.core import crypto
from memory.core.fields import EncryptedTextField, KeyedDigestField

# What a recovery code's hash is bound to: its purpose, so it matches no other keyed hash.
RECOVERY_PURPOSE = "dashboard_recovery_codes.digest"


def default_key() -> str:
    """A new TOTP secret: 20 random bytes, hex (django-otp's own default)."""
    return random_hex(20)


class AuthenticatorDevice(TimestampMixin, ThrottlingMixin, Device):
    """An authenticator app: django-otp's TOTP device with its secret encrypted at rest."""

    key = EncryptedTextField(
        default=default_key,
        validators=[otp_totp.key_validator],
        help_text="A hex-encoded secret key of up to 40 bytes (encrypted at rest).",
    )
    step = models.PositiveSmallIntegerField(default=30)
    t0 = models.BigIntegerField(default=0)
    digits = models.PositiveSmallIntegerField(choices=[(6, 6), (8, 8)], default=6)
    tolerance = models.PositiveSmallIntegerField(default=1)
    drift = models.SmallIntegerField(default=0)
    last_t = models.BigIntegerField(default=-1)

    # django-otp's own TOTP logic, on this model's fields (the same names as its model's).
    bin_key = otp_totp.TOTPDevice.bin_key
    verify_token = otp_totp.TOTPDevice.verify_token
    config_url = otp_totp.TOTPDevice.config_url
    _read_str_from_settings = otp_totp.TOTPDevice._read_str_from_settings

    class Meta(Device.Meta):
        db_table = "dashboard_totp_devices"
        verbose_name = "authenticator app"

    def get_throttle_factor(self):
        return getattr(settings, "OTP_TOTP_THROTTLE_FACTOR", 1)


def recovery_digests(code: str) -> list[str]:
    """What `code` is stored as, under every configured key (the current key's first)."""
    return crypto.keyring().keyed_digest_variants(code.strip().lower(), purpose=RECOVERY_PURPOSE)


class RecoveryDevice(TimestampMixin, ThrottlingMixin, Device):
    """A login's one-time recovery codes (django-otp's static device, with hashed codes)."""

    class Meta(Device.Meta):
        db_table = "dashboard_recovery_devices"
        verbose_name = "recovery codes"
        verbose_name_plural = "recovery codes"

    def get_throttle_factor(self):
        return getattr(settings, "OTP_STATIC_THROTTLE_FACTOR", 1)

    def verify_token(self, token) -> bool:
        """django-otp's static verification, matching the code's keyed hash: a code works once."""
        allowed, _ = self.verify_is_allowed()
        if not allowed:
            return False
        match = self.codes.filter(digest__in=recovery_digests(str(token))).first()
        if match is None:
            self.throttle_increment()
            return False
        match.delete()
        self.throttle_reset(commit=False)
        self.set_last_used_timestamp(commit=False)
        self.save()
        return True


class RecoveryCode(models.Model):
    """One unused recovery code, as its keyed hash (`<key id>:<64 hex characters>`)."""

    device = models.ForeignKey(RecoveryDevice, on_delete=models.CASCADE, related_name="codes")
    digest = KeyedDigestField()

    class Meta:
        db_table = "dashboard_recovery_codes"
        indexes = [
            # A code typed at login: WHERE device_id=? AND digest IN (...).
            models.Index(fields=["device", "digest"], name="idx_recovery_codes_digest"),
        ]

    def __str__(self) -> str:
        return f"recovery code of {self.device}"
