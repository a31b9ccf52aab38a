"""The operators' admin for the conversation memory.

People and sessions can be looked after here but never deleted (their history hangs off them).
Messages, emotions, repetition records and narrative usage are append-only history: view only.
API keys are created with `manage.py create_api_key NAME` and only revoked here.
Every changelist selects its related rows up front, so a page costs the same few queries
however many rows it shows.
"""

from django import forms
from django.contrib import admin, messages
from django.db.models import Count
from django.forms.models import BaseInlineFormSet
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from memory import services
from memory.models import (
    Alert,
    ApiKey,
    ChatMessage,
    DetectedEmotion,
    Emotion,
    Narrative,
    NarrativeUsage,
    Person,
    PersonTrend,
    QuestionType,
    RepetitionRecord,
    RollingSummary,
    Session,
    SummarySpine,
)

admin.site.site_header = "Clara Memory"
admin.site.site_title = "Clara Memory admin"
admin.site.index_title = "Conversation memory"

# The session page shows this many of its latest messages; the full list is one click away.
SESSION_PAGE_MESSAGES = 50


def _change_link(obj, text=None):
    """A link to the admin page of `obj` (a model instance), or the empty value."""
    if obj is None:
        return admin.site.empty_value_display
    url = reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, text if text is not None else obj)


def _changelist_link(model, text, **filters):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    query = "&".join(f"{key}={value}" for key, value in filters.items())
    return format_html('<a href="{}?{}">{}</a>', url, query, text)


def _short(text: str | None, length: int = 80) -> str:
    return Truncator(text or "").chars(length)


class LinksMixin:
    """List columns that link to the row's person and session pages."""

    @admin.display(description="person", ordering="person__display_name")
    def person_link(self, obj):
        return _change_link(obj.person)

    @admin.display(description="session", ordering="session__created_at")
    def session_link(self, obj):
        return _change_link(obj.session)


class ReadOnlyAdmin(LinksMixin, admin.ModelAdmin):
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


# --- People and sessions ------------------------------------------------------------------


@admin.register(Person)
class PersonAdmin(admin.ModelAdmin):
    list_display = (
        "__str__",
        "status",
        "last_active_at",
        "created_at",
        "session_count",
        "preferred_name",
    )
    list_filter = ("status",)
    search_fields = ("display_name", "=id")
    date_hierarchy = "last_active_at"
    ordering = ("-last_active_at",)
    fields = (
        "id",
        "display_name",
        "status",
        "caregiver_context",
        "created_at",
        "last_active_at",
        "records",
    )
    readonly_fields = ("id", "created_at", "last_active_at", "records")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_session_count=Count("sessions"))

    def has_add_permission(self, request):
        # A person appears when the bot first talks with them, under the bot's own user id.
        return False

    def has_delete_permission(self, request, obj=None):
        # Their sessions and messages point at them (PROTECT): set the status to archived instead.
        return False

    @admin.display(description="sessions", ordering="_session_count")
    def session_count(self, obj):
        return _changelist_link(Session, obj._session_count, person=obj.pk)

    @admin.display(description="preferred name")
    def preferred_name(self, obj):
        return (obj.caregiver_context or {}).get("preferredName", "")

    @admin.display(description="records")
    def records(self, obj):
        if obj.pk is None:
            return admin.site.empty_value_display
        return format_html(
            "{} · {} · {}",
            _changelist_link(Session, "sessions", person=obj.pk),
            _changelist_link(ChatMessage, "messages", person=obj.pk),
            _changelist_link(DetectedEmotion, "emotions", person=obj.pk),
        )


class LatestMessagesFormSet(BaseInlineFormSet):
    """Only the session's latest messages, oldest first: a long session must not load whole."""

    def get_queryset(self):
        if not hasattr(self, "_latest_messages"):
            first_shown = self.instance.message_count - SESSION_PAGE_MESSAGES
            self._latest_messages = super().get_queryset().filter(sequence_number__gt=first_shown)
        return self._latest_messages


