# The one person of an invitation is now its people (0023 copied it).

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("dashboard", "0024_invitation_people_copy")]

    operations = [migrations.RemoveField(model_name="invitation", name="person")]
