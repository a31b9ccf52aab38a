"""Webhooks: the API (scope admin, one organisation's own), signed deliveries to a real HTTP
receiver, retries with a stable delivery id, failure after the retry window, and alert events."""

import base64
import hashlib
import hmac
import json
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from memory.conversations import services as conversations
from memory.conversations import tenancy
from memory.insights.alerts import escalation_alert_raise
from memory.models import Person
from memory.webhooks import services
from memory.webhooks.models import Webhook, WebhookDelivery
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def organisation():
    return tenancy.organisation_get_or_create("sunrise-care", name="Sunrise")


@pytest.fixture
def admin_api(organisation):
    _, raw = conversations.api_key_create(
        name="sunrise admin", organisation_id=organisation.pk, scopes=["admin"]
    )
    return ApiClient(raw)


def _delete(api: ApiClient, path: str):
    return api.client.delete(path, headers=api.headers)


def test_create_list_and_delete(admin_api, organisation):
    created = admin_api.post(
        "/api/v1/webhooks", {"url": "https://nursecall.example/hook", "events": ["alert.raised"]}
    )
    assert created.status_code == 201
    body = created.json()
    assert set(body) == {"id", "secret"} and body["secret"].startswith("whsec_")
    listed = admin_api.get("/api/v1/webhooks").json()["webhooks"]
    assert [(w["id"], w["url"], w["events"]) for w in listed] == [
        (body["id"], "https://nursecall.example/hook", ["alert.raised"])
    ]
    assert "secret" not in listed[0]
    assert _delete(admin_api, f"/api/v1/webhooks/{body['id']}").status_code == 204
    assert admin_api.get("/api/v1/webhooks").json()["webhooks"] == []


def test_the_secret_is_encrypted_at_rest(admin_api):
    body = admin_api.post(
        "/api/v1/webhooks", {"url": "https://x.example/h", "events": ["alert.raised"]}
    ).json()
    from django.db import connection

    pk = Webhook._meta.pk.get_db_prep_value(uuid.UUID(body["id"]), connection)
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM webhooks WHERE id = %s", [pk])
        row = cursor.fetchone()
    assert body["secret"] not in str(row[0])


def test_a_key_without_the_admin_scope_gets_403(organisation):
    _, raw = conversations.api_key_create(
        name="bot", organisation_id=organisation.pk, scopes=["turns"]
    )
    response = ApiClient(raw).post(
        "/api/v1/webhooks", {"url": "https://x.example/h", "events": ["alert.raised"]}
    )
    assert response.status_code == 403 and response.json()["field"] == "admin"


def test_another_organisations_webhook_is_unknown(admin_api):
    other = tenancy.organisation_get_or_create("elsewhere")
    theirs, _ = services.webhook_create(
        organisation_id=other.pk, url="https://elsewhere.example/h", events=["alert.raised"]
    )
    assert admin_api.get("/api/v1/webhooks").json()["webhooks"] == []
    gone = _delete(admin_api, f"/api/v1/webhooks/{theirs.id}")
    never = _delete(admin_api, "/api/v1/webhooks/00000000-0000-0000-0000-000000000000")
    assert gone.status_code == never.status_code == 404
    assert gone.json() == never.json()
    assert Webhook.objects.filter(id=theirs.id).exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://x.example/h", "events": ["alert.raised"]}, "url"),
        ({"url": "https://x.example/h", "events": ["alert.forgotten"]}, "events"),
        ({"url": "https://x.example/h", "events": []}, "events"),
        ({"events": ["alert.raised"]}, "url"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(admin_api, body, field):
    response = admin_api.post("/api/v1/webhooks", body)
    assert response.status_code == 422
    assert field in json.dumps(response.json())


def _verify(secret: str, request) -> bool:
    """The deprecated X-Clara-Signature, as docs/webhooks.md tells a receiver still on it."""
    timestamp = request.headers["x-clara-timestamp"]
    key = base64.b64decode(secret.removeprefix("whsec_"))
    expected = hmac.new(key, timestamp.encode() + b"." + request.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest("sha256=" + expected, request.headers["x-clara-signature"])


def _person(organisation) -> Person:
    person_id = uuid.uuid4()
    conversations.session_resolve(
        user_id=person_id, display_name="Margaret", organisation_id=organisation.pk
    )
    return Person.objects.get(id=person_id)


def test_an_urgent_alert_is_delivered_signed_without_the_persons_words(organisation, http_receiver):
    webhook, secret = services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.raised"]
    )
    person = _person(organisation)
    session, _ = conversations.session_resolve(user_id=person.id, organisation_id=organisation.pk)
    conversations.exchange_record(
        session_id=session.id,
        user_message="Margaret here, I've fallen and can't get up",
        assistant_message="I'm getting help.",
        organisation_id=organisation.pk,
    )
    from dashboard.alerting import ladder
    from memory.models import Alert

    alert = Alert.objects.get(person=person)
    ladder.alert_deliver(alert_id=alert.id)
    delivery_row = WebhookDelivery.objects.get(webhook=webhook)
    services.delivery_attempt(delivery_id=delivery_row.id)

    assert len(http_receiver.requests) == 1
    request = http_receiver.requests[0]
    assert _verify(secret, request)
    assert request.headers["x-clara-delivery"] == str(delivery_row.id)
    assert request.headers["x-clara-event"] == "alert.raised"
    body = request.json
    assert body["id"] == str(delivery_row.id) and body["event"] == "alert.raised"
    assert body["data"]["reason"] == "fall" and body["data"]["urgent"] is True
    assert body["data"]["alert_id"] == alert.id
    raw = request.body.decode()
    assert "fallen" not in raw and "get up" not in raw and "Margaret" not in raw
    assert WebhookDelivery.objects.get(id=delivery_row.id).status == "delivered"


def test_a_receiver_that_fails_twice_then_succeeds_gets_one_delivery_id(
    organisation, http_receiver, settings
):
    http_receiver.answers[:] = [(500, {}), "close", (200, {"ok": True})]
    webhook, secret = services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.escalated"]
    )
    now = timezone.now()
    (made,) = services.event_emit(
        organisation_id=organisation.pk,
        event="alert.escalated",
        data={"alert_id": 1},
        dedupe_key="1:escalated:1",
        at=now,
    )
    first = services.delivery_attempt(delivery_id=made.id, now=now)
    assert first.status == "pending" and first.last_status_code == 500
    assert first.next_attempt_at == now + timedelta(
        seconds=settings.CLARA_WEBHOOK_RETRY_BASE_SECONDS
    )
    second = services.delivery_attempt(delivery_id=made.id, now=first.next_attempt_at)
    assert second.status == "pending" and second.last_status_code is None
    assert second.next_attempt_at - first.next_attempt_at == timedelta(
        seconds=2 * settings.CLARA_WEBHOOK_RETRY_BASE_SECONDS
    )
    third = services.delivery_attempt(delivery_id=made.id, now=second.next_attempt_at)
    assert third.status == "delivered" and third.attempts == 3

    ids = {r.headers["x-clara-delivery"] for r in http_receiver.requests}
    assert ids == {str(made.id)} and len(http_receiver.requests) == 3
    assert all(_verify(secret, r) for r in http_receiver.requests)
    # Delivered: a duplicate job sends nothing more.
    services.delivery_attempt(delivery_id=made.id)
    assert len(http_receiver.requests) == 3


