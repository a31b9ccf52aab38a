# Each invitation's one person becomes the first of its people (data only).

from django.db import migrations


def copy_person(apps, schema_editor):
    Invitation = apps.get_model("dashboard", "Invitation")
    for invitation in Invitation.objects.exclude(person=None).only("id", "person_id"):
        invitation.people.add(invitation.person_id)


def copy_back(apps, schema_editor):
    Invitation = apps.get_model("dashboard", "Invitation")
    for invitation in Invitation.objects.all():
        first = invitation.people.order_by("created_at").first()
        if first is not None:
            Invitation.objects.filter(pk=invitation.pk).update(person=first)


class Migration(migrations.Migration):
    dependencies = [("dashboard", "0023_invitation_people")]

    operations = [migrations.RunPython(copy_person, copy_back)]
