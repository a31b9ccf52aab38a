"""Operators' view of second factors: who has one, and removing a lost one (the login then
enrols again at its next login). Secrets and codes are never shown or edited here, and nothing
is added here (enrolment is the login's own, on the dashboard).

django-otp's own device pages are taken out of the admin: they edit plaintext devices, which
nothing reads any more (dashboard/second_factor/models.py)."""

from django.contrib import admin
from django.db.models import Q
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from dashboard.second_factor.models import AuthenticatorDevice, RecoveryDevice
from memory.admin.base import OrganisationScopedAdmin
from memory.admin.logins import GuardedLoginAdmin
from memory.models import AccessAction, OrganisationMembership

for legacy in (TOTPDevice, StaticDevice):
    if admin.site.is_registered(legacy):
        admin.site.unregister(legacy)


def _logins_of(ids) -> Q:
    members = OrganisationMembership.objects.filter(organisation_id__in=ids)
    return Q(user_id__in=members.values("user_id"))


class _DeviceAdmin(GuardedLoginAdmin, OrganisationScopedAdmin, admin.ModelAdmin):
    """Removing a device is removing a login's second factor: only of a login the operator
    manages (memory/admin/logins.py), audited in each of the login's organisations."""

    organisation_lookup = staticmethod(_logins_of)
    delete_action = AccessAction.ADMIN_DEVICE_DELETED
    list_display = ["user", "name", "confirmed", "created_at", "last_used_at"]
    list_filter = ["confirmed"]
    list_select_related = ["user"]
    search_fields = ["user__username"]
    fields = ["user", "name", "confirmed", "created_at", "last_used_at"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def login_of(self, obj):
        return obj.user


@admin.register(AuthenticatorDevice)
class AuthenticatorDeviceAdmin(_DeviceAdmin):
    pass


@admin.register(RecoveryDevice)
class RecoveryDeviceAdmin(_DeviceAdmin):
    pass