class ChatMessageInline(admin.TabularInline):
    model = ChatMessage
    formset = LatestMessagesFormSet
    fields = (
        "sequence_number",
        "role",
        "content",
        "emotion",
        "intent",
        "narrative_id",
        "timestamp",
    )
    readonly_fields = fields
    ordering = ("sequence_number",)
    extra = 0
    can_delete = False
    show_change_link = True
    verbose_name_plural = f"messages (the latest {SESSION_PAGE_MESSAGES})"

    def get_queryset(self, request):
        # The emotion read from each of the person's messages, shown (and linked) beside it.
        return super().get_queryset(request).select_related("emotion")

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Session)
class SessionAdmin(LinksMixin, admin.ModelAdmin):
    list_display = (
        "id",
        "person_link",
        "status",
        "created_at",
        "last_activity_at",
        "message_count",
        "dominant_emotion",
        "escalation_triggered",
    )
    list_select_related = ("person",)
    list_filter = ("status", "escalation_triggered", "dominant_emotion")
    search_fields = ("=id", "=person__id", "person__display_name")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    # Everything on a session is kept consistent by the services (sequence numbers, the person
    # copied onto every message, the summary): operators close sessions with the action below.
    fields = (
        "id",
        "person",
        "status",
        "created_at",
        "last_activity_at",
        "ended_at",
        "duration",
        "message_count",
        "dominant_emotion",
        "escalation_triggered",
        "session_summary",
        "records",
    )
    readonly_fields = fields
    inlines = (ChatMessageInline,)
    actions = ("close_sessions",)

    def has_add_permission(self, request):
        # Sessions are opened by the bot (POST /api/v1/sessions).
        return False

    def has_delete_permission(self, request, obj=None):
        # Messages and emotions point at the session (PROTECT): sessions are never deleted.
        return False

    @admin.display(description="duration")
    def duration(self, obj):
        minutes, seconds = divmod(round(obj.duration_seconds()), 60)
        return f"{minutes} min {seconds} s"

    @admin.display(description="records")
    def records(self, obj):
        return format_html(
            "{} · {} · {} · {}",
            _changelist_link(ChatMessage, "all messages", session=obj.pk),
            _changelist_link(DetectedEmotion, "emotions", session=obj.pk),
            _changelist_link(RepetitionRecord, "repetitions", session=obj.pk),
            _changelist_link(NarrativeUsage, "narratives", session=obj.pk),
        )

    @admin.action(description="Close selected sessions", permissions=["change"])
    def close_sessions(self, request, queryset):
        active = list(queryset.filter(status=Session.Status.ACTIVE).values_list("id", flat=True))
        for session_id in active:
            services.session_close(session_id=session_id)
        self.message_user(request, f"Closed {len(active)} session(s).", messages.SUCCESS)


# --- Append-only history --------------------------------------------------------------------


@admin.register(ChatMessage)
class ChatMessageAdmin(AppendOnlyAdmin):
    list_display = (
        "timestamp",
        "session_link",
        "sequence_number",
        "role",
        "short_content",
        "person_link",
        "intent",
        "narrative_id",
    )
    list_select_related = ("session", "person")
    list_filter = ("role", ("narrative_id", admin.EmptyFieldListFilter))
    search_fields = ("content", "=session__id", "=person__id", "person__display_name")
    ordering = ("-timestamp", "-sequence_number")

    @admin.display(description="content")
    def short_content(self, obj):
        return _short(obj.content)


@admin.register(DetectedEmotion)
class DetectedEmotionAdmin(AppendOnlyAdmin):
    list_display = (
        "timestamp",
        "emotion",
        "distress_score",
        "confidence",
        "trajectory",
        "message_text",
        "session_link",
        "person_link",
    )
    list_select_related = ("session", "person", "message")
    list_filter = ("emotion", "trajectory")
    search_fields = ("=session__id", "=person__id", "person__display_name")

    @admin.display(description="message")
    def message_text(self, obj):
        return _change_link(obj.message, _short(obj.message.content, 60))


