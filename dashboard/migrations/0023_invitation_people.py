# An invitation covers several care teams (issue 32): the people, beside the one person it held.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0022_audit_weekly_summary_choice"),
        ("memory", "0038_access_audit_admin_reads"),
    ]

    operations = [
        migrations.AddField(
            model_name="invitation",
            name="people",
            field=models.ManyToManyField(
                blank=True,
                db_table="dashboard_invitation_people",
                related_name="+",
                to="memory.person",
            ),
        ),
    ]
