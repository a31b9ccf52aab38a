"""Forms of the dashboard: they parse and validate POSTs; the services do the writing."""

from django import forms

from dashboard.models import CareRole
from memory.models import Alert


class AlertStatusForm(forms.Form):
    status = forms.ChoiceField(choices=Alert.Status.choices)


class MemberAddForm(forms.Form):
    username = forms.CharField(label="Their login name", max_length=150)
    role = forms.ChoiceField(choices=CareRole.choices, initial=CareRole.FAMILY)
    can_see_transcripts = forms.BooleanField(label="May read full conversations", required=False)


class MemberUpdateForm(forms.Form):
    role = forms.ChoiceField(choices=CareRole.choices)
    can_see_transcripts = forms.BooleanField(required=False)
