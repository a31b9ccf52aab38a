"""Care teams written before organisations reached the dashboard: their logins join the
organisation of their people (the default one), and audit rows name it."""

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("dashboard", "0003_audit_organisation_and_forget")]
AFTER = [("dashboard", "0004_care_teams_join_their_organisation")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_care_team_logins_join_the_default_organisation():
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        old = _migrate(BEFORE)
        now = timezone.now()
        default = old.get_model("memory", "Organisation").objects.get(slug="default")
        Person = old.get_model("memory", "Person")
        nana = Person.objects.create(
            id=uuid.uuid4(), display_name="Nana", created_at=now, last_active_at=now
        )
        grandad = Person.objects.create(
            id=uuid.uuid4(), display_name="Grandad", created_at=now, last_active_at=now
        )
        User = old.get_model("auth", "User")
        alice, bob, nobody = (User.objects.create(username=n) for n in ("alice", "bob", "zoe"))
        Team = old.get_model("dashboard", "CareTeamMembership")
        Team.objects.create(user=alice, person=nana, role="admin")
        Team.objects.create(user=alice, person=grandad, role="admin")
        Team.objects.create(user=bob, person=nana, role="family")
        Audit = old.get_model("dashboard", "AuditEvent")
        read = Audit.objects.create(username="alice", person=nana, action="view_person")
        orphan = Audit.objects.create(username="alice", person=None, action="erase")

        new = _migrate(AFTER)
        members = new.get_model("memory", "OrganisationMembership").objects
        assert sorted(members.values_list("user__username", "organisation_id", "is_admin")) == [
            ("alice", default.pk, False),
            ("bob", default.pk, False),
        ]
        assert not members.filter(user_id=nobody.pk).exists()  # in no care team
        Audit = new.get_model("dashboard", "AuditEvent")
        assert Audit.objects.get(pk=read.pk).organisation_id == default.pk
        assert Audit.objects.get(pk=orphan.pk).organisation_id is None
    finally:
        _migrate(latest)
