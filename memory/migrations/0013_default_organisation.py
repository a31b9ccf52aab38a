"""Organisations (step 2 of 3): everything written before organisations joins the default one.

Existing API keys keep every scope (they could do everything before); personas are copied into
the default organisation. Memories outside a person's namespace were an agent's own: they now
belong to the default organisation, stored under ("org", "<its id>", ...) (memory/facts/tenancy.py).
"""

from django.db import migrations

DEFAULT = "default"
ALL_SCOPES = ["turns", "memories:read", "memories:write", "export", "erase", "admin"]
SEP = "\x1f"


def forwards(apps, schema_editor):
    Organisation = apps.get_model("memory", "Organisation")
    org, _ = Organisation.objects.get_or_create(
        slug=DEFAULT, defaults={"name": "Default organisation"}
    )
    for model in ("Person", "Session"):
        apps.get_model("memory", model).objects.filter(organisation__isnull=True).update(
            organisation=org
        )
    ApiKey = apps.get_model("memory", "ApiKey")
    ApiKey.objects.filter(organisation__isnull=True).update(organisation=org, scopes=ALL_SCOPES)
    Memory = apps.get_model("memory", "Memory")
    MemoryScope = apps.get_model("memory", "MemoryScope")
    scope = SEP.join(("org", str(org.pk)))
    moved = Memory.objects.exclude(namespace__startswith="memories" + SEP).exclude(scope=scope)
    generation = 0
    for memory in list(moved.only("pk", "namespace", "revision")):
        Memory.objects.filter(pk=memory.pk).update(
            namespace=SEP.join((scope, memory.namespace)), scope=scope
        )
        generation = max(generation, memory.revision)
    MemoryScope.objects.exclude(scope__startswith="memories" + SEP).exclude(scope=scope).delete()
    if generation:
        MemoryScope.objects.update_or_create(
            scope=scope, defaults={"generation": generation, "epoch": 1}
        )
    Persona = apps.get_model("memory", "Persona")
    OrganisationPersona = apps.get_model("memory", "OrganisationPersona")
    for persona in Persona.objects.all():
        OrganisationPersona.objects.get_or_create(
            organisation=org,
            slug=persona.slug,
            defaults={
                "display_name": persona.display_name,
                "memory_policy": persona.memory_policy,
            },
        )


def backwards(apps, schema_editor):
    Persona = apps.get_model("memory", "Persona")
    OrganisationPersona = apps.get_model("memory", "OrganisationPersona")
    for persona in OrganisationPersona.objects.filter(organisation__slug=DEFAULT):
        Persona.objects.update_or_create(
            slug=persona.slug,
            defaults={
                "display_name": persona.display_name,
                "memory_policy": persona.memory_policy,
            },
        )


class Migration(migrations.Migration):
    dependencies = [("memory", "0012_organisations")]

    operations = [migrations.RunPython(forwards, backwards)]
