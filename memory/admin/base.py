"""What every admin page of the memory and dashboard apps shares: links between rows, read-only and
append-only pages, the organisation scope of staff logins, and the audit of every page that shows
a person's data."""

import json

from django.contrib import admin
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import FieldDoesNotExist, PermissionDenied, ValidationError
from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from memory.conversations import audit, tenancy
from memory.conversations.models import AccessAction, AccessChannel, AccessOutcome
from memory.core.fields import EncryptedKeyField, FindableTextField


def change_link(obj, text=None):
    """A link to the admin page of `obj` (a model instance), or the empty value."""
    if obj is None:
        return admin.site.empty_value_display
    url = reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, text if text is not None else obj)


def changelist_link(model, text, **filters):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    query = "&".join(f"{key}={value}" for key, value in filters.items())
    return format_html('<a href="{}?{}">{}</a>', url, query, text)


def short(text: str | None, length: int = 80) -> str:
    return Truncator(text or "").chars(length)


class LinksMixin:
    """List columns that link to the row's person and session pages."""

    # Not sortable: names are encrypted, and ciphertext order means nothing.
    @admin.display(description="person")
    def person_link(self, obj):
        return change_link(obj.person)

    @admin.display(description="session", ordering="session__created_at")
    def session_link(self, obj):
        return change_link(obj.session)


# --- Organisations: staff who are not superusers see only their organisations' rows ----------------


def _by(lookup: str):
    return lambda ids: Q(**{f"{lookup}__in": ids})


def _scopes() -> dict:
    """How each model reaches its organisation: a Q for a list of organisation ids."""
    from memory import models as m
    from memory.facts.namespaces import SEP
    from memory.facts.tenancy import ORG_ROOT

    members = m.OrganisationMembership.objects
    return {
        m.Organisation: _by("pk"),
        m.OrganisationMembership: _by("organisation"),
        m.Person: _by("organisation"),
        m.Home: _by("organisation"),
        m.Unit: _by("home__organisation"),
        m.Session: _by("organisation"),
        m.ApiKey: _by("organisation"),
        m.Persona: _by("organisation"),
        m.AccessEvent: _by("organisation"),
        **dict.fromkeys(
            (m.ChatMessage, m.DetectedEmotion, m.RepetitionRecord, m.NarrativeUsage),
            _by("session__organisation"),
        ),
        **dict.fromkeys(
            (
                m.CheckIn,
                m.CheckInSettings,
                m.Commitment,
                m.PendingMessage,
                m.PersonNotes,
                m.PersonTrend,
                m.RollingSummary,
                m.StreamSummary,
                m.SummarySpine,
                m.TurnLock,
            ),
            _by("person__organisation"),
        ),
        # An escalation in an anonymous session has no person yet, but its session has one.
        m.Alert: lambda ids: (
            Q(person__organisation__in=ids) | Q(person__isnull=True, session__organisation__in=ids)
        ),
        # The story library (no person) is everyone's; a person's own stories are their
        # organisation's.
        m.Narrative: lambda ids: Q(person__organisation__in=ids) | Q(person__isnull=True),
        # A person's memories, and the organisation's own namespaces ("org", <id>, ...).
        m.Memory: lambda ids: (
            Q(person__organisation__in=ids)
            | Q(scope__in=[SEP.join((ORG_ROOT, str(i))) for i in ids])
        ),
        # Logins: those of the organisations (a subquery: a login may be in several).
        get_user_model(): lambda ids: Q(
            pk__in=members.filter(organisation_id__in=ids).values("user_id")
        ),
    }


def organisation_scope(queryset: QuerySet, organisation_ids, lookup=None) -> QuerySet:
    """`queryset` cut to the rows of these organisations. A model with no known way to its
    organisation gives nothing: a page added without a scope shows no one's data."""
    if organisation_ids is None:
        return queryset
    if isinstance(lookup, str):
        lookup = _by(lookup)
    scope = lookup or _scopes().get(queryset.model)
    if scope is None:
        return queryset.none()
    return queryset.filter(scope(list(organisation_ids)))


def _field_at(model, path: str):
    """The model field at the end of a search path ("person__display_name"), or None."""
    field = None
    for name in path.split("__"):
        try:
            field = model._meta.get_field(name)
        except FieldDoesNotExist:
            return None
        model = field.related_model or model
    return field


