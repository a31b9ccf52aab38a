"""Standard Webhooks: real deliveries to a real HTTP receiver verified with the standard's own
library (`standardwebhooks`, PyPI), secret rotation with two signatures, secrets made before the
standard still working, and the deprecated X-Clara-* headers."""

import base64
import hashlib
import hmac
import importlib
import re
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.apps import apps
from django.utils import timezone
from standardwebhooks import Webhook as Verifier
from standardwebhooks.webhooks import WebhookVerificationError

from memory.conversations import services as conversations
from memory.conversations import tenancy
from memory.webhooks import services
from memory.webhooks.models import Webhook
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


def _deliver(organisation, *, event="alert.raised"):
    (made,) = services.event_emit(
        organisation_id=organisation.pk,
        event=event,
        data={"alert_id": 1, "reason": "fall"},
        dedupe_key=uuid.uuid4().hex,
        at=timezone.now(),
    )
    return services.delivery_attempt(delivery_id=made.id)


def _verifies(secret: str, request) -> bool:
    try:
        Verifier(secret).verify(request.body, request.headers)
    except WebhookVerificationError:
        return False
    return True


def test_a_delivery_verifies_with_the_standard_library(organisation, http_receiver):
    webhook, secret = services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.raised"]
    )
    delivery = _deliver(organisation)
    assert delivery.status == "delivered"
    (request,) = http_receiver.requests
    payload = Verifier(secret).verify(request.body, request.headers)
    assert payload["type"] == payload["event"] == "alert.raised"
    assert payload["data"] == {"alert_id": 1, "reason": "fall"}
    assert request.headers["webhook-id"] == str(delivery.id)
    assert request.headers["webhook-signature"].startswith("v1,")
    # The standard's form: whsec_ + standard base64 of 32 random bytes.
    assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32
    # Another secret does not verify it (the check can fail).
    _, other = services.webhook_create(
        organisation_id=organisation.pk, url="https://x.example/h", events=["alert.escalated"]
    )
    assert not _verifies(other, request)


def test_a_retry_keeps_its_webhook_id_and_each_attempt_verifies(organisation, http_receiver):
    http_receiver.answers[:] = [(500, {}), (200, {})]
    _, secret = services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.raised"]
    )
    first = _deliver(organisation)
    services.delivery_attempt(delivery_id=first.id, now=timezone.now())
    assert len(http_receiver.requests) == 2
    assert {r.headers["webhook-id"] for r in http_receiver.requests} == {str(first.id)}
    assert all(_verifies(secret, r) for r in http_receiver.requests)


def test_during_a_rotation_both_secrets_verify_then_only_the_new_one(
    organisation, http_receiver, admin_api
):
    webhook, old = services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.raised"]
    )
    rotated = admin_api.post(f"/api/v1/webhooks/{webhook.id}/rotate-secret", {})
    assert rotated.status_code == 200, rotated.json()
    new = rotated.json()["secret"]
    assert new.startswith("whsec_") and new != old

    _deliver(organisation)
    during = http_receiver.requests[-1]
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    assert _verifies(new, during) and _verifies(old, during)

    # The window ends (24 h by default): the old secret no longer signs.
    Webhook.objects.filter(id=webhook.id).update(
        previous_secret_expires_at=timezone.now() - timedelta(seconds=1)
    )
    _deliver(organisation)
    after = http_receiver.requests[-1]
    assert len(after.headers["webhook-signature"].split(" ")) == 1
    assert _verifies(new, after) and not _verifies(old, after)


def test_the_rotation_window_is_the_setting(organisation, settings):
    settings.CLARA_WEBHOOK_SECRET_ROTATION_HOURS = 3
    webhook, old = services.webhook_create(
        organisation_id=organisation.pk, url="https://x.example/h", events=["alert.raised"]
    )
    now = timezone.now()
    rotated, new = services.webhook_secret_rotate(
        organisation_id=organisation.pk, webhook_id=webhook.id, now=now
    )
    assert rotated.previous_secret_expires_at == now + timedelta(hours=3)
    assert rotated.previous_secret_at(now + timedelta(hours=2, minutes=59)) == old
    assert rotated.previous_secret_at(now + timedelta(hours=3)) is None
    # Rotating again inside the window: the one just replaced signs beside the newest.
    again, newest = services.webhook_secret_rotate(
        organisation_id=organisation.pk, webhook_id=webhook.id, now=now
    )
    assert (again.secret, again.previous_secret) == (newest, new)


