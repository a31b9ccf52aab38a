"""Forms of invitations: an admin's invitation, and the invitee's new login."""

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import UsernameField

from dashboard.accounts.services import ROLES_LEAST_FIRST
from dashboard.models import CareRole
from dashboard.selectors import person_name


class InvitationForm(forms.Form):
    """Who to invite, into which care teams (several may be chosen), with what role.

    Only the people the inviter may invite to can be chosen (dashboard.accounts.services.Inviter);
    any other id (unknown, or another organisation's) gets the same answer. The role offered
    first, and chosen unless changed, is the least right: family.
    """

    email = forms.EmailField(label="Their e-mail address", max_length=254)
    people = forms.ModelMultipleChoiceField(
        label="Care teams to join",
        queryset=None,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"invalid_choice": "Choose people from the list."},
    )
    role = forms.ChoiceField(
        label="Role in those care teams",
        choices=[(role.value, role.label) for role in ROLES_LEAST_FIRST],
    )

    def __init__(self, *args, people, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["people"].queryset = people
        self.fields["people"].label_from_instance = person_name
        self.fields["role"].initial = CareRole.FAMILY


class NewLoginForm(forms.Form):
    """The invitee's name (pages name people, never logins), login name and password, checked
    by the project's password validators."""

    first_name = forms.CharField(label="First name", max_length=150, strip=True)
    last_name = forms.CharField(
        label="Last name",
        max_length=150,
        strip=True,
        required=False,
        help_text="Leave it empty if you go by one name.",
    )
    username = UsernameField(label="Login name", max_length=150)
    password1 = forms.CharField(
        label="Password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="At least 12 characters, not a common password, not like your name or address.",
    )
    password2 = forms.CharField(
        label="The same password again",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args, email: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.email = email

    def clean_username(self) -> str:
        username = self.cleaned_data["username"]
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("That login name is taken. Please choose another.")
        return username

    def clean(self):
        data = super().clean()
        first, second = data.get("password1"), data.get("password2")
        if first and second and first != second:
            self.add_error("password2", "The two passwords are not the same.")
        elif first:
            user = get_user_model()(
                username=data.get("username", ""),
                email=self.email,
                first_name=data.get("first_name", ""),
                last_name=data.get("last_name", ""),
            )
            try:
                password_validation.validate_password(first, user)
            except forms.ValidationError as error:
                self.add_error("password1", error)
        return data
