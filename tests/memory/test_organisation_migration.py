"""A database built before organisations moves whole into the default organisation."""

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("memory", "0011_encrypt_existing_rows")]
AFTER = [("memory", "0014_organisation_required")]
SEP = "\x1f"


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_rows_written_before_organisations_join_the_default_one():
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        old = _migrate(BEFORE)
        now = timezone.now()
        Person = old.get_model("memory", "Person")
        person = Person.objects.create(
            id=uuid.uuid4(), display_name="Nana", created_at=now, last_active_at=now
        )
        Session = old.get_model("memory", "Session")
        session = Session.objects.create(
            id=uuid.uuid4(), person=person, created_at=now, last_activity_at=now
        )
        old.get_model("memory", "ApiKey").objects.create(
            name="bot", prefix="abcd1234", key_hash="x"
        )
        old.get_model("memory", "Persona").objects.create(
            slug="buddy", display_name="Buddy", memory_policy="continuous"
        )
        Memory = old.get_model("memory", "Memory")
        common = {"created_at": now, "updated_at": now, "type": "other", "revision": 3}
        agents = Memory.objects.create(
            namespace=SEP.join(("agent", "notes")),
            scope=SEP.join(("agent", "notes")),
            key="home",
            content="Beech House",
            **common,
        )
        persons = Memory.objects.create(
            namespace=SEP.join(("memories", str(person.id), "people")),
            scope=SEP.join(("memories", str(person.id))),
            key="cat",
            content="Tibbles",
            person=person,
            **common,
        )

        new = _migrate(AFTER)
        default = new.get_model("memory", "Organisation").objects.get(slug="default")
        assert new.get_model("memory", "Person").objects.get(id=person.id).organisation_id == (
            default.pk
        )
        assert new.get_model("memory", "Session").objects.get(id=session.id).organisation_id == (
            default.pk
        )
        key = new.get_model("memory", "ApiKey").objects.get(prefix="abcd1234")
        assert key.organisation_id == default.pk
        assert sorted(key.scopes) == sorted(
            ["turns", "memories:read", "memories:write", "export", "erase", "admin"]
        )
        persona = new.get_model("memory", "Persona").objects.get(slug="buddy")
        assert (persona.organisation_id, persona.memory_policy) == (default.pk, "continuous")
        Memory = new.get_model("memory", "Memory")
        moved = Memory.objects.get(pk=agents.pk)
        assert moved.namespace == SEP.join(("org", str(default.pk), "agent", "notes"))
        assert moved.scope == SEP.join(("org", str(default.pk)))
        assert moved.content == "Beech House"
        assert Memory.objects.get(pk=persons.pk).namespace == persons.namespace
        scope = new.get_model("memory", "MemoryScope").objects.get(scope=moved.scope)
        assert scope.generation == 3
    finally:
        _migrate(latest)
