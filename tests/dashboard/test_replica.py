"""Read replicas (clara/replica.py): dashboard reads go to the `replica` alias (the same test
database under a second name, TEST MIRROR), the bot's path and every write to the primary."""

import pytest
from django.db import connections, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from clara import replica
from memory.models import Person

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "replica"])

ROUTER = ["clara.replica.ReplicaRouter"]


@pytest.fixture
def routed(settings):
    settings.DATABASE_ROUTERS = ROUTER


def _tables(queries) -> str:
    return " ".join(q["sql"] for q in queries)


def test_a_dashboard_page_reads_the_replica_and_logins_the_primary(routed, alice_client, person):
    with (
        CaptureQueriesContext(connections["default"]) as primary,
        CaptureQueriesContext(connections["replica"]) as replica_side,
    ):
        response = alice_client.get(reverse("dashboard:person", args=[person.id]))

    assert response.status_code == 200
    assert '"people"' in _tables(replica_side.captured_queries)
    assert '"people"' not in _tables(primary.captured_queries)
    # The session and the login were read where they are written.
    assert '"django_session"' in _tables(primary.captured_queries)
    assert '"django_session"' not in _tables(replica_side.captured_queries)


def test_the_bot_api_never_reads_the_replica(routed, api, person):
    with CaptureQueriesContext(connections["replica"]) as replica_side:
        response = api.get(f"/api/v1/people/{person.id}/memories")

    assert response.status_code in (200, 404)
    assert replica_side.captured_queries == []


def test_writes_and_reads_inside_a_transaction_stay_on_the_primary(routed, db):
    now = timezone.now()
    with (
        replica.replica_reads(),
        CaptureQueriesContext(connections["default"]) as primary,
        CaptureQueriesContext(connections["replica"]) as replica_side,
    ):
        person = Person.objects.create(display_name="Ada", created_at=now, last_active_at=now)
        assert Person.objects.filter(id=person.id).exists()  # read on the replica
        read_back = Person.objects.get(id=person.id)
        read_back.display_name = "Ada L."
        read_back.save()  # read from the replica, written to the primary
        with transaction.atomic():
            assert Person.objects.get(id=person.id).display_name == "Ada L."

    assert "INSERT" in _tables(primary.captured_queries)
    assert "UPDATE" in _tables(primary.captured_queries)
    replica_sql = _tables(replica_side.captured_queries)
    assert "INSERT" not in replica_sql and "UPDATE" not in replica_sql
    assert len(replica_side.captured_queries) == 2  # the exists() and the get() outside atomic


def test_without_a_replica_configured_everything_reads_the_primary(alice_client, person):
    with CaptureQueriesContext(connections["replica"]) as replica_side:
        response = alice_client.get(reverse("dashboard:person", args=[person.id]))

    assert response.status_code == 200
    assert replica_side.captured_queries == []
