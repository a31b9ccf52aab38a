"""Organisations (step 3 of 3): every person, session and key belongs to one; personas per
organisation replace the global table."""

import django.db.models.deletion
from django.db import migrations, models

import memory.conversations.models


class Migration(migrations.Migration):
    dependencies = [("memory", "0013_default_organisation")]

    operations = [
        migrations.AlterField(
            model_name="person",
            name="organisation",
            field=models.ForeignKey(
                db_index=False,
                default=memory.conversations.models.default_organisation_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="people",
                to="memory.organisation",
            ),
        ),
        migrations.AlterField(
            model_name="session",
            name="organisation",
            field=models.ForeignKey(
                db_index=False,
                default=memory.conversations.models.default_organisation_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="sessions",
                to="memory.organisation",
            ),
        ),
        migrations.AlterField(
            model_name="apikey",
            name="organisation",
            field=models.ForeignKey(
                default=memory.conversations.models.default_organisation_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="api_keys",
                to="memory.organisation",
            ),
        ),
        migrations.AddIndex(
            model_name="person",
            index=models.Index(
                fields=["organisation", "-last_active_at"], name="idx_people_org_active"
            ),
        ),
        migrations.DeleteModel(name="Persona"),
        migrations.RenameModel(old_name="OrganisationPersona", new_name="Persona"),
        migrations.AlterModelTable(name="persona", table="personas"),
        migrations.AlterField(
            model_name="persona",
            name="organisation",
            field=models.ForeignKey(
                db_index=False,
                default=memory.conversations.models.default_organisation_id,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="personas",
                to="memory.organisation",
            ),
        ),
        migrations.AddConstraint(
            model_name="persona",
            constraint=models.UniqueConstraint(
                fields=("organisation", "slug"), name="uniq_persona_org_slug"
            ),
        ),
    ]
