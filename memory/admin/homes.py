"""An organisation's homes and their units (wings, floors), scoped like every page: staff who are
not superusers see and change only their organisations' (memory.admin.base).

Names only: homes and units are the organisation's structure, not a person's data, so these
pages write no read audit (Django's own history records each change). Who lives in a unit is
changed on the dashboard's "Homes and units" page (memory/conversations/homes.py), which keeps
the care teams a unit gives in step; a unit with people in it is not deleted (PROTECT).
"""

from django.contrib import admin

from memory.admin.base import OrganisationScopedAdmin
from memory.models import Home, Unit


class UnitInline(admin.TabularInline):
    model = Unit
    fields = ("name", "created_at")
    readonly_fields = ("created_at",)
    extra = 0


@admin.register(Home)
class HomeAdmin(OrganisationScopedAdmin, admin.ModelAdmin):
    list_display = ("name", "organisation", "created_at")
    list_select_related = ("organisation",)
    list_filter = (("organisation", admin.RelatedOnlyFieldListFilter),)
    search_fields = ("name",)
    fields = ("organisation", "name", "created_at")
    readonly_fields = ("created_at",)
    inlines = (UnitInline,)

    def get_readonly_fields(self, request, obj=None):
        # A home stays in its organisation: its units' people and teams are that organisation's.
        return ("organisation", "created_at") if obj is not None else ("created_at",)


@admin.register(Unit)
class UnitAdmin(OrganisationScopedAdmin, admin.ModelAdmin):
    list_display = ("name", "home", "created_at")
    list_select_related = ("home",)
    search_fields = ("name", "home__name")
    fields = ("home", "name", "created_at")
    readonly_fields = ("created_at",)

    def get_readonly_fields(self, request, obj=None):
        # A unit stays in its home (moving it could take it to another organisation).
        return ("home", "created_at") if obj is not None else ("created_at",)
