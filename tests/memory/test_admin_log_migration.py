"""Rows the admin's history logged by a person's name before are renamed by kind and id."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.memory.test_organisation_migration import _migrate

BEFORE = [("memory", "0044_person_approved_texts")]
AFTER = [("memory", "0045_admin_log_without_names")]


@pytest.mark.django_db(transaction=True)
def test_names_in_the_admins_history_are_replaced_by_kind_and_id(django_user_model):
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        _migrate(BEFORE)
        # The admin's and content types' tables are Django's own, unchanged by these migrations.
        from django.contrib.admin.models import LogEntry
        from django.contrib.contenttypes.models import ContentType

        operator = django_user_model.objects.create(username="operator", is_staff=True)
        person_kind, _ = ContentType.objects.get_or_create(app_label="memory", model="person")
        home_kind, _ = ContentType.objects.get_or_create(app_label="memory", model="home")
        common = {"user_id": operator.pk, "action_flag": 2, "change_message": "[]"}
        about = LogEntry.objects.create(
            content_type_id=person_kind.pk, object_id="abc", object_repr="Grandma Peggy", **common
        )
        home = LogEntry.objects.create(
            content_type_id=home_kind.pk, object_id="h1", object_repr="Beech House", **common
        )

        _migrate(AFTER)
        assert LogEntry.objects.get(pk=about.pk).object_repr == "person abc"
        # A home names no one: left as it was.
        assert LogEntry.objects.get(pk=home.pk).object_repr == "Beech House"
    finally:
        _migrate(latest)