class RepeatedFilter(admin.SimpleListFilter):
    title = "repeat"
    parameter_name = "repeated"

    def lookups(self, request, model_admin):
        return (("yes", "Repeats an earlier message"), ("no", "First time this session"))

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(repeat_count__gt=0)
        if self.value() == "no":
            return queryset.filter(repeat_count=0)
        return queryset


@admin.register(RepetitionRecord)
class RepetitionRecordAdmin(AppendOnlyAdmin):
    list_display = (
        "timestamp",
        "question_type",
        "repeat_count",
        "short_message",
        "fingerprint",
        "session_link",
        "person_link",
    )
    list_select_related = ("session", "person")
    list_filter = ("question_type", RepeatedFilter)
    search_fields = (
        "original_message",
        "fingerprint",
        "=session__id",
        "=person__id",
        "person__display_name",
    )

    @admin.display(description="message")
    def short_message(self, obj):
        return _short(obj.original_message, 60)


@admin.register(NarrativeUsage)
class NarrativeUsageAdmin(AppendOnlyAdmin):
    list_display = (
        "timestamp",
        "narrative_id",
        "category",
        "mode",
        "emotion_at_usage",
        "session_link",
        "person_link",
    )
    list_select_related = ("session", "person")
    list_filter = ("mode", "category", "emotion_at_usage")
    search_fields = ("narrative_id", "=session__id", "=person__id", "person__display_name")


# --- API keys ---------------------------------------------------------------------------------


class LiveFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return (("live", "Live"), ("revoked", "Revoked"))

    def queryset(self, request, queryset):
        if self.value() == "live":
            return queryset.filter(revoked_at__isnull=True)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "created_at", "last_used_at", "revoked_at", "live")
    list_filter = (LiveFilter,)
    search_fields = ("name", "=prefix")
    ordering = ("-created_at",)
    # key_hash is never shown: it is not secret, but there is nothing in it for an operator.
    fields = ("name", "prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "created_at", "last_used_at", "revoked_at")
    actions = ("revoke_keys",)

    def has_add_permission(self, request):
        # Keys are made by `manage.py create_api_key NAME`, the only place the raw key is shown.
        return False

    def has_delete_permission(self, request, obj=None):
        # A revoked key stays on record; revoking is what stops it working.
        return False

    @admin.display(description="live", boolean=True)
    def live(self, obj):
        return obj.revoked_at is None

    @admin.action(description="Revoke selected keys", permissions=["change"])
    def revoke_keys(self, request, queryset):
        keys = list(queryset.filter(revoked_at__isnull=True))
        for key in keys:
            services.api_key_revoke(key=key)
        self.message_user(request, f"Revoked {len(keys)} key(s).", messages.SUCCESS)


# --- Narrative library --------------------------------------------------------------------------


class NarrativeForm(forms.ModelForm):
    """Keeps the JSON lists to known values, so ranking never meets a misspelt emotion."""

    class Meta:
        model = Narrative
        fields = (
            "id",
            "title",
            "category",
            "length",
            "text",
            "target_emotions",
            "question_types",
            "theme_tags",
            "person",
            "active",
        )

    @staticmethod
    def _known(value, allowed, what):
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise forms.ValidationError(f"A list of {what}, e.g. {sorted(allowed)[:2]}.")
        unknown = sorted(set(value) - set(allowed))
        if unknown:
            raise forms.ValidationError(
                f"Unknown {what}: {', '.join(unknown)}. Use: {', '.join(sorted(allowed))}."
            )
        return value

    def clean_target_emotions(self):
        return self._known(self.cleaned_data["target_emotions"], Emotion.values, "emotions")

    def clean_question_types(self):
        return self._known(
            self.cleaned_data["question_types"], QuestionType.values, "question types"
        )

    def clean_theme_tags(self):
        tags = self.cleaned_data["theme_tags"]
        if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
            raise forms.ValidationError('A list of lowercase words, e.g. ["garden", "tea"].')
        return [tag.strip().lower() for tag in tags if tag.strip()]


@admin.register(Narrative)
class NarrativeAdmin(LinksMixin, admin.ModelAdmin):
    """The team's story library and caregivers' stories about a person; operators edit both.

    Deactivate a narrative rather than delete it: usage history keeps pointing at its id.
    """

    form = NarrativeForm
    list_display = ("id", "title", "category", "length", "active", "person_link", "updated_at")
    list_select_related = ("person",)
    list_editable = ("active",)
    list_filter = ("category", "length", "active", ("person", admin.RelatedOnlyFieldListFilter))
    search_fields = ("id", "title", "text")
    ordering = ("category", "id")
    raw_id_fields = ("person",)
    fields = (
        "id",
        "title",
        "category",
        "length",
        "text",
        "target_emotions",
        "question_types",
        "theme_tags",
        "person",
        "active",
        "created_at",
        "updated_at",
    )

    def get_readonly_fields(self, request, obj=None):
        # The id is the primary key: changing it would save a second narrative, not rename one.
        return ("created_at", "updated_at") + (("id",) if obj is not None else ())


# --- Insights: summaries, trends and alerts -------------------------------------------------
# Imported here, at the end, so this section can be read (and moved) on its own.
from memory import alerts as alerts_service  # noqa: E402


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
        return _short(obj.text)


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
class AlertAdmin(LinksMixin, admin.ModelAdmin):
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


# --- Check-ins and commitments ----------------------------------------------------------------
# Imported here, at the end, so this section can be read (and moved) on its own.
from memory import checkins as checkins_service  # noqa: E402
from memory import commitments as commitments_service  # noqa: E402
from memory.errors import Invalid  # noqa: E402
from memory.models import CheckIn, CheckInSettings, Commitment  # noqa: E402


class CheckInSettingsForm(forms.ModelForm):
    """The same rules as the service and the API: bad times or hours are refused on their field."""

    class Meta:
        model = CheckInSettings
        fields = ("person", "enabled", "times", "night_start", "night_end", "max_unanswered")
        help_texts = {
            "times": 'Local times in the person\'s time zone, e.g. ["09:30", "15:00"].',
        }

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:
            clean = checkins_service.checkin_settings_validate(
                enabled=data.get("enabled", False),
                times=data.get("times") or [],
                night_start=data.get("night_start"),
                night_end=data.get("night_end"),
                max_unanswered=data.get("max_unanswered"),
            )
        except Invalid as exc:
            self.add_error(exc.field if exc.field in self.fields else None, exc.detail)
            return data
        data["times"] = clean.times
        return data


@admin.register(CheckInSettings)
class CheckInSettingsAdmin(LinksMixin, admin.ModelAdmin):
    """When the companion may say hello first; caregivers may also switch it off here."""

    form = CheckInSettingsForm
    list_display = ("person_link", "enabled", "times", "night_start", "night_end", "updated_at")
    list_select_related = ("person",)
    list_filter = ("enabled",)
    search_fields = ("=person__id", "person__display_name")
    raw_id_fields = ("person",)

    def has_delete_permission(self, request, obj=None):
        return False  # switch it off instead: the decisions already taken stay explained


@admin.register(CheckIn)
class CheckInAdmin(ReadOnlyAdmin):
    """Every check-in decision with its reason (sent ones: their delivery state)."""

    list_display = ("decided_at", "person_link", "slot", "outcome", "reason", "answered")
    list_select_related = ("person",)
    list_filter = ("outcome", "reason", "answered")
    search_fields = ("=person__id", "person__display_name")
    date_hierarchy = "decided_at"
    ordering = ("-decided_at",)


@admin.register(Commitment)
class CommitmentAdmin(LinksMixin, admin.ModelAdmin):
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
        return _short(obj.text)

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
