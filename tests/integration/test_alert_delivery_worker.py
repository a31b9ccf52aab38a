"""An alert leaves through a real Celery worker (Redis and the embedded broker) to a real SMTP
server and a real HTTP receiver; a receiver that fails twice is retried by the worker itself."""

import subprocess
import sys
import time
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from dashboard.models import CareRole, CareTeamMembership
from memory.conversations import services, tenancy
from memory.models import Alert, OrganisationMembership, Person, WebhookDelivery
from memory.webhooks import services as webhooks
from tests.integration.test_worker import ROOT, _client_app
from tests.support.http_receiver import HttpReceiver
from tests.support.smtp_server import SmtpServer

pytestmark = pytest.mark.django_db(transaction=True)
# The worker takes a while to start on a busy machine; delays are measured in bench/, not here.
WAIT = 120


@pytest.fixture(params=["redis", "filesystem"])
def stack(request, tmp_path):
    """SMTP server, HTTP receiver and a worker (retry base 1 s) on the broker."""
    client, env = _client_app(request.param, tmp_path)
    with SmtpServer() as smtp, HttpReceiver() as receiver:
        env.update(
            EMAIL_HOST=smtp.host,
            EMAIL_PORT=str(smtp.port),
            CLARA_WEBHOOK_RETRY_BASE_SECONDS="1",
        )
        log_path = tmp_path / "worker.log"
        with open(log_path, "w") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "clara", "worker", "--pool", "solo"]
                + ["-l", "info", "--without-mingle", "--without-gossip", "--without-heartbeat"]
                + ["-n", f"alerts-{uuid.uuid4().hex[:8]}@%h"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            yield client, smtp, receiver
        finally:
            print(log_path.read_text()[-3000:])  # shown only when the test fails
            process.kill()
            process.wait()
            client.close()
            connection.close()


def _fall(receiver_url: str) -> Alert:
    organisation = tenancy.organisation_get_or_create("sunrise", name="Sunrise")
    webhooks.webhook_create(
        organisation_id=organisation.pk, url=receiver_url, events=["alert.raised"]
    )
    person_id = uuid.uuid4()
    session, _ = services.session_resolve(
        user_id=person_id, display_name="Margaret Jones", organisation_id=organisation.pk
    )
    user = get_user_model().objects.create_user("nurse", email="nurse@sunrise.example")
    OrganisationMembership.objects.create(user=user, organisation=organisation)
    CareTeamMembership.objects.create(
        user=user, person=Person.objects.get(id=person_id), role=CareRole.STAFF
    )
    services.exchange_record(
        session_id=session.id,
        user_message="I've fallen and can't get up",
        assistant_message="I'm getting someone for you.",
        organisation_id=organisation.pk,
    )
    return Alert.objects.get(person_id=person_id)


def _until(check, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def test_a_fall_reaches_email_and_webhook_through_the_worker(stack):
    client, smtp, receiver = stack
    alert = _fall(receiver.url)
    connection.close()  # SQLite: no reader held while the worker writes
    client.send_task("dashboard.tasks.deliver_alert", args=[alert.id])

    assert _until(lambda: smtp.messages and receiver.requests)
    assert smtp.recipients == [["nurse@sunrise.example"]]
    assert "Margaret" in smtp.messages[0]["Subject"]
    assert "fallen" not in SmtpServer.text(smtp.messages[0]).replace("may have fallen", "")
    assert receiver.requests[0].json["type"] == "alert.raised"
    assert _until(lambda: WebhookDelivery.objects.filter(status="delivered").count() == 1)


def test_the_worker_retries_a_receiver_that_fails_twice(stack):
    client, _, receiver = stack
    receiver.answers[:] = [(500, {}), (502, {}), (200, {"ok": True})]
    organisation = tenancy.organisation_get_or_create("sunrise", name="Sunrise")
    webhooks.webhook_create(
        organisation_id=organisation.pk, url=receiver.url, events=["alert.raised"]
    )
    (made,) = webhooks.event_emit(
        organisation_id=organisation.pk,
        event="alert.raised",
        data={"alert_id": 1},
        dedupe_key="1:raised",
        at=timezone.now(),
    )
    connection.close()
    client.send_task("memory.tasks.deliver_webhook", args=[str(made.id)])

    assert _until(lambda: len(receiver.requests) >= 3)
    assert {r.headers["webhook-id"] for r in receiver.requests} == {str(made.id)}
    assert _until(lambda: WebhookDelivery.objects.get(id=made.id).status == "delivered")
    row = WebhookDelivery.objects.get(id=made.id)
    assert row.attempts == 3
    # Each attempt is signed anew; the backoff schedule itself is tested in test_webhooks.py.
    assert len({r.headers["webhook-timestamp"] for r in receiver.requests}) >= 2
