"""Timeline steps written before they named people by their names said the login ("alice"):
those whose login still exists say its full name now (when it has one). Reverse: nothing to do
(a name reads as well as a login)."""

from django.db import migrations


def name_people(apps, schema_editor):
    AlertStep = apps.get_model("dashboard", "AlertStep")
    User = apps.get_model("auth", "User")
    names = {}
    for user in User.objects.filter(
        id__in=AlertStep.objects.exclude(user=None).values("user_id")
    ).only("id", "username", "first_name", "last_name"):
        full = f"{user.first_name} {user.last_name}".strip()
        if full:
            names[user.id] = (user.username, full)
    for user_id, (login, full) in names.items():
        AlertStep.objects.filter(user_id=user_id, who=login).update(who=full[:300])


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0015_alert_claims_reminders_and_names"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunPython(name_people, migrations.RunPython.noop, elidable=True),
    ]
