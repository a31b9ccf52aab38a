"""The admin's history (django_admin_log) named each row it logged by its str(): a person's name,
a story's title, in plaintext. Rows of the models that hold a person's data are now logged by
kind and id (memory.admin.base.OrganisationScopedAdmin._logged); this renames the rows logged
before in the same way. The list of models is frozen here as it was when this was written."""

from django.db import migrations

# (app label, model name, verbose name) of the admin pages that hold a person's data.
PERSON_MODELS = [
    ("memory", "narrative", "narrative"),
    ("memory", "checkin", "check in"),
    ("memory", "person", "person"),
    ("memory", "session", "session"),
    ("memory", "chatmessage", "chat message"),
    ("memory", "detectedemotion", "detected emotion"),
    ("memory", "repetitionrecord", "repetition record"),
    ("memory", "narrativeusage", "narrative usage"),
    ("memory", "commitment", "commitment"),
    ("memory", "rollingsummary", "rolling summary"),
    ("memory", "summaryspine", "summary spine"),
    ("memory", "persontrend", "person trend"),
    ("memory", "alert", "alert"),
    ("memory", "memory", "memory"),
    ("memory", "accessevent", "access event"),
    ("dashboard", "careteammembership", "care team membership"),
    ("dashboard", "auditevent", "audit event"),
]


def rename(apps, schema_editor):
    LogEntry = apps.get_model("admin", "LogEntry")
    ContentType = apps.get_model("contenttypes", "ContentType")
    for app_label, model, verbose_name in PERSON_MODELS:
        kind = ContentType.objects.filter(app_label=app_label, model=model).first()
        if kind is None:
            continue
        for entry in LogEntry.objects.filter(content_type_id=kind.pk).only("id", "object_id"):
            entry.object_repr = f"{verbose_name} {entry.object_id}"[:200]
            entry.save(update_fields=["object_repr"])


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0044_person_approved_texts"),
        ("admin", "0003_logentry_add_action_flag_choices"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(rename, migrations.RunPython.noop)]
