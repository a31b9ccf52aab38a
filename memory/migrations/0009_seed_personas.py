"""Clara, the dementia-care persona every person starts with, under the dementia-safe policy."""

from django.db import migrations


def seed(apps, schema_editor):
    Persona = apps.get_model("memory", "Persona")
    Persona.objects.get_or_create(
        slug="clara", defaults={"display_name": "Clara", "memory_policy": "dementia_safe"}
    )


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_companions")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
