"""Forms of the dashboard: they parse and validate POSTs; the services do the writing."""

from django import forms

from dashboard import params
from dashboard.models import CareRole
from memory.core.person import zone_exists
from memory.insights.alerts import OUTCOME_NOTE_MAX_CHARS, OUTCOMES_OFFERED
from memory.models import Alert


class AlertActionForm(forms.Form):
    """Claim an alert ("I'm dealing with it"), or resolve it with what happened."""

    action = forms.ChoiceField(
        choices=[("claim", "claim"), ("resolve", "resolve")],
        error_messages={
            "required": "Choose what to do with the alert.",
            "invalid_choice": "Choose what to do with the alert.",
        },
    )
    outcome = forms.ChoiceField(
        choices=[(o.value, o.label) for o in OUTCOMES_OFFERED],
        required=False,
        error_messages={"invalid_choice": "Choose what happened."},
    )
    note = forms.CharField(
        max_length=OUTCOME_NOTE_MAX_CHARS,
        strip=True,
        required=False,
        error_messages={"max_length": f"The note is at most {OUTCOME_NOTE_MAX_CHARS} characters."},
    )

    def clean(self):
        data = super().clean()
        if data.get("action") == "resolve":
            if not data.get("outcome"):
                self.add_error("outcome", "Choose what happened.")
            elif data["outcome"] == Alert.Outcome.OTHER and not data.get("note"):
                self.add_error("note", "Say in a few words what happened.")
        return data

    def problem(self) -> str:
        """The first thing wrong, as one sentence."""
        for field in ("action", "outcome", "note"):
            if field in self.errors:
                return self.errors[field][0]
        return "Choose what to do with the alert."


class MemberAddForm(forms.Form):
    """Add someone to a care team: only a login of the person's organisation can be chosen.

    Any other name (unknown, or a login of another organisation) gets the same answer, so the
    form says nothing about logins elsewhere.
    """

    username = forms.ModelChoiceField(
        label="Who",
        queryset=None,
        to_field_name="username",
        error_messages={
            "invalid_choice": "Choose someone from the list.",
            "required": "Choose someone from the list.",
        },
    )
    role = forms.ChoiceField(choices=CareRole.choices, initial=CareRole.FAMILY)
    can_see_transcripts = forms.BooleanField(label="May read full conversations", required=False)

    def __init__(self, *args, logins, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].queryset = logins


class MemberUpdateForm(forms.Form):
    role = forms.ChoiceField(choices=CareRole.choices)
    can_see_transcripts = forms.BooleanField(required=False)
    # Family only: the person's named carer at home answers their alerts (outside a care home).
    named_carer = forms.BooleanField(required=False)


MAX_TOPICS = 30
MAX_TOPIC_CHARS = 100


class LinesField(forms.CharField):
    """A textarea of one item per line: a list of distinct, non-empty strings."""

    widget = forms.Textarea

    def to_python(self, value) -> list[str]:
        text = super().to_python(value) or ""
        return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))

    def validate(self, value) -> None:
        if len(value) > MAX_TOPICS:
            raise forms.ValidationError(f"At most {MAX_TOPICS}, one per line.")
        for item in value:
            if len(item) > MAX_TOPIC_CHARS:
                raise forms.ValidationError(f"Keep each line under {MAX_TOPIC_CHARS} characters.")


class NameForm(forms.Form):
    preferred_name = forms.CharField(max_length=100, required=False, strip=True)
    # On record, for the clinician report (Person.full_name, Person.identifier).
    full_name = forms.CharField(max_length=200, required=False, strip=True)
    identifier = forms.CharField(max_length=60, required=False, strip=True)
    pronouns = forms.ChoiceField(
        choices=[("she/her", "she / her"), ("he/him", "he / him"), ("they/them", "they / them")],
        required=False,
    )


class TopicsForm(forms.Form):
    known_topics = LinesField(required=False)
    avoid_topics = LinesField(required=False)


class AnswersForm(forms.Form):
    """One agreed answer per kind of repeated question (fields named answer_<question type>),
    and the agreed answers to questions picked from the repeated-questions panel (agreed_<n>,
    in their stored order; emptied, one is removed)."""

    def __init__(
        self,
        *args,
        question_types: list[tuple[str, str]],
        agreed: list[tuple[str, str]] = (),
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        for value, label in question_types:
            self.fields[f"answer_{value}"] = forms.CharField(
                label=label, max_length=500, required=False, strip=True, widget=forms.Textarea
            )
        # (label, current answer) of each picked question; the label is what the page may show.
        for index, (label, answer) in enumerate(agreed):
            self.fields[f"agreed_{index}"] = forms.CharField(
                label=label,
                max_length=500,
                required=False,
                strip=True,
                widget=forms.Textarea,
                initial=answer,
            )

    def picked_answers(self) -> list[str]:
        """The answers to the picked questions, in order ("" to remove one)."""
        found = []
        index = 0
        while f"agreed_{index}" in self.cleaned_data:
            found.append(self.cleaned_data[f"agreed_{index}"])
            index += 1
        return found

    def answers(self) -> dict[str, str]:
        return {
            name.removeprefix("answer_"): value
            for name, value in self.cleaned_data.items()
            if name.startswith("answer_")
        }


class PersonInLifeForm(forms.Form):
    name = forms.CharField(max_length=100, strip=True)
    relation = forms.CharField(max_length=100, strip=True, required=False)
    note = forms.CharField(max_length=300, strip=True, required=False)


class RoutineForm(forms.Form):
    routine = forms.CharField(max_length=300, strip=True)


class HomeForm(forms.Form):
    """Where the person lives, and the time zone charts and times are shown in."""

    home = forms.CharField(max_length=200, strip=True, required=False)
    # Their room there, if any: an urgent alert's e-mail says where to go.
    room = forms.CharField(max_length=60, strip=True, required=False)
    time_zone = forms.CharField(max_length=64, strip=True, required=False)

    def clean_time_zone(self) -> str:
        zone = self.cleaned_data["time_zone"]
        if zone and not zone_exists(zone):
            raise forms.ValidationError(
                f"Time zone: “{zone}” is not a time zone we know. Choose one from the list, "
                "such as Europe/London."
            )
        return zone


class AgreedAnswerForm(forms.Form):
    """The family's agreed answer to one question the person repeats."""

    answer = forms.CharField(max_length=500, strip=True, widget=forms.Textarea)


class MemoryEditForm(forms.Form):
    content = forms.CharField(max_length=2000, strip=True, widget=forms.Textarea)


class EraseForm(forms.Form):
    confirm_name = forms.CharField(max_length=200, strip=True)


class ConversationFilterForm(forms.Form):
    """Which conversations to list: words (members who may read them), feeling, alert, dates."""

    q = forms.CharField(label="Words", required=False, max_length=100, strip=True)
    feeling = forms.ChoiceField(label="Mostly felt", required=False)
    alert = forms.BooleanField(label="Only with an alert", required=False)
    # Bounded (dashboard/params.py): the end's next local midnight is computed from it.
    start = forms.DateField(
        label="From",
        required=False,
        widget=forms.DateInput({"type": "date"}),
        validators=[params.validate_day],
    )
    end = forms.DateField(
        label="To",
        required=False,
        widget=forms.DateInput({"type": "date"}),
        validators=[params.validate_day],
    )

    def __init__(self, *args, feelings: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["feeling"].choices = [("", "any feeling"), *feelings]

    def clean(self):
        data = super().clean()
        if data.get("start") and data.get("end") and data["start"] > data["end"]:
            self.add_error("end", "The end date is before the start date.")
        return data
