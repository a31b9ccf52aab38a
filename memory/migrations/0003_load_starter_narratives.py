"""Load the starter narrative library (memory/data/starter_narratives.json).

Re-runnable: each narrative is created or brought up to date by its id. Reversing deletes exactly
the library's ids, so caregivers' own narratives stay. Narrative usage keeps its rows either way
(it stores the narrative id as text, not as a foreign key).
"""

import json
from pathlib import Path

from django.db import migrations

STARTER_LIBRARY = Path(__file__).resolve().parent.parent / "data" / "starter_narratives.json"
FIELDS = ("title", "category", "target_emotions", "question_types", "theme_tags", "length", "text")


def starter_narratives():
    with STARTER_LIBRARY.open(encoding="utf-8") as fh:
        return json.load(fh)


def load_starter_narratives(apps, schema_editor):
    Narrative = apps.get_model("memory", "Narrative")
    for item in starter_narratives():
        Narrative.objects.update_or_create(
            id=item["id"],
            # Content only: whether a narrative is active is the operators' call, kept on re-runs.
            defaults={field: item[field] for field in FIELDS},
        )


def unload_starter_narratives(apps, schema_editor):
    Narrative = apps.get_model("memory", "Narrative")
    ids = [item["id"] for item in starter_narratives()]
    Narrative.objects.filter(id__in=ids).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0002_narrative_library"),
    ]

    operations = [
        migrations.RunPython(load_starter_narratives, unload_starter_narratives),
    ]
