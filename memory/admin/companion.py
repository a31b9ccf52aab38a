"""The story library and check-ins."""

from django import forms
from django.contrib import admin

from memory.admin.base import LinksMixin, OrganisationScopedAdmin, ReadOnlyAdmin
from memory.companion import checkins as checkins_service
from memory.core.errors import Invalid
from memory.models import (
    CheckIn,
    CheckInSettings,
    Emotion,
    Narrative,
    QuestionType,
)

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
class NarrativeAdmin(OrganisationScopedAdmin, LinksMixin, admin.ModelAdmin):
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

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if obj is None and not request.user.is_superuser:
            # Made by code (memory/core/ids.py uuid7_text): an id typed here would tell its
            # author whether another organisation already has it ("already exists").
            return tuple(name for name in fields if name != "id")
        return fields

    def has_change_permission(self, request, obj=None):
        # The library (no person) is every organisation's: only a superuser changes it.
        if obj is not None and obj.person_id is None and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        if not request.user.is_superuser and "person" in form.base_fields:
            # Staff of an organisation write stories about their own people, not the library.
            form.base_fields["person"].required = True
        return form


# --- Check-ins and commitments ----------------------------------------------------------------


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
class CheckInSettingsAdmin(OrganisationScopedAdmin, LinksMixin, admin.ModelAdmin):
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
