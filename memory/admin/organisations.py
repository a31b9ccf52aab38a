"""Organisations, their logins, personas and memories, and the audit of disclosures.

The admin is the platform operator's: superusers create and edit organisations (slug, name,
contact email) and see every row; staff logins that are not superusers see only their own
organisations' rows (memory.admin.base.OrganisationScopedAdmin), here as on every other page.
"""

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from memory.admin.base import OrganisationScopedAdmin, ReadOnlyAdmin
from memory.admin.logins import AuditedChangesMixin, GuardedLoginAdmin
from memory.facts import tenancy as facts_tenancy
from memory.facts import vector_pg
from memory.models import (
    AccessAction,
    AccessEvent,
    Memory,
    Organisation,
    OrganisationMembership,
    Persona,
)

# Set on an organisation's change page (memory/retention.py); a new one starts with the defaults.
RETENTION_FIELDS = ("transcript_retention_days", "inactive_after_days")


@admin.register(Organisation)
class OrganisationAdmin(OrganisationScopedAdmin, admin.ModelAdmin):
    """Superusers create and edit organisations; other staff only see their own."""

    list_display = ("slug", "name", "contact_email", "created_at")
    search_fields = ("slug", "name")
    ordering = ("slug",)
    fields = (
        "slug",
        "name",
        "contact_email",
        "transcript_retention_days",
        "inactive_after_days",
        "created_at",
    )
    readonly_fields = ("created_at",)

    def get_fields(self, request, obj=None):
        if obj is None:
            return [f for f in self.fields if f not in RETENTION_FIELDS]
        return self.fields

    def has_add_permission(self, request):
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        # Everything an organisation owns points at it (PROTECT): it is never deleted here.
        return False


class OrganisationMembershipForm(forms.ModelForm):
    class Meta:
        model = OrganisationMembership
        fields = ("organisation", "user", "is_admin")


@admin.register(OrganisationMembership)
class OrganisationMembershipAdmin(AuditedChangesMixin, OrganisationScopedAdmin, admin.ModelAdmin):
    audit_actions = (
        AccessAction.ADMIN_MEMBER_ADDED,
        AccessAction.ADMIN_MEMBER_CHANGED,
        AccessAction.ADMIN_MEMBER_REMOVED,
    )
    """Which logins belong to which organisation, and who is its admin (reads its audit)."""

    form = OrganisationMembershipForm
    list_display = ("user", "organisation", "is_admin", "created_at")
    list_select_related = ("user", "organisation")
    list_filter = ("is_admin", ("organisation", admin.RelatedOnlyFieldListFilter))
    search_fields = ("user__username", "organisation__slug")
    raw_id_fields = ("user",)

    def get_readonly_fields(self, request, obj=None):
        # A row is one login in one organisation: moving it would change two organisations'
        # members at once. Take it out and add it where it belongs instead.
        return ("organisation", "user") if obj is not None else ()

    def has_change_permission(self, request, obj=None):
        # No one makes themselves their organisation's admin: another operator, or a superuser.
        if obj is not None and obj.user_id == request.user.pk and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)


@admin.register(Persona)
class PersonaAdmin(OrganisationScopedAdmin, admin.ModelAdmin):
    """An organisation's companion personas. Read only: the memory policy is changed through the
    API (PUT /personas/{slug}), whose rules keep anyone in a care team on dementia-safe care."""

    list_display = ("slug", "display_name", "memory_policy", "organisation")
    list_select_related = ("organisation",)
    list_filter = ("memory_policy", ("organisation", admin.RelatedOnlyFieldListFilter))
    search_fields = ("slug", "display_name")
    readonly_fields = ("organisation", "slug", "display_name", "memory_policy")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Memory)
class MemoryAdmin(ReadOnlyAdmin):
    """What is remembered, as operators may see it: where and what kind, never the content (the
    care team reviews that on the dashboard)."""

    list_display = (
        "created_at",
        "person_link",
        "shown_namespace",
        "key",
        "type",
        "status",
        "confirmed",
        "source",
    )
    list_select_related = ("person",)
    list_filter = ("type", "status", "confirmed", "source")
    search_fields = ("=person__id", "key")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    fields = (
        "id",
        "person",
        "shown_namespace",
        "key",
        "type",
        "status",
        "confirmed",
        "confirmed_at",
        "source",
        "importance",
        "pinned",
        "persona",
        "expires_at",
        "use_count",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields
    # Says above the list which search path this process takes (memory/facts/vector_pg.py).
    change_list_template = "admin/memory/memory/change_list.html"

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "vector_search": vector_pg.status()}
        return super().changelist_view(request, extra_context)

    @admin.display(description="namespace")
    def shown_namespace(self, obj):
        # As the organisation names it: an organisation's own namespaces lose ("org", <id>).
        return " / ".join(facts_tenancy.shown(obj.namespace_tuple))


@admin.register(AccessEvent)
class AccessEventAdmin(ReadOnlyAdmin):
    """The audit of disclosures by API keys (REST and MCP) and by operators: read only."""

    list_display = (
        "at",
        "actor",
        "channel",
        "organisation",
        "person_link",
        "action",
        "object_id",
        "outcome",
    )
    list_select_related = ("organisation", "person")
    list_filter = (
        "channel",
        "action",
        "outcome",
        ("organisation", admin.RelatedOnlyFieldListFilter),
    )
    search_fields = ("actor", "=object_id", "=person__id")
    date_hierarchy = "at"
    ordering = ("-at",)
    list_per_page = 100


# --- Logins: staff see their own organisations' ------------------------------------------------

User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class OrganisationUserAdmin(GuardedLoginAdmin, OrganisationScopedAdmin, UserAdmin):
    """Django's user admin, scoped like every other page. Only superusers make logins (a new
    login belongs to no organisation yet) and grant privileges. An operator changes only the
    logins wholly inside its organisations (memory/admin/logins.py); every change is audited."""

    def has_add_permission(self, request):
        return request.user.is_superuser

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        if request.user.is_superuser:
            return fields
        return (*fields, "is_superuser", "is_staff", "groups", "user_permissions")

    def user_change_password(self, request, id, form_url=""):
        request._clara_login_action = AccessAction.ADMIN_PASSWORD_SET
        return self._refusals_audited(
            request,
            id,
            AccessAction.ADMIN_PASSWORD_SET,
            lambda: super(OrganisationUserAdmin, self).user_change_password(request, id, form_url),
        )
