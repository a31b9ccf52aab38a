"""Webhook secrets in Standard Webhooks' form, keeping every existing receiver working.

Before, a secret was `whsec_` + URL-safe text and the HMAC key was that whole string; the
standard's libraries decode what follows `whsec_` as standard base64, which such a string is not.
Forward: each secret S becomes `whsec_` + base64(S), whose key bytes are S itself, so the
deprecated `X-Clara-Signature` a receiver checks with S is unchanged, and a receiver moving to a
Standard Webhooks library computes the new form from S (docs/webhooks.md) or rotates the secret.
Reverse: back to S (a secret made after this has no old form: it is left as it is).
"""

import base64

from django.db import migrations

# Written out here, not imported: a migration must mean the same thing forever.
PREFIX = "whsec_"


def to_standard_form(apps, schema_editor):
    Webhook = apps.get_model("memory", "Webhook")
    for webhook in Webhook.objects.all():
        webhook.secret = PREFIX + base64.b64encode(webhook.secret.encode()).decode()
        webhook.save(update_fields=["secret"])


def to_legacy_form(apps, schema_editor):
    Webhook = apps.get_model("memory", "Webhook")
    for webhook in Webhook.objects.all():
        old = base64.b64decode(webhook.secret.removeprefix(PREFIX))
        if old.startswith(PREFIX.encode()):
            # Made before: back to the string its receiver holds. One made after has random
            # key bytes the old code cannot use; it keeps its secret (rotate it once back).
            webhook.secret = old.decode()
        webhook.previous_secret, webhook.previous_secret_expires_at = None, None
        webhook.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at"])


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0039_webhook_secret_rotation"),
    ]

    operations = [
        migrations.RunPython(to_standard_form, to_legacy_form),
    ]
