"""Alerts acted on before claims and outcomes existed: "looking into it" was a claim (who and
when stay), "dealt with" was a resolution whose outcome nobody was asked for ("unknown", never
offered to people). Reverse: back to the old words, the claim's or resolution's who and when
back in acted_by / acted_at."""

from django.db import migrations


def forwards(apps, schema_editor):
    Alert = apps.get_model("memory", "Alert")
    for alert in Alert.objects.filter(status="looking_into").only("id", "acted_by", "acted_at"):
        Alert.objects.filter(id=alert.id).update(
            status="claimed", claimed_by_id=alert.acted_by_id, claimed_at=alert.acted_at
        )
    for alert in Alert.objects.filter(status="acknowledged").only("id", "acted_by", "acted_at"):
        Alert.objects.filter(id=alert.id).update(
            status="resolved",
            resolved_by_id=alert.acted_by_id,
            resolved_at=alert.acted_at,
            outcome="unknown",
        )


def backwards(apps, schema_editor):
    Alert = apps.get_model("memory", "Alert")
    for alert in Alert.objects.filter(status="claimed").only("id", "claimed_by", "claimed_at"):
        Alert.objects.filter(id=alert.id).update(
            status="looking_into", acted_by_id=alert.claimed_by_id, acted_at=alert.claimed_at
        )
    for alert in Alert.objects.filter(status="resolved").only("id", "resolved_by", "resolved_at"):
        Alert.objects.filter(id=alert.id).update(
            status="acknowledged", acted_by_id=alert.resolved_by_id, acted_at=alert.resolved_at
        )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0030_alert_claimed_resolved"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
