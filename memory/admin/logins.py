"""Who may change a login in the admin, and the audit of every admin change to a login, its
second factor, an organisation's membership or a care team (issue 30, step 1).

A staff login that is not a superuser (an operator) sees the logins of its organisations, but
changes one (password, e-mail, name, second factor, deletion) only when the login is wholly
inside the operator's organisations: a member of no other organisation, the admin of none, and
not itself an operator or a superuser. Otherwise the operator of one organisation could take
over a login another organisation trusts (its admin, say) by resetting its password or removing
its authenticator app. Such a login is changed by a superuser; each organisation still changes
its own membership row of it (OrganisationMembershipAdmin).

Every change, and every refused attempt, is one row (`AccessEvent`, channel "admin") in the
audit of each organisation the login is in: the organisation whose admin was targeted hears of
it, whichever organisation's operator tried.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied

from memory.conversations import audit
from memory.conversations.models import (
    AccessAction,
    AccessChannel,
    AccessOutcome,
    OrganisationMembership,
)


def login_organisation_ids(user_id) -> list[uuid.UUID]:
    """The organisations a login (by id) belongs to, in a stable order."""
    return list(
        OrganisationMembership.objects.filter(user_id=user_id)
        .order_by("organisation_id")
        .values_list("organisation_id", flat=True)
    )


def login_is_managed_by(operator, login, organisation_ids: Iterable | None) -> bool:
    """Whether `operator` may change `login` in the admin (see the module's docstring).

    `organisation_ids`: the operator's organisations (None: a superuser, who may change any)."""
    if operator.is_superuser or organisation_ids is None:
        return True
    if login is None:
        return True  # a page or action with no particular login: each row is checked on its own
    if login.is_superuser or login.is_staff:
        return False
    rows = list(
        OrganisationMembership.objects.filter(user_id=login.pk).values_list(
            "organisation_id", "is_admin"
        )
    )
    own = set(organisation_ids)
    return bool(rows) and all(org in own and not is_admin for org, is_admin in rows)


def audit_admin_change(
    request,
    *,
    action: str,
    organisation_ids: Iterable,
    object_id: object,
    outcome: str = AccessOutcome.ALLOWED,
    person_id: uuid.UUID | None = None,
) -> None:
    """One row per organisation concerned (one without an organisation when there is none: a
    new login, which superusers see); who did it is the operator's login."""
    user = request.user
    organisations = list(dict.fromkeys(organisation_ids)) or [None]
    audit.record_many(
        {
            "organisation_id": organisation_id,
            "channel": AccessChannel.ADMIN,
            "actor": f"user:{user.get_username()}"[:160],
            "user": user if user.is_authenticated else None,
            "person_id": person_id,
            "action": action,
            "object_id": object_id,
            "outcome": outcome,
        }
        for organisation_id in organisations
    )


class GuardedLoginAdmin:
    """For the admin pages that change a login or what it logs in with (its own page, its
    second-factor devices): changes and deletions only of logins the operator manages
    (`login_is_managed_by`); every change, deletion and refusal audited in each of the login's
    organisations. Bulk deletion is for superusers (it would skip the check per row).

    Put before `OrganisationScopedAdmin` (it reads `organisation_ids`)."""

    change_action = AccessAction.ADMIN_LOGIN_CHANGED
    delete_action = AccessAction.ADMIN_LOGIN_DELETED

    def login_of(self, obj):
        """The login that `obj` (a row of this page) is or belongs to."""
        return obj

    def manages(self, request, obj) -> bool:
        login = None if obj is None else self.login_of(obj)
        return login_is_managed_by(request.user, login, self.organisation_ids(request))

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self.manages(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self.manages(request, obj)

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not request.user.is_superuser:
            actions.pop("delete_selected", None)
        return actions

    def _audit_logins(self, request, action, objs, outcome=AccessOutcome.ALLOWED) -> None:
        for obj in objs:
            login = self.login_of(obj)
            audit_admin_change(
                request,
                action=action,
                organisation_ids=login_organisation_ids(login.pk) if login is not None else [],
                object_id=obj.pk,
                outcome=outcome,
            )

    def _refusals_audited(self, request, object_id, action, view):
        """Run `view`; a refusal (403) of an existing row the operator sees is audited."""
        try:
            return view()
        except PermissionDenied:
            obj = self.get_object(request, unquote(object_id)) if object_id else None
            if obj is not None:
                self._audit_logins(request, action, [obj], AccessOutcome.REFUSED)
            raise

    def change_view(self, request, object_id, form_url="", extra_context=None):
        return self._refusals_audited(
            request,
            object_id,
            self.change_action,
            lambda: super(GuardedLoginAdmin, self).change_view(
                request, object_id, form_url, extra_context
            ),
        )

    def delete_view(self, request, object_id, extra_context=None):
        return self._refusals_audited(
            request,
            object_id,
            self.delete_action,
            lambda: super(GuardedLoginAdmin, self).delete_view(request, object_id, extra_context),
        )

    def log_addition(self, request, obj, message):
        self._audit_logins(request, self.change_action, [obj])
        return super().log_addition(request, obj, message)

    def log_change(self, request, obj, message):
        self._audit_logins(
            request, getattr(request, "_clara_login_action", self.change_action), [obj]
        )
        return super().log_change(request, obj, message)

    def log_deletions(self, request, queryset):
        # Called before the deletion: the login's organisations are still known.
        self._audit_logins(request, self.delete_action, list(queryset))
        return super().log_deletions(request, queryset)


class AuditedChangesMixin:
    """Every admin addition, change and removal of a row is in its organisation's audit.

    A page names its three actions (`audit_actions`: added, changed, removed) and how a row
    reaches its organisation and person (`audited_organisation_id`, `audited_person_id`).
    """

    audit_actions: tuple[str, str, str]

    def audited_organisation_id(self, obj):
        return obj.organisation_id

    def audited_person_id(self, obj):
        return None

    def _audit_change(self, request, action: str, rows) -> None:
        for row in rows:
            audit_admin_change(
                request,
                action=action,
                organisation_ids=[self.audited_organisation_id(row)],
                object_id=row.pk,
                person_id=self.audited_person_id(row),
            )

    def log_addition(self, request, obj, message):
        self._audit_change(request, self.audit_actions[0], [obj])
        return super().log_addition(request, obj, message)

    def log_change(self, request, obj, message):
        self._audit_change(request, self.audit_actions[1], [obj])
        return super().log_change(request, obj, message)

    def log_deletions(self, request, queryset):
        self._audit_change(request, self.audit_actions[2], list(queryset))
        return super().log_deletions(request, queryset)
