"""What the jobs computed: summaries, trends and alerts."""

from django.contrib import admin

from memory.admin.base import LinksMixin, OrganisationScopedAdmin, ReadOnlyAdmin, short
from memory.insights import alerts as alerts_service

# --- Insights: summaries, trends and alerts -------------------------------------------------
from memory.models import Alert, PersonTrend, RollingSummary, SummarySpine


class ComputedAdmin(ReadOnlyAdmin):
    """Rows the background jobs compute: operators look, the jobs write."""

    list_select_related = ("person",)


@admin.register(RollingSummary)
class RollingSummaryAdmin(ComputedAdmin):
    list_display = ("person_link", "persona", "short_text", "messages_covered", "updated_at")
    list_filter = ("persona",)
    search_fields = ("=person__id", "person__display_name")
    ordering = ("-updated_at",)

    @admin.display(description="text")
    def short_text(self, obj):
        return short(obj.text)


@admin.register(SummarySpine)
class SummarySpineAdmin(ComputedAdmin):
    list_display = ("person_link", "persona", "version", "message_count", "created_at")
    list_filter = ("persona",)
    search_fields = ("=person__id", "person__display_name")
    ordering = ("-created_at",)


@admin.register(PersonTrend)
class PersonTrendAdmin(ComputedAdmin):
    list_display = ("person_link", "day", "baseline", "computed_at")
    search_fields = ("=person__id", "person__display_name")
    date_hierarchy = "day"
    ordering = ("-day",)

    @admin.display(description="baseline distress")
    def baseline(self, obj):
        return obj.data.get("baseline_distress")


@admin.register(Alert)
class AlertAdmin(OrganisationScopedAdmin, LinksMixin, admin.ModelAdmin):
    """The caregiver alert outbox. Alerts are raised by the system; people act on them here."""

    show_full_result_count = False
    list_per_page = 50
    list_display = ("created_at", "kind", "status", "person_link", "session_link", "acted_at")
    list_select_related = ("person", "session", "acted_by")
    list_filter = ("status", "kind")
    search_fields = ("=person__id", "person__display_name", "dedupe_key")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    actions = ["mark_looking_into", "mark_acknowledged"]
    readonly_fields = (
        "person",
        "session",
        "kind",
        "detail",
        "dedupe_key",
        "created_at",
        "status",
        "acted_by",
        "acted_at",
    )

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def _set_status(self, request, queryset, status):
        for alert_id in queryset.values_list("id", flat=True):
            alerts_service.alert_set_status(
                alert_id=alert_id, status=status, user_id=request.user.pk
            )
        self.message_user(request, f"{queryset.count()} alert(s) marked {status.label.lower()}.")

    @admin.action(description="Mark selected alerts as being looked into", permissions=["change"])
    def mark_looking_into(self, request, queryset):
        self._set_status(request, queryset, Alert.Status.LOOKING_INTO)

    @admin.action(description="Acknowledge selected alerts", permissions=["change"])
    def mark_acknowledged(self, request, queryset):
        self._set_status(request, queryset, Alert.Status.ACKNOWLEDGED)
