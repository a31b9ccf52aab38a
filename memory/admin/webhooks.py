"""Webhooks and their deliveries: operators see each delivery's state, failed ones included."""

from django.contrib import admin

from memory.admin.base import ReadOnlyAdmin
from memory.models import Webhook, WebhookDelivery


@admin.register(Webhook)
class WebhookAdmin(ReadOnlyAdmin):
    organisation_lookup = "organisation"
    list_display = ("url", "organisation", "events", "created_at", "previous_secret_expires_at")
    list_select_related = ("organisation",)
    exclude = ("secret", "previous_secret")
    ordering = ("-created_at",)

    def has_delete_permission(self, request, obj=None):
        return True  # stopping a webhook is an operator's call too


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    organisation_lookup = "webhook__organisation"
    list_display = (
        "id",
        "event",
        "status",
        "attempts",
        "last_status_code",
        "last_error",
        "created_at",
        "next_attempt_at",
        "delivered_at",
    )
    list_filter = ("status", "event")
    list_select_related = ("webhook",)
    search_fields = ("=id",)
    ordering = ("-created_at",)
