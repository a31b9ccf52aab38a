"""People, sessions, the append-only conversation history and API keys.

People and sessions can be looked after here but never deleted (their history hangs off them).
Messages, emotions, repetition records and narrative usage are append-only history: view only.
API keys are created with `manage.py create_api_key NAME --org SLUG` and only revoked here.

Every page here that shows a person's data is audited (memory.admin.base.OrganisationScopedAdmin);
those that show what a person said (messages, repetition records, emotions' messages, a
session's latest messages) as reading messages.
"""

from django.contrib import admin, messages
from django.db.models import Count
from django.forms.models import BaseInlineFormSet
from django.utils import timezone
from django.utils.html import format_html

from memory import retention
from memory.admin.base import (
    AppendOnlyAdmin,
    LinksMixin,
    OrganisationScopedAdmin,
    change_link,
    changelist_link,
    short,
)
from memory.conversations import services
from memory.conversations.models import AccessChannel
from memory.core.person import CaregiverContext
from memory.models import (
    ApiKey,
    ChatMessage,
    DetectedEmotion,
    NarrativeUsage,
    Person,
    RepetitionRecord,
    Session,
)

# The session page shows this many of its latest messages; the full list is one click away.
SESSION_PAGE_MESSAGES = 50


# --- People and sessions ------------------------------------------------------------------


@admin.register(Person)
class PersonAdmin(OrganisationScopedAdmin, admin.ModelAdmin):
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
        "unit",
        "caregiver_context",
        "created_at",
        "last_active_at",
        "records",
    )
    # The unit is changed on the dashboard's "Homes and units" page, whose move keeps the care
    # teams a unit gives in step (memory/conversations/homes.py).
    readonly_fields = ("id", "unit", "created_at", "last_active_at", "records")
    actions = ("archive_people",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_session_count=Count("sessions"))

    @admin.action(description="Archive selected people", permissions=["change"])
    def archive_people(self, request, queryset):
        archived = sum(
            retention.person_archive(
                person=person,
                actor=f"user:{request.user.get_username()}",
                channel=AccessChannel.ADMIN,
                user=request.user,
            )
            for person in queryset
        )
        self.message_user(request, f"Archived {archived} person(s).", messages.SUCCESS)

    def has_add_permission(self, request):
        # A person appears when the bot first talks with them, under the bot's own user id.
        return False

    def has_delete_permission(self, request, obj=None):
        # Their sessions and messages point at them (PROTECT): set the status to archived instead.
        return False

    @admin.display(description="sessions", ordering="_session_count")
    def session_count(self, obj):
        return changelist_link(Session, obj._session_count, person=obj.pk)

    @admin.display(description="preferred name")
    def preferred_name(self, obj):
        return CaregiverContext.of(obj).preferred_name

    @admin.display(description="records")
    def records(self, obj):
        if obj.pk is None:
            return admin.site.empty_value_display
        return format_html(
            "{} · {} · {}",
            changelist_link(Session, "sessions", person=obj.pk),
            changelist_link(ChatMessage, "messages", person=obj.pk),
            changelist_link(DetectedEmotion, "emotions", person=obj.pk),
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
class SessionAdmin(OrganisationScopedAdmin, LinksMixin, admin.ModelAdmin):
    # The list shows no words (only whose sessions); the session page shows its latest messages.
    shows_messages = ("change",)
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
            changelist_link(ChatMessage, "all messages", session=obj.pk),
            changelist_link(DetectedEmotion, "emotions", session=obj.pk),
            changelist_link(RepetitionRecord, "repetitions", session=obj.pk),
            changelist_link(NarrativeUsage, "narratives", session=obj.pk),
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
    shows_messages = ("list", "change")
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
        return short(obj.content)


@admin.register(DetectedEmotion)
class DetectedEmotionAdmin(AppendOnlyAdmin):
    # The list shows each message's words; the object page only links to the message.
    shows_messages = ("list",)
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
        return change_link(obj.message, short(obj.message.content, 60))


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
    shows_messages = ("list", "change")
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
        return short(obj.original_message, 60)


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
class ApiKeyAdmin(OrganisationScopedAdmin, admin.ModelAdmin):
    list_display = (
        "name",
        "prefix",
        "organisation",
        "scope_list",
        "expires_at",
        "created_at",
        "last_used_at",
        "revoked_at",
        "live",
    )
    list_select_related = ("organisation",)
    list_filter = (LiveFilter, ("organisation", admin.RelatedOnlyFieldListFilter))
    search_fields = ("name", "=prefix")
    ordering = ("-created_at",)
    # key_hash is never shown: it is not secret, but there is nothing in it for an operator.
    # What a key may do and for whom is fixed when it is made (create_api_key): a different
    # organisation or scope is a new key.
    fields = (
        "name",
        "prefix",
        "organisation",
        "scopes",
        "expires_at",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    readonly_fields = (
        "prefix",
        "organisation",
        "scopes",
        "expires_at",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    actions = ("revoke_keys",)

    def has_add_permission(self, request):
        # Keys are made by `manage.py create_api_key NAME`, the only place the raw key is shown.
        return False

    def has_delete_permission(self, request, obj=None):
        # A revoked key stays on record; revoking is what stops it working.
        return False

    @admin.display(description="scopes")
    def scope_list(self, obj):
        return ", ".join(obj.scopes or ()) or "none"

    @admin.display(description="live", boolean=True)
    def live(self, obj):
        return obj.revoked_at is None and (
            obj.expires_at is None or obj.expires_at > timezone.now()
        )

    @admin.action(description="Revoke selected keys", permissions=["change"])
    def revoke_keys(self, request, queryset):
        keys = list(queryset.filter(revoked_at__isnull=True))
        for key in keys:
            services.api_key_revoke(key=key)
        self.message_user(request, f"Revoked {len(keys)} key(s).", messages.SUCCESS)
