"""Commitments the person or Clara made."""

from django.contrib import admin

from memory.admin.base import LinksMixin, OrganisationScopedAdmin, short
from memory.facts import commitments as commitments_service
from memory.models import Commitment


@admin.register(Commitment)
class CommitmentAdmin(OrganisationScopedAdmin, LinksMixin, admin.ModelAdmin):
    """Promises and plans read from conversations. For caregivers only, never the prompt."""

    show_full_result_count = False
    list_per_page = 50
    list_display = ("created_at", "person_link", "kind", "short_text", "due_at", "status")
    list_select_related = ("person",)
    list_filter = ("status", "kind", "persona")
    # Not the text: it may be stored encrypted, so the database cannot search it.
    search_fields = ("=person__id", "person__display_name")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    actions = ["mark_done", "mark_dropped"]
    readonly_fields = (
        "person",
        "persona",
        "kind",
        "text",
        "due_at",
        "status",
        "source_message",
        "session",
        "created_at",
        "closed_at",
    )

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="text")
    def short_text(self, obj):
        return short(obj.text)

    def _close(self, request, queryset, status):
        ids = list(queryset.values_list("id", flat=True))
        for commitment_id in ids:
            commitments_service.commitment_close(commitment_id=commitment_id, status=status)
        self.message_user(request, f"{len(ids)} commitment(s) marked {status.label.lower()}.")

    @admin.action(description="Mark selected commitments as done", permissions=["change"])
    def mark_done(self, request, queryset):
        self._close(request, queryset, Commitment.Status.DONE)

    @admin.action(description="Mark selected commitments as dropped", permissions=["change"])
    def mark_dropped(self, request, queryset):
        self._close(request, queryset, Commitment.Status.DROPPED)
