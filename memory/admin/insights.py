"""What the jobs computed: summaries, trends and alerts."""

from django.contrib import admin

from memory.admin.base import LinksMixin, OrganisationScopedAdmin, ReadOnlyAdmin, short

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
    """The caregiver alert outbox, read only. Alerts are raised by the system and claimed and
    resolved on the dashboard by people their organisation allows to act (an operator is not
    one of them: the dashboard's rule, dashboard/alerting/rights.py)."""

    show_full_result_count = False
    list_per_page = 50
    list_display = (
        "created_at",
        "kind",
        "status",
        "person_link",
        "session_link",
        "claimed_at",
        "resolved_at",
        "outcome",
    )
    list_select_related = ("person", "session")
    list_filter = ("status", "kind", "outcome")
    search_fields = ("=person__id", "person__display_name", "dedupe_key")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    readonly_fields = (
        "person",
        "session",
        "kind",
        "detail",
        "dedupe_key",
        "created_at",
        "status",
        "claimed_by",
        "claimed_at",
        "resolved_by",
        "resolved_at",
        "outcome",
    )
    # The outcome's note is about the person: on the dashboard, for the care team.
    exclude = ("outcome_note",)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