def test_emitting_the_same_event_twice_makes_one_delivery(organisation, http_receiver):
    services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.raised"]
    )
    kwargs = dict(
        organisation_id=organisation.pk,
        event="alert.raised",
        data={"alert_id": 7},
        dedupe_key="7:raised",
        at=timezone.now(),
    )
    assert len(services.event_emit(**kwargs)) == 1
    assert services.event_emit(**kwargs) == []
    assert WebhookDelivery.objects.count() == 1


def test_a_receiver_down_for_24_hours_leaves_the_delivery_failed(organisation, http_receiver):
    http_receiver.answers[:] = [(503, {})]
    services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.raised"]
    )
    start = timezone.now()
    (made,) = services.event_emit(
        organisation_id=organisation.pk,
        event="alert.raised",
        data={"alert_id": 9},
        dedupe_key="9:raised",
        at=start,
    )
    now, attempts = start, 0
    while True:
        row = services.delivery_attempt(delivery_id=made.id, now=now)
        attempts += 1
        if row.status != "pending":
            break
        now = row.next_attempt_at
        assert now - start <= timedelta(hours=24)
    assert row.status == "failed" and row.last_error == "HTTP 503"
    assert 20 <= attempts <= 40  # backoff: 30 s doubling to an hour apart, over a day
    assert [d.id for d in services.failed_deliveries(organisation_id=organisation.pk)] == [made.id]
    other = tenancy.organisation_get_or_create("elsewhere")
    assert services.failed_deliveries(organisation_id=other.pk) == []


def test_only_webhooks_of_the_alerts_organisation_and_event_hear(organisation, http_receiver):
    other = tenancy.organisation_get_or_create("elsewhere")
    services.webhook_create(
        organisation_id=other.pk, url=http_receiver.url, events=["alert.raised"]
    )
    services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.acknowledged"]
    )
    person = _person(organisation)
    session, _ = conversations.session_resolve(user_id=person.id, organisation_id=organisation.pk)
    alert, _ = escalation_alert_raise(person_id=person.id, session_id=session.id, reason="fall")
    from dashboard.alerting import ladder

    ladder.alert_deliver(alert_id=alert.id)
    assert WebhookDelivery.objects.count() == 0


