"""Sessions say which persona the person talked with, so each persona keeps its own stream.

Sessions from before are given their person's persona today (the only record there is of it);
anonymous ones Clara's."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def persona_of_their_person(apps, schema_editor):
    Session = apps.get_model("memory", "Session")
    Person = apps.get_model("memory", "Person")
    Session.objects.filter(person__isnull=False).update(
        persona=Subquery(Person.objects.filter(id=OuterRef("person_id")).values("persona")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0036_access_audit_admin_changes"),
    ]

    operations = [
        migrations.AddField(
            model_name="session",
            name="persona",
            field=models.CharField(default="clara", max_length=32),
        ),
        migrations.RunPython(persona_of_their_person, migrations.RunPython.noop),
    ]
