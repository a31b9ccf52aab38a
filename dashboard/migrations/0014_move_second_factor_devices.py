"""Move django-otp's devices into the encrypted ones (dashboard/second_factor/models.py).

Each authenticator app (otp_totp) is copied with its secret encrypted and bound to its login,
each set of recovery codes (otp_static) with every unused code as its keyed hash; the plaintext
rows are then deleted. Logins keep their devices and codes; a login that had passed the second
factor is asked for a code once more (its session named the old device).

Reverse: authenticator apps are moved back with their secrets in plaintext; recovery codes cannot
be (only their hashes are kept): their devices move back empty, and each login makes new codes.
"""

from django.db import migrations

RECOVERY_PURPOSE = "dashboard_recovery_codes.digest"
COMMON = (
    "user_id",
    "name",
    "confirmed",
    "throttling_failure_timestamp",
    "throttling_failure_count",
    "created_at",
    "last_used_at",
)
TOTP = ("key", "step", "t0", "digits", "tolerance", "drift", "last_t")


def _copy(row, names):
    return {name: getattr(row, name) for name in names}


def move_devices(apps, schema_editor):
    from memory.core import crypto

    OldTOTP = apps.get_model("otp_totp", "TOTPDevice")
    OldStatic = apps.get_model("otp_static", "StaticDevice")
    Authenticator = apps.get_model("dashboard", "AuthenticatorDevice")
    Recovery = apps.get_model("dashboard", "RecoveryDevice")
    Code = apps.get_model("dashboard", "RecoveryCode")
    for old in OldTOTP.objects.all():
        Authenticator.objects.create(**_copy(old, COMMON + TOTP))
    OldTOTP.objects.all().delete()
    for old in OldStatic.objects.all():
        device = Recovery.objects.create(**_copy(old, COMMON))
        Code.objects.bulk_create(
            Code(
                device=device,
                digest=crypto.keyed_digest(token.strip().lower(), purpose=RECOVERY_PURPOSE),
            )
            for token in old.token_set.values_list("token", flat=True)
        )
    OldStatic.objects.all().delete()


def move_devices_back(apps, schema_editor):
    OldTOTP = apps.get_model("otp_totp", "TOTPDevice")
    OldStatic = apps.get_model("otp_static", "StaticDevice")
    Authenticator = apps.get_model("dashboard", "AuthenticatorDevice")
    Recovery = apps.get_model("dashboard", "RecoveryDevice")
    for device in Authenticator.objects.all():
        OldTOTP.objects.create(**_copy(device, COMMON + TOTP))
    Authenticator.objects.all().delete()
    for device in Recovery.objects.all():
        OldStatic.objects.create(**_copy(device, COMMON))
    Recovery.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0013_second_factor_secrets_encrypted"),
        ("otp_totp", "0003_add_timestamps"),
        ("otp_static", "0003_add_timestamps"),
    ]

    operations = [
        migrations.RunPython(move_devices, move_devices_back),
    ]
