"""Webhooks: registering them, emitting alert events, and delivering each one signed.

Signing follows Standard Webhooks (signing.py; docs/webhooks.md shows how to verify with the
standard's libraries): `webhook-id` (stable across attempts), `webhook-timestamp` and
`webhook-signature: v1,<base64>`, two signatures while a rotated secret's predecessor is still
valid; the deprecated `X-Clara-*` headers beside them for now. A failed attempt (no answer in time,
or any status outside 2xx) is tried again with exponential backoff until CLARA_WEBHOOK_RETRY_HOURS
after the event, then marked failed.

Where a delivery may go: only to addresses on the public internet (`ipaddress`'s `is_global`; an IPv6
address that carries an IPv4 one, NAT64, 6to4, SIIT, IPv4-compatible or -mapped, by the IPv4 inside;
Teredo, site-local and local-use NAT64 never), or
to networks the operator lists in CLARA_WEBHOOK_ALLOWED_NETWORKS. Otherwise anyone holding an API
key with `admin` could make the server POST to its own private network, its loopback or the
cloud's metadata service. The host is checked when the webhook is registered (a literal address,
or a name that resolves), and every attempt resolves the name again, checks every address and
connects to the one it checked (the name still sent as Host and TLS server name), so a name that
changes its answer between the check and the connection reaches nothing new. Redirects are not
followed.
"""

import ipaddress
import json
import socket
import uuid
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from clara.client_ip import in_networks
from memory.core import metrics
from memory.core.errors import Invalid, NotFound
from memory.webhooks import signing
from memory.webhooks.models import Webhook, WebhookDelivery, WebhookEvent

MAX_WEBHOOKS_PER_ORGANISATION = 20


class Unreachable(Exception):
    """A webhook's host is not an address deliveries may go to, or does not resolve."""


class InternalAddress(Unreachable):
    """The host is, or resolves to, an address that is not on the public internet."""

    def __init__(self) -> None:
        super().__init__("The host is a private or internal address.")


class NotResolved(Unreachable):
    """The host's name does not resolve (now: a delivery tries again later)."""

    def __init__(self) -> None:
        super().__init__("The host does not resolve.")


# IPv6 prefixes whose last 32 bits are an IPv4 address a gateway or the host itself would reach:
# NAT64's well-known prefix (RFC 6052), SIIT's IPv4-translated addresses (::ffff:0:a.b.c.d,
# RFC 2765) and the deprecated IPv4-compatible addresses (::a.b.c.d, RFC 4291). Python's
# `is_global` calls all three global whatever IPv4 they carry; the IPv4 inside decides.
_CARRY_IPV4 = tuple(
    ipaddress.ip_network(net) for net in ("64:ff9b::/96", "::ffff:0:0:0/96", "::/96")
)
# Refused whatever they carry: local-use NAT64 (RFC 8215: a private translator's network),
# Teredo (the client's address is hidden behind a relay) and site-local (deprecated, fec0::/10,
# private wherever it is still used).
_NEVER = (ipaddress.ip_network("64:ff9b:1::/48"),)


