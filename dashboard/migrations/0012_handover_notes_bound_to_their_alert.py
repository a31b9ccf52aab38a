"""Handover notes bound to their alert (an alert step's id is assigned by the database, so its
note names the alert it belongs to: memory/core/fields.py `OWNER_ATTNAMES`). Notes written
before were bound to their column only: rewritten here (the `rotate_keys` pass over alert
steps). Reverse: nothing to do (bound notes read the same)."""

from django.db import migrations


def bind_notes(apps, schema_editor):
    from memory import reencrypt

    reencrypt.reencrypt_all([apps.get_model("dashboard", "AlertStep")])


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0011_audit_actions_of_notes_and_accounts"),
    ]

    operations = [
        migrations.RunPython(bind_notes, migrations.RunPython.noop, elidable=True),
    ]
