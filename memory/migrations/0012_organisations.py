"""Organisations (step 1 of 3): the table, and nullable links from people, sessions and keys.

Personas become per organisation: a new table that step 2 fills and step 3 puts in place of the
old one (its primary key was the slug, which two organisations could not share).
"""

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory", "0011_encrypt_existing_rows")]

    operations = [
        migrations.CreateModel(
            name="Organisation",
            fields=[
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("slug", models.SlugField(max_length=64, unique=True)),
                ("name", models.CharField(max_length=200)),
                ("contact_email", models.EmailField(blank=True, default="", max_length=254)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={"db_table": "organisations"},
        ),
        migrations.AddField(
            model_name="person",
            name="organisation",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="people",
                to="memory.organisation",
            ),
        ),
        migrations.AddField(
            model_name="session",
            name="organisation",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="sessions",
                to="memory.organisation",
            ),
        ),
        migrations.AddField(
            model_name="apikey",
            name="organisation",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="api_keys",
                to="memory.organisation",
            ),
        ),
        migrations.AddField(
            model_name="apikey",
            name="expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="apikey",
            name="scopes",
            field=models.JSONField(default=list),
        ),
        migrations.CreateModel(
            name="OrganisationPersona",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("slug", models.SlugField(max_length=32)),
                ("display_name", models.CharField(max_length=100)),
                (
                    "memory_policy",
                    models.CharField(
                        choices=[
                            ("dementia_safe", "Dementia Safe"),
                            ("continuous", "Continuous"),
                        ],
                        default="dementia_safe",
                        max_length=16,
                    ),
                ),
                (
                    "organisation",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="personas",
                        to="memory.organisation",
                    ),
                ),
            ],
            options={"db_table": "organisation_personas"},
        ),
    ]