def _carried_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, if it is one of the forms that embed one."""
    if address.ipv4_mapped:
        return address.ipv4_mapped
    if address.sixtofour:
        return address.sixtofour
    if any(address in net for net in _CARRY_IPV4):
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return None


def _allowed(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if in_networks(address, settings.CLARA_WEBHOOK_ALLOWED_NETWORKS):
        return True
    if isinstance(address, ipaddress.IPv6Address):
        if address.teredo or address.is_site_local or any(address in n for n in _NEVER):
            return False
        carried = _carried_ipv4(address)
        if carried is not None:
            # The address it stands for decides (::1 and :: "carry" 0.0.0.1 and 0.0.0.0,
            # refused like the loopback and unspecified addresses they are).
            return _allowed(carried)
    return address.is_global and not address.is_multicast


def _addresses(host: str, port: int) -> list[str]:
    """Every address `host` stands for (itself, if it is one); Unreachable when none is
    allowed to receive deliveries, or any is not (a name with one private answer is refused)."""
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        try:
            answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise NotResolved from exc
        found = list(dict.fromkeys(answer[4][0].split("%")[0] for answer in answers))
    else:
        found = [str(literal)]
    if not found or not all(_allowed(ipaddress.ip_address(a)) for a in found):
        raise InternalAddress
    return found


def _port(parts) -> int:
    return parts.port or (443 if parts.scheme == "https" else 80)


def _check_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        parts.hostname  # noqa: B018 -- parses the host: an unclosed "[::1" raises here
    except ValueError:
        raise Invalid("The URL is not a valid http:// or https:// address.", field="url") from None
    try:
        port = _port(parts)
    except ValueError:
        raise Invalid("The URL's port is not a number from 0 to 65535.", field="url") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Invalid("The URL must be http:// or https:// with a host.", field="url")
    try:
        _addresses(parts.hostname, port)
    except InternalAddress:
        raise Invalid(
            "Webhooks go to receivers on the public internet; this host is a private or "
            "internal address.",
            field="url",
        ) from None
    except NotResolved:
        pass  # kept: each delivery resolves the name again
    return url


def _post(url: str, *, content: bytes, headers: dict) -> httpx.Response:
    """POST to `url` at an address `_addresses` allowed, checked just before connecting."""
    parts = urlsplit(url)
    address = _addresses(parts.hostname, _port(parts))[0]
    target = httpx.URL(url).copy_with(host=address)
    extensions = {"sni_hostname": parts.hostname} if parts.scheme == "https" else {}
    with httpx.Client(
        timeout=settings.CLARA_WEBHOOK_TIMEOUT_SECONDS, follow_redirects=False
    ) as client:
        request = client.build_request(
            "POST",
            target,
            content=content,
            headers={**headers, "Host": parts.netloc.rpartition("@")[2]},
            extensions=extensions,
        )
        return client.send(request)


def _check_events(events: list[str]) -> list[str]:
    if not events:
        raise Invalid("Name at least one event.", field="events")
    unknown = sorted(set(events) - set(WebhookEvent.values))
    if unknown:
        raise Invalid(f"Unknown event {unknown[0]!r}.", field="events")
    return sorted(set(events))


def webhook_create(
    *, organisation_id: uuid.UUID, url: str, events: list[str]
) -> tuple[Webhook, str]:
    """Register a webhook; returns it with its secret (shown this once, kept encrypted)."""
    url, events = _check_url(url), _check_events(events)
    if Webhook.objects.filter(organisation_id=organisation_id).count() >= (
        MAX_WEBHOOKS_PER_ORGANISATION
    ):
        raise Invalid("This organisation has as many webhooks as it may.", field="url")
    secret = signing.secret_new()
    webhook = Webhook.objects.create(
        organisation_id=organisation_id, url=url, events=events, secret=secret
    )
    return webhook, secret


def webhook_secret_rotate(
    *, organisation_id: uuid.UUID, webhook_id: uuid.UUID, now: datetime | None = None
) -> tuple[Webhook, str]:
    """Give a webhook a new secret; the current one keeps signing beside it for
    CLARA_WEBHOOK_SECRET_ROTATION_HOURS. Rotating again inside that window drops the oldest.
    Another organisation's id is unknown (404)."""
    now = now or timezone.now()
    with transaction.atomic():
        webhook = (
            Webhook.objects.select_for_update()
            .filter(organisation_id=organisation_id, id=webhook_id)
            .first()
        )
        if webhook is None:
            raise NotFound("No webhook with this id.", field="webhook_id")
        secret = signing.secret_new()
        webhook.previous_secret = webhook.secret
        webhook.previous_secret_expires_at = now + timedelta(
            hours=settings.CLARA_WEBHOOK_SECRET_ROTATION_HOURS
        )
        webhook.secret = secret
        webhook.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at"])
    return webhook, secret


def webhooks_of(*, organisation_id: uuid.UUID) -> list[Webhook]:
    """The organisation's webhooks, oldest first (the only scope any read of them uses)."""
    return list(Webhook.objects.filter(organisation_id=organisation_id).order_by("created_at"))


def webhook_delete(*, organisation_id: uuid.UUID, webhook_id: uuid.UUID) -> None:
    """Remove a webhook and its deliveries; another organisation's id is unknown (404)."""
    deleted, _ = Webhook.objects.filter(organisation_id=organisation_id, id=webhook_id).delete()
    if not deleted:
        raise NotFound("No webhook with this id.", field="webhook_id")


def event_emit(
    *, organisation_id: uuid.UUID, event: str, data: dict, dedupe_key: str, at: datetime
) -> list[WebhookDelivery]:
    """One delivery per webhook of the organisation that wants `event`; queued after commit.

    `data` must hold codes and ids only. Emitting the same (event, dedupe_key) again adds nothing.
    """
    from memory.webhooks import tasks  # tasks import this module

    made = []
    for webhook in Webhook.objects.filter(organisation_id=organisation_id):
        if event not in (webhook.events or []):
            continue
        delivery_id = uuid.uuid4()
        # `type`, `timestamp` and `data`: the standard's payload shape; `id`, `event` and
        # `created_at`: what receivers read before it, kept.
        payload = {
            "id": str(delivery_id),
            "type": event,
            "event": event,
            "timestamp": at.isoformat(),
            "created_at": at.isoformat(),
            "data": data,
        }
        try:
            with transaction.atomic():
                delivery = WebhookDelivery.objects.create(
                    id=delivery_id,
                    webhook=webhook,
                    event=event,
                    dedupe_key=f"{webhook.id}:{event}:{dedupe_key}"[:200],
                    payload=payload,
                    created_at=at,
                    next_attempt_at=at,
                )
        except IntegrityError:
            continue  # emitted before: that delivery stands
        tasks.deliver_webhook.delay_on_commit(str(delivery.id))
        made.append(delivery)
    return made