# --- Where deliveries may go: public receivers only (no server-side request forgery) ------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "http://localhost/hook",
        "http://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data/",  # the cloud's metadata service
        "http://100.64.0.1/hook",  # shared address space
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",  # IPv4 loopback written as IPv6
        "http://[fd00::1]/hook",
        "http://0.0.0.0/hook",
        # IPv6 forms that carry an IPv4 address inside (issue 30): each names the metadata
        # service or a private network, and a NAT64 or 6to4 gateway would take it there.
        "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 (RFC 6052) of 169.254.169.254
        "http://[64:ff9b::10.1.2.3]/hook",  # NAT64 of a private address
        "http://[64:ff9b:1::a00:1]/hook",  # local-use NAT64 (RFC 8215)
        "http://[2002:a9fe:a9fe::1]/hook",  # 6to4 of 169.254.169.254
        "http://[2002:7f00:1::1]/hook",  # 6to4 of 127.0.0.1
        "http://[::a9fe:a9fe]/hook",  # IPv4-compatible (deprecated) 169.254.169.254
        "http://[::127.0.0.1]/hook",  # IPv4-compatible loopback
        "http://[::ffff:169.254.169.254]/hook",  # IPv4-mapped
        "http://[::ffff:0:a9fe:a9fe]/hook",  # SIIT (RFC 2765) of 169.254.169.254
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",  # Teredo
        "http://[fec0::1]/hook",  # site-local (deprecated, still private in practice)
    ],
)
def test_a_private_or_internal_address_is_refused_and_nothing_is_stored(admin_api, settings, url):
    settings.CLARA_WEBHOOK_ALLOWED_NETWORKS = []
    response = admin_api.post("/api/v1/webhooks", {"url": url, "events": ["alert.raised"]})
    assert response.status_code == 422
    assert response.json()["field"] == "url" and "public internet" in response.json()["detail"]
    assert not Webhook.objects.exists()


@pytest.mark.parametrize(
    "url",
    [
        "http://receiver.example:99999/hook",
        "http://receiver.example:port/hook",
        "ftp://x.example/h",
        "http://[::1/",  # an unclosed IPv6 literal (was a 500)
        "http://[not-an-address]/hook",
    ],
)
def test_a_malformed_url_is_refused_naming_it_and_nothing_is_stored(admin_api, url):
    response = admin_api.post("/api/v1/webhooks", {"url": url, "events": ["alert.raised"]})
    assert response.status_code == 422 and response.json()["field"] == "url"
    assert not Webhook.objects.exists()


@pytest.mark.parametrize(
    "url",
    [
        "http://[64:ff9b::808:808]/hook",  # NAT64 of a public address: where NAT64 is used
        "http://[2002:808:808::1]/hook",  # 6to4 of a public address
        "http://[2606:4700::1111]/hook",
    ],
)
def test_an_ipv6_address_that_carries_a_public_ipv4_may_receive(admin_api, settings, url):
    settings.CLARA_WEBHOOK_ALLOWED_NETWORKS = []
    response = admin_api.post("/api/v1/webhooks", {"url": url, "events": ["alert.raised"]})
    assert response.status_code == 201, response.json()


def test_an_allowed_network_may_receive(admin_api, settings):
    settings.CLARA_WEBHOOK_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    ok = admin_api.post(
        "/api/v1/webhooks", {"url": "http://10.1.2.3/hook", "events": ["alert.raised"]}
    )
    assert ok.status_code == 201
    refused = admin_api.post(
        "/api/v1/webhooks", {"url": "http://192.168.0.10/hook", "events": ["alert.raised"]}
    )
    assert refused.status_code == 422


def _pending_delivery(organisation, url: str) -> WebhookDelivery:
    services.webhook_create(organisation_id=organisation.pk, url=url, events=["alert.raised"])
    (delivery,) = services.event_emit(
        organisation_id=organisation.pk,
        event="alert.raised",
        data={"alert_id": 1},
        dedupe_key=uuid.uuid4().hex,
        at=timezone.now(),
    )
    return delivery


def test_each_delivery_checks_the_address_again(organisation, http_receiver, settings):
    """Registered while its address was allowed (a name that later answers with a private
    address does the same): the delivery connects to nothing and says why."""
    delivery = _pending_delivery(organisation, http_receiver.url)
    settings.CLARA_WEBHOOK_ALLOWED_NETWORKS = []
    made = services.delivery_attempt(delivery_id=delivery.id)
    assert http_receiver.requests == []
    assert made.status == WebhookDelivery.Status.PENDING and made.attempts == 1
    assert WebhookDelivery.objects.get(id=delivery.id).last_error == (
        "The host is a private or internal address."
    )


def test_a_name_that_does_not_resolve_is_kept_and_retried(organisation):
    delivery = _pending_delivery(organisation, "https://nurse-call.invalid/hook")
    made = services.delivery_attempt(delivery_id=delivery.id)
    assert made.status == WebhookDelivery.Status.PENDING and made.next_attempt_at is not None
    assert WebhookDelivery.objects.get(id=delivery.id).last_error == "The host does not resolve."


def test_a_delivery_by_name_connects_to_the_checked_address_and_keeps_the_host(
    organisation, http_receiver
):
    port = http_receiver.url.split(":")[2].split("/")[0]
    delivery = _pending_delivery(organisation, f"http://localhost:{port}/hook")
    made = services.delivery_attempt(delivery_id=delivery.id)
    assert made.status == WebhookDelivery.Status.DELIVERED
    (request,) = http_receiver.requests
    assert request.headers["host"] == f"localhost:{port}"
