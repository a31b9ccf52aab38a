"""Webhooks in the bot API (scope `admin`): register, list and remove the organisation's own."""

from datetime import datetime
from uuid import UUID

from ninja import Router, Schema, Status
from pydantic import Field

from memory.conversations import tenancy
from memory.conversations.models import Scope
from memory.core.schemas import ERRORS, RequestSchema, Text
from memory.webhooks import services
from memory.webhooks.models import WebhookEvent

router = Router(tags=["webhooks"])


class WebhookIn(RequestSchema):
    url: Text(max_length=500, min_length=1) = Field(description="http(s) URL to POST events to.")
    events: list[WebhookEvent] = Field(
        min_length=1, max_length=3, description="alert.raised, alert.escalated, alert.acknowledged"
    )


class WebhookCreatedOut(Schema):
    id: UUID
    secret: str = Field(
        description="Signs every delivery (Standard Webhooks: whsec_ + base64); shown only now."
    )


class WebhookSecretOut(Schema):
    id: UUID
    secret: str = Field(description="The new signing secret (whsec_ + base64); shown only now.")
    previous_secret_expires_at: datetime = Field(
        description="Until then the previous secret signs too (a second v1 signature)."
    )


class WebhookOut(Schema):
    id: UUID
    url: str
    events: list[str]
    created_at: datetime


class WebhooksOut(Schema):
    webhooks: list[WebhookOut]


@router.post("/webhooks", response={201: WebhookCreatedOut, **ERRORS})
def create_webhook(request, payload: WebhookIn):
    """Register a webhook for the key's organisation; answers its id and signing secret."""
    caller = tenancy.request_caller(request, Scope.ADMIN)
    webhook, secret = services.webhook_create(
        organisation_id=caller.organisation_id,
        url=payload.url,
        events=[str(event) for event in payload.events],
    )
    return Status(201, {"id": webhook.id, "secret": secret})


@router.get("/webhooks", response={200: WebhooksOut, **ERRORS})
def list_webhooks(request):
    """The organisation's webhooks (never their secrets)."""
    caller = tenancy.request_caller(request, Scope.ADMIN)
    rows = services.webhooks_of(organisation_id=caller.organisation_id)
    return {
        "webhooks": [
            {"id": w.id, "url": w.url, "events": list(w.events), "created_at": w.created_at}
            for w in rows
        ]
    }


@router.delete("/webhooks/{webhook_id}", response={204: None, **ERRORS})
def delete_webhook(request, webhook_id: UUID):
    """Remove a webhook; nothing more is sent to it. Another organisation's id: 404."""
    caller = tenancy.request_caller(request, Scope.ADMIN)
    services.webhook_delete(organisation_id=caller.organisation_id, webhook_id=webhook_id)
    return Status(204, None)


@router.post(
    "/webhooks/{webhook_id}/rotate-secret",
    response={200: WebhookSecretOut, **ERRORS},
)
def rotate_webhook_secret(request, webhook_id: UUID):
    """Give a webhook a new secret; the previous one keeps signing beside it for
    CLARA_WEBHOOK_SECRET_ROTATION_HOURS (24 by default). Another organisation's id: 404."""
    caller = tenancy.request_caller(request, Scope.ADMIN)
    webhook, secret = services.webhook_secret_rotate(
        organisation_id=caller.organisation_id, webhook_id=webhook_id
    )
    return {
        "id": webhook.id,
        "secret": secret,
        "previous_secret_expires_at": webhook.previous_secret_expires_at,
    }
