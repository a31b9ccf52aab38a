"""A second factor for test logins that must pass one (operators, organisation and team admins)."""

from django.test import Client
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.oath import totp

from dashboard.second_factor.models import AuthenticatorDevice


def totp_device(user) -> AuthenticatorDevice:
    """A confirmed authenticator-app device for the login."""
    return AuthenticatorDevice.objects.create(user=user, name="Authenticator app", confirmed=True)


def current_code(device: AuthenticatorDevice) -> str:
    """The code the app would show now."""
    return f"{totp(device.bin_key, step=device.step, t0=device.t0, digits=device.digits):0{device.digits}d}"


def pass_second_factor(client: Client, user) -> None:
    """Give the second-factor page the code the login's app shows now (enrolling one first if
    it has none), as a person does after the password."""
    from django.urls import reverse

    device = AuthenticatorDevice.objects.filter(user=user, confirmed=True).first() or totp_device(
        user
    )
    response = client.post(
        reverse("dashboard:two_factor"), {"token": current_code(device), "next": "/"}
    )
    assert response.status_code == 302, response.content[:300]


def verified_client(user, client: Client | None = None) -> Client:
    """A client logged in as `user` who has passed the second factor (as django_otp.login does)."""
    client = client or Client()
    client.force_login(user)
    device = AuthenticatorDevice.objects.filter(user=user, confirmed=True).first() or totp_device(
        user
    )
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    session.save()
    return client


def second_step_code(username: str) -> str | None:
    """A code that passes the second step for this login, or None if it has none to pass.

    A fresh recovery code (an authenticator app is set up first if there is none): a browser
    test may log the same login in several times within 30 seconds, and an app's code is
    accepted once per 30 seconds."""
    from django.contrib.auth import get_user_model

    from dashboard.second_factor.services import recovery_codes_issue
    from dashboard.two_factor import required_for

    user = get_user_model().objects.get(username=username)
    if not required_for(user):
        return None
    if not AuthenticatorDevice.objects.filter(user=user, confirmed=True).exists():
        totp_device(user)
    return recovery_codes_issue(user=user)[0]
