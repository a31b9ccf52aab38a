"""Admin for care teams (editable) and the audit trail (read only: nobody edits history).

Both are scoped like every admin page (memory.admin.base.OrganisationScopedAdmin): staff who are
not superusers see only their organisations' care teams and audit rows.
"""

from django import forms
from django.contrib import admin

from dashboard.models import AuditEvent, CareTeamMembership
from memory.admin.base import OrganisationScopedAdmin
from memory.admin.logins import AuditedChangesMixin
from memory.models import AccessAction, OrganisationMembership


class CareTeamMembershipForm(forms.ModelForm):
    """A care team is within its person's organisation: only that organisation's logins."""

    class Meta:
        model = CareTeamMembership
        fields = ("user", "person", "role", "can_see_transcripts")

    # The operator saving the form (set by CareTeamMembershipAdmin.get_form).
    operator = None

    def clean(self):
        data = super().clean()
        user, person = data.get("user"), data.get("person")
        operator = self.operator
        if (
            operator is not None
            and not operator.is_superuser
            and user is not None
            and user.pk == operator.pk
        ):
            # No one grants themselves a right: another admin puts them in a team, or changes
            # their role.
            self.add_error("user", "Another admin must put you in a care team or change your role.")
        if (
            user is not None
            and person is not None
            and not OrganisationMembership.objects.filter(
                user_id=user.pk, organisation_id=person.organisation_id
            ).exists()
        ):
            self.add_error("user", "This login is not in the person's organisation.")
        return data


@admin.register(CareTeamMembership)
class CareTeamMembershipAdmin(AuditedChangesMixin, OrganisationScopedAdmin, admin.ModelAdmin):
    audit_actions = (
        AccessAction.ADMIN_TEAM_ADDED,
        AccessAction.ADMIN_TEAM_CHANGED,
        AccessAction.ADMIN_TEAM_REMOVED,
    )
    organisation_lookup = "person__organisation"
    form = CareTeamMembershipForm
    list_display = ["user", "person", "role", "can_see_transcripts", "created_at"]
    list_filter = ["role", "can_see_transcripts"]
    list_select_related = ["user", "person"]
    search_fields = ["user__username", "person__display_name"]
    raw_id_fields = ["user", "person"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        form.operator = request.user
        return form

    def has_change_permission(self, request, obj=None):
        # Never the holder of the row: a team admin without the transcript right does not grant
        # it to itself here either (the dashboard's care-team page has the same rule).
        if obj is not None and obj.user_id == request.user.pk and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)

    def audited_organisation_id(self, obj):
        return obj.person.organisation_id

    def audited_person_id(self, obj):
        return obj.person_id


@admin.register(AuditEvent)
class AuditEventAdmin(OrganisationScopedAdmin, admin.ModelAdmin):
    """Readable by operators; no one may add, change or delete an audit row here."""

    organisation_lookup = "organisation"
    list_display = ["at", "username", "organisation", "person", "action", "object_id", "allowed"]
    list_filter = ["action", "allowed"]
    list_select_related = ["person", "organisation"]
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


# Second factors (their secrets are never shown): dashboard/second_factor/admin.py.
from dashboard.second_factor import admin as second_factor_admin  # noqa: E402, F401