def test_rotating_another_organisations_webhook_is_unknown(organisation, admin_api):
    other = tenancy.organisation_get_or_create("elsewhere")
    theirs, secret = services.webhook_create(
        organisation_id=other.pk, url="https://elsewhere.example/h", events=["alert.raised"]
    )
    gone = admin_api.post(f"/api/v1/webhooks/{theirs.id}/rotate-secret", {})
    never = admin_api.post(f"/api/v1/webhooks/{uuid.uuid4()}/rotate-secret", {})
    assert gone.status_code == never.status_code == 404
    assert gone.json() == never.json()
    assert Webhook.objects.get(id=theirs.id).secret == secret


def test_rotating_needs_the_admin_scope(organisation):
    webhook, _ = services.webhook_create(
        organisation_id=organisation.pk, url="https://x.example/h", events=["alert.raised"]
    )
    _, raw = conversations.api_key_create(
        name="bot", organisation_id=organisation.pk, scopes=["turns"]
    )
    response = ApiClient(raw).post(f"/api/v1/webhooks/{webhook.id}/rotate-secret", {})
    assert response.status_code == 403 and response.json()["field"] == "admin"


def test_a_malformed_webhook_id_is_a_422_naming_it(admin_api):
    response = admin_api.post("/api/v1/webhooks/not-a-uuid/rotate-secret", {})
    assert response.status_code == 422 and "webhook_id" in response.text


def _legacy_verify(secret_string: str, request) -> bool:
    """The verifier docs/webhooks.md gave before the standard, word for word."""
    timestamp = request.headers["x-clara-timestamp"]
    expected = hmac.new(
        secret_string.encode(), timestamp.encode() + b"." + request.body, hashlib.sha256
    ).hexdigest()
    return hmac.compare_digest("sha256=" + expected, request.headers["x-clara-signature"])


def test_a_secret_made_before_the_standard_keeps_working(organisation, http_receiver):
    """Migration 0040 converts it: the old receiver's check still passes with the string it
    holds, and the standard library verifies with `whsec_` + base64 of that string."""
    legacy = "whsec_" + "Ab-_" * 10 + "xyz"  # the old form: URL-safe, not standard base64
    webhook, _ = services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.raised"]
    )
    webhook.secret = legacy
    webhook.save(update_fields=["secret"])
    migration = importlib.import_module("memory.migrations.0040_webhook_secrets_standard_form")
    migration.to_standard_form(apps, None)

    converted = Webhook.objects.get(id=webhook.id).secret
    assert converted == "whsec_" + base64.b64encode(legacy.encode()).decode()
    _deliver(organisation)
    (request,) = http_receiver.requests
    assert _legacy_verify(legacy, request)
    assert _verifies(converted, request)
    assert not _verifies(legacy, request)  # why it had to change: the library misreads it

    migration.to_legacy_form(apps, None)
    assert Webhook.objects.get(id=webhook.id).secret == legacy


def test_the_deprecated_headers_can_be_turned_off(organisation, http_receiver, settings):
    _, secret = services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.raised"]
    )
    _deliver(organisation)
    settings.CLARA_WEBHOOK_LEGACY_HEADERS = False
    _deliver(organisation)
    with_legacy, without = http_receiver.requests
    assert with_legacy.headers["x-clara-event"] == "alert.raised"
    assert not any(h.startswith("x-clara-") for h in without.headers)
    assert _verifies(secret, with_legacy) and _verifies(secret, without)


def _docs_receiver(secret: str, handled_events: list) -> dict:
    """The receiver docs/webhooks.md shows, run as written (with this webhook's secret)."""
    text = (Path(__file__).parents[2] / "docs" / "webhooks.md").read_text()
    section = text[text.index("## Verifying a delivery") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert 'SECRET = "whsec_..."' in code
    namespace = {"handle": lambda kind, data: handled_events.append((kind, data))}
    exec(code.replace('"whsec_..."', repr(secret)), namespace)  # noqa: S102 - our own docs
    return namespace


def test_the_docs_receiver_accepts_real_deliveries_once_and_refuses_forgeries(
    organisation, http_receiver
):
    http_receiver.answers[:] = [(500, {}), (200, {})]
    _, secret = services.webhook_create(
        organisation_id=organisation.pk, url=http_receiver.url, events=["alert.raised"]
    )
    handled_events: list = []
    receiver = _docs_receiver(secret, handled_events)["receive"]
    delivery = _deliver(organisation)
    services.delivery_attempt(delivery_id=delivery.id)  # the retry: same webhook-id
    first, retry = http_receiver.requests
    assert receiver(first.headers, first.body) == 204
    assert receiver(retry.headers, retry.body) == 204
    assert handled_events == [("alert.raised", {"alert_id": 1, "reason": "fall"})]
    assert receiver(first.headers, first.body.replace(b"fall", b"pain")) == 400