class OrganisationScopedAdmin:
    """For every memory and dashboard admin page: a superuser sees every organisation's rows;
    any other staff login only its own organisations' (OrganisationMembership): in lists, search
    results, object pages, actions and the choices of every foreign key. Another organisation's
    row is answered as a missing one.

    `organisation_lookup`: the path from this page's model to its organisation
    ("person__organisation"), for models not in `_scopes()`.

    The audit of reads, one rule for every page: a page whose model holds a person's data (a
    person, or a row with a foreign key to one: `holds_person_data`) writes AccessEvent rows
    (memory.conversations.audit) for its list and its object pages. An object page: one row
    (allowed; refused without the permission; not found for an unknown or another
    organisation's id); its history and delete confirmation likewise. A list: one row per
    person (and organisation) on the page. Rows that
    belong to no one (a story of the shared library) write nothing.

    `shows_messages`: the views ("list", "change") that show what a person said; they are
    recorded as ADMIN_MESSAGES with the bare id, the others as ADMIN_READ with
    "<model>:<id>" (the list: "<model>").
    """

    organisation_lookup: str | None = None
    shows_messages: tuple[str, ...] = ()

    def organisation_ids(self, request) -> list | None:
        """None for a superuser (everything); otherwise the login's organisations."""
        if request.user.is_superuser:
            return None
        if not hasattr(request, "_clara_organisation_ids"):
            request._clara_organisation_ids = tenancy.user_organisation_ids(request.user)
        return request._clara_organisation_ids

    # The admin's own history (django_admin_log, "Recent actions") names each row it logs as the
    # row's str(): a person's name, a story's title, in plaintext. For a row that holds a
    # person's data it is named by its kind and id instead (the history still links to it).
    def log_addition(self, request, obj, message):
        if not holds_person_data(self.model):
            return super().log_addition(request, obj, message)
        return self._log_by_kind(request, [obj], ADDITION, message)[0]

    def log_change(self, request, obj, message):
        if not holds_person_data(self.model):
            return super().log_change(request, obj, message)
        return self._log_by_kind(request, [obj], CHANGE, message)[0]

    def log_deletions(self, request, queryset):
        if not holds_person_data(self.model):
            return super().log_deletions(request, queryset)
        return self._log_by_kind(request, list(queryset), DELETION)

    @staticmethod
    def _log_by_kind(request, objs, action_flag, message="") -> list[LogEntry]:
        """Django's log entries of `objs`, each named "<kind> <id>" instead of its str()."""
        if isinstance(message, list):
            message = json.dumps(message)
        entries = [
            LogEntry(
                user_id=request.user.pk,
                content_type_id=ContentType.objects.get_for_model(obj, for_concrete_model=False).pk,
                object_id=str(obj.pk),
                object_repr=f"{obj._meta.verbose_name} {obj.pk}"[:200],
                action_flag=action_flag,
                change_message=message,
            )
            for obj in objs
        ]
        for entry in entries:
            entry.save()
        return entries

    def get_queryset(self, request):
        return organisation_scope(
            super().get_queryset(request), self.organisation_ids(request), self.organisation_lookup
        )

    def get_search_results(self, request, queryset, search_term):
        """Django's search, plus the rows whose encrypted-but-matchable search fields (a
        person's name: `FindableTextField`; a memory key: `EncryptedKeyField`) equal the whole
        term exactly. Substrings of them cannot match (the column holds no plaintext); the
        exact term is hashed (a name) or sealed (a key) and compared."""
        results, duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        if not term:
            return results, duplicates
        exact = Q()
        for path in self.get_search_fields(request):
            path = path.lstrip("^=@")
            if isinstance(_field_at(queryset.model, path), EncryptedKeyField | FindableTextField):
                exact |= Q(**{path: term})
        if exact:
            results = results | queryset.filter(exact)
        return results, duplicates

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        formfield = super().formfield_for_foreignkey(db_field, request, **kwargs)
        ids = self.organisation_ids(request)
        if formfield is not None and ids is not None and hasattr(formfield, "queryset"):
            formfield.queryset = organisation_scope(formfield.queryset, ids)
        return formfield

    # --- The audit of reads ---

    def audit_action(self, view: str) -> str | None:
        """What opening `view` ("list", "change", "history" or "delete") of this page is
        recorded as; None: not audited (the model holds no person's data)."""
        if not holds_person_data(self.model):
            return None
        if view in self.shows_messages:
            return AccessAction.ADMIN_MESSAGES
        return AccessAction.ADMIN_READ

    def _audit_object_id(self, action: str, object_id: object = "") -> str:
        if action == AccessAction.ADMIN_MESSAGES:
            return str(object_id or "")
        name = self.model._meta.model_name
        return f"{name}:{object_id}" if object_id != "" else name

    def _audit_read(self, request, action: str, outcome: str, rows: list[tuple]) -> None:
        user = request.user
        audit.record_many(
            {
                "organisation_id": organisation_id,
                "channel": AccessChannel.ADMIN,
                "actor": f"user:{user.get_username()}",
                "user": user if user.is_authenticated else None,
                "person_id": person_id,
                "action": action,
                "object_id": self._audit_object_id(action, object_id),
                "outcome": outcome,
            }
            for organisation_id, person_id, object_id in rows
        )

    def changelist_view(self, request, extra_context=None):
        action = self.audit_action("list")
        if action is None:
            return super().changelist_view(request, extra_context)
        try:
            response = super().changelist_view(request, extra_context)
        except PermissionDenied:
            self._audit_read(request, action, AccessOutcome.REFUSED, [(None, None, "")])
            raise
        cl = (getattr(response, "context_data", None) or {}).get("cl")
        if cl is not None and response.status_code == 200:
            # The page's rows (the template renders these same, already fetched, objects).
            shown = [t for t in dict.fromkeys(audit_targets(cl.result_list)) if t != (None, None)]
            self._audit_read(request, action, AccessOutcome.ALLOWED, [(*t, "") for t in shown])
        return response

    def change_view(self, request, object_id, form_url="", extra_context=None):
        return self._audited_object_view(
            request,
            object_id,
            lambda: super(OrganisationScopedAdmin, self).change_view(
                request, object_id, form_url, extra_context
            ),
        )

    # A row's history and its delete confirmation show it too (its name, what hangs off it).
    def history_view(self, request, object_id, extra_context=None):
        return self._audited_object_view(
            request,
            object_id,
            lambda: super(OrganisationScopedAdmin, self).history_view(
                request, object_id, extra_context
            ),
            view="history",
        )

    def delete_view(self, request, object_id, extra_context=None):
        return self._audited_object_view(
            request,
            object_id,
            lambda: super(OrganisationScopedAdmin, self).delete_view(
                request, object_id, extra_context
            ),
            view="delete",
        )

    def _audited_object_view(self, request, object_id, show, view: str = "change"):
        action = self.audit_action(view)
        if action is None:
            return show()
        try:
            obj = self.get_object(request, unquote(object_id))
        except (ValueError, ValidationError):
            obj = None  # a malformed id: Django answers it as a missing row
        target = audit_targets([obj])[0] if obj is not None else (None, None)
        try:
            response = show()
        except PermissionDenied:
            self._audit_read(request, action, AccessOutcome.REFUSED, [(*target, object_id)])
            raise
        if obj is None:
            self._audit_read(request, action, AccessOutcome.NOT_FOUND, [(None, None, object_id)])
        elif response.status_code == 200 and target != (None, None):
            self._audit_read(request, action, AccessOutcome.ALLOWED, [(*target, object_id)])
        return response


