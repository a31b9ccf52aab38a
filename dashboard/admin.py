"""Admin for care teams (editable) and the audit trail (read only: nobody edits history)."""

from django.contrib import admin

from dashboard.models import AuditEvent, CareTeamMembership


@admin.register(CareTeamMembership)
class CareTeamMembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "person", "role", "can_see_transcripts", "created_at"]
    list_filter = ["role", "can_see_transcripts"]
    list_select_related = ["user", "person"]
    search_fields = ["user__username", "person__display_name"]
    raw_id_fields = ["user", "person"]


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Readable by operators; no one may add, change or delete an audit row here."""

    list_display = ["at", "username", "person", "action", "object_id", "allowed"]
    list_filter = ["action", "allowed"]
    list_select_related = ["person"]
    search_fields = ["username", "object_id"]
    date_hierarchy = "at"
    show_full_result_count = False
    list_per_page = 100

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