def retry_delay(attempts: int) -> timedelta:
    """Pause after the n-th failed attempt: base, 2×base, 4×base, ... at most an hour."""
    base = settings.CLARA_WEBHOOK_RETRY_BASE_SECONDS
    return timedelta(seconds=min(base * 2 ** max(attempts - 1, 0), 3600))


def delivery_attempt(*, delivery_id: uuid.UUID, now: datetime | None = None) -> WebhookDelivery:
    """Try one pending delivery once; records the outcome and when to try again.

    A delivery that is no longer pending is left alone (a duplicate job), so a receiver sees a
    delivery again only when an attempt's outcome was lost (at-least-once).
    """
    now = now or timezone.now()
    delivery = WebhookDelivery.objects.select_related("webhook").filter(id=delivery_id).first()
    if delivery is None:
        raise NotFound("No delivery with this id.", field="delivery_id")
    if delivery.status != WebhookDelivery.Status.PENDING:
        return delivery
    body = json.dumps(delivery.payload, separators=(",", ":"), sort_keys=True).encode()
    timestamp = int(now.timestamp())
    webhook = delivery.webhook
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Clara-Webhooks/1",
        **signing.headers(
            message_id=str(delivery.id),
            event=delivery.event,
            timestamp=timestamp,
            body=body,
            secret=webhook.secret,
            previous_secret=webhook.previous_secret_at(now),
        ),
    }
    status_code, error = None, ""
    try:
        response = _post(webhook.url, content=body, headers=headers)
        status_code = response.status_code
        if not 200 <= status_code < 300:
            error = f"HTTP {status_code}"
    except httpx.HTTPError as exc:
        error = type(exc).__name__
    except Unreachable as exc:
        error = str(exc)
    delivery.attempts += 1
    delivery.last_attempt_at = now
    delivery.last_status_code = status_code
    delivery.last_error = error[:200]
    event = metrics.bounded(delivery.event, frozenset(WebhookEvent.values))
    if not error:
        delivery.status = WebhookDelivery.Status.DELIVERED
        delivery.delivered_at = now
        delivery.next_attempt_at = None
        if delivery.event == WebhookEvent.ALERT_RAISED:
            # From the alert being raised (as the e-mail channel measures) to received by the
            # organisation's system; the delivery itself is made when the delivery job runs.
            raised = _raised_at(delivery.payload) or delivery.created_at
            metrics.ALERT_DELIVERY_SECONDS.labels("webhook").observe(
                max(0.0, (now - raised).total_seconds())
            )
    else:
        next_at = now + retry_delay(delivery.attempts)
        window_ends = delivery.created_at + timedelta(hours=settings.CLARA_WEBHOOK_RETRY_HOURS)
        if next_at > window_ends:
            delivery.status = WebhookDelivery.Status.FAILED
            delivery.next_attempt_at = None
            metrics.WEBHOOK_FAILURES.labels(event, "failed").inc()
        else:
            delivery.next_attempt_at = next_at
            metrics.WEBHOOK_FAILURES.labels(event, "retrying").inc()
    # Conditional UPDATE: only the attempt that found it pending records its outcome.
    WebhookDelivery.objects.filter(id=delivery.id, status=WebhookDelivery.Status.PENDING).update(
        attempts=delivery.attempts,
        last_attempt_at=delivery.last_attempt_at,
        last_status_code=delivery.last_status_code,
        last_error=delivery.last_error,
        status=delivery.status,
        delivered_at=delivery.delivered_at,
        next_attempt_at=delivery.next_attempt_at,
    )
    return delivery


def deliveries_due(*, now: datetime | None = None, limit: int = 500) -> list[uuid.UUID]:
    """Pending deliveries whose next attempt is due (the sweep's safety net for lost jobs)."""
    now = now or timezone.now()
    return list(
        WebhookDelivery.objects.filter(
            status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now
        )
        .order_by("next_attempt_at")
        .values_list("id", flat=True)[:limit]
    )


def failed_deliveries(*, organisation_id: uuid.UUID, limit: int = 20) -> list[WebhookDelivery]:
    """The organisation's failed deliveries, newest first (the dashboard shows them)."""
    return list(
        WebhookDelivery.objects.filter(
            webhook__organisation_id=organisation_id, status=WebhookDelivery.Status.FAILED
        )
        .select_related("webhook")
        .order_by("-created_at")[:limit]
    )


def _raised_at(payload: dict) -> datetime | None:
    """When the alert of an `alert.raised` payload was raised (its `data.raised_at`)."""
    try:
        return datetime.fromisoformat((payload.get("data") or {})["raised_at"])
    except (KeyError, TypeError, ValueError):
        return None