class ReadOnlyAdmin(OrganisationScopedAdmin, LinksMixin, admin.ModelAdmin):
    """Rows only the product writes: operators may look, never add, change or delete."""

    # Large tables: no second full COUNT(*) when a filter or search is applied.
    show_full_result_count = False
    list_per_page = 50

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class AppendOnlyAdmin(ReadOnlyAdmin):
    """History the product only ever appends to."""

    date_hierarchy = "timestamp"
    ordering = ("-timestamp",)


# --- Which rows hold a person's data, and whose ----------------------------------------------


def _person_fields(model) -> list:
    from memory.models import Person

    return [
        field
        for field in model._meta.concrete_fields
        if field.many_to_one and field.related_model is Person
    ]


def holds_person_data(model) -> bool:
    """Whether a page of `model` shows a person's data: a person (name, profile), or a row
    with a foreign key to one or to one of their sessions (whose list and page show at least
    the person's decrypted name)."""
    from memory.models import Person, Session

    return model is Person or any(
        field.many_to_one and field.related_model in (Person, Session)
        for field in model._meta.concrete_fields
    )


def audit_targets(objs) -> list[tuple]:
    """(organisation id, person id) of each row: a person, or a row of a person or a session.

    At most two queries for a whole page (the organisations of people and of sessions not
    already on the rows), so a list costs the same however many rows it shows.
    """
    from memory.models import Person, Session

    found = []
    for obj in objs:
        if isinstance(obj, Person):
            found.append([obj.organisation_id, obj.pk, None])
            continue
        person_id = next(
            (getattr(obj, f.attname) for f in _person_fields(type(obj)) if getattr(obj, f.attname)),
            None,
        )
        found.append(
            [getattr(obj, "organisation_id", None), person_id, getattr(obj, "session_id", None)]
        )
    people = {t[1] for t in found if t[0] is None and t[1] is not None}
    sessions = {t[2] for t in found if t[0] is None and t[1] is None and t[2] is not None}
    people_orgs = dict(
        Person.objects.filter(pk__in=people).values_list("pk", "organisation_id") if people else ()
    )
    session_orgs = dict(
        Session.objects.filter(pk__in=sessions).values_list("pk", "organisation_id")
        if sessions
        else ()
    )
    for t in found:
        if t[0] is None:
            t[0] = people_orgs.get(t[1]) if t[1] is not None else session_orgs.get(t[2])
    return [(organisation_id, person_id) for organisation_id, person_id, _ in found]
