"""Organisations on the dashboard (data): every login in a care team becomes a member of that
person's organisation, and every audit row names the organisation of its person.

Migration 0013 of memory put everyone into the default organisation (the demo's), so existing
caregivers become members of it. No one becomes an organisation admin: an operator chooses
who reads the organisation's audit (in the admin).
"""

from django.db import migrations


def forwards(apps, schema_editor):
    CareTeamMembership = apps.get_model("dashboard", "CareTeamMembership")
    AuditEvent = apps.get_model("dashboard", "AuditEvent")
    OrganisationMembership = apps.get_model("memory", "OrganisationMembership")
    Person = apps.get_model("memory", "Person")

    pairs = set(
        CareTeamMembership.objects.values_list("user_id", "person__organisation_id").distinct()
    )
    existing = set(OrganisationMembership.objects.values_list("user_id", "organisation_id"))
    OrganisationMembership.objects.bulk_create(
        OrganisationMembership(user_id=user_id, organisation_id=organisation_id)
        for user_id, organisation_id in sorted(pairs - existing, key=str)
    )
    for organisation_id in set(Person.objects.values_list("organisation_id", flat=True)):
        AuditEvent.objects.filter(
            organisation__isnull=True,
            person__in=Person.objects.filter(organisation_id=organisation_id),
        ).update(organisation_id=organisation_id)


class Migration(migrations.Migration):
    dependencies = [("dashboard", "0003_audit_organisation_and_forget")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
