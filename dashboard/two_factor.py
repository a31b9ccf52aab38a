"""The second factor: TOTP (an authenticator app) with one-time recovery codes, by django-otp.

Who must pass it: operators (staff and superusers, who reach the Django admin), organisation
admins (who read their organisation's audit and manage its people), team admins (who export
everything about a person and erase them: a care team's admin role in one of the login's own
organisations), and anyone who chose to set one up. Until they have, SecondFactorMiddleware lets such a login reach only the pages below,
logging out and static files: everything else (dashboard pages, partials, exports, the admin,
the API's docs) sends them to enrol or to enter a code, and comes back afterwards.

Enrolment shows a QR code (segno, inline SVG: no image request, no CDN) and the secret as text;
the first valid code confirms the device, and ten recovery codes are shown once. An enrolled
login that has not entered a code cannot enrol another device (its password alone must not be
enough to add an attacker's phone).

Once past the second factor, a login manages its own (`manage`): new recovery codes (shown once;
the old stop working) and a new authenticator app, which replaces the old one only after giving
its first code. Both are audited. The devices are this project's (dashboard/second_factor/):
django-otp's, with the TOTP secret encrypted and recovery codes kept as keyed hashes.
"""

from collections.abc import Callable
from urllib.parse import urlencode

import segno
from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render, resolve_url
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRedirect
from django_otp import login as otp_login
from django_otp import match_token, user_has_device

from dashboard.access import care_memberships
from dashboard.models import CareRole
from dashboard.second_factor import services
from dashboard.second_factor.models import AuthenticatorDevice, RecoveryDevice
from memory.models import OrganisationMembership


def required_for(user) -> bool:
    """Whether this login must pass a second factor: operators, organisation admins, team
    admins (they export and erase a person), and anyone with a confirmed device."""
    if user is None or not user.is_authenticated:
        return False
    if user.is_staff or user.is_superuser:
        return True
    if OrganisationMembership.objects.filter(user_id=user.pk, is_admin=True).exists():
        return True
    if care_memberships(user).filter(role=CareRole.ADMIN).exists():
        return True
    return user_has_device(user, confirmed=True)


def _exempt_paths() -> tuple[str, ...]:
    static = (
        settings.STATIC_URL if settings.STATIC_URL.startswith("/") else "/" + settings.STATIC_URL
    )
    return (
        reverse("dashboard:two_factor"),
        reverse("dashboard:two_factor_setup"),
        reverse("dashboard:login"),
        reverse("dashboard:logout"),
        reverse("admin:logout"),
        static,
    )


class SecondFactorMiddleware:
    """Sends a login that must pass a second factor, and has not, to the second-factor pages."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if (
            user is not None
            and user.is_authenticated
            and not user.is_verified()
            and not request.path.startswith(_exempt_paths())
            and required_for(user)
        ):
            target = reverse("dashboard:two_factor")
            back = request.htmx.current_url_abs_path if getattr(request, "htmx", False) else None
            back = back or request.get_full_path()
            url = f"{target}?{urlencode({'next': back})}"
            if getattr(request, "htmx", False):
                return HttpResponseClientRedirect(url)
            return redirect(url)
        return self.get_response(request)


class TokenForm(forms.Form):
    token = forms.CharField(
        label="Code",
        max_length=16,
        strip=True,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
    )


def _next(request: HttpRequest) -> str:
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return resolve_url(settings.LOGIN_REDIRECT_URL)


def _with_next(url: str, request: HttpRequest) -> str:
    return f"{url}?{urlencode({'next': _next(request)})}"


@login_required
@require_http_methods(["GET", "POST"])
def verify(request: HttpRequest) -> HttpResponse:
    """Enter a code from the authenticator app (or a recovery code) to finish logging in."""
    if request.user.is_verified():
        return redirect(_next(request))
    if not user_has_device(request.user, confirmed=True):
        return redirect(_with_next(reverse("dashboard:two_factor_setup"), request))
    form = TokenForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        device = match_token(request.user, form.data.get("token", "").replace(" ", ""))
        if form.is_valid() and device is not None:
            otp_login(request, device)
            return redirect(_next(request))
        form.add_error("token", "That code did not match. Try the newest code, or a recovery code.")
        status = 400
    context = {"form": form, "next": _next(request)}
    return render(request, "registration/two_factor.html", context, status=status)


def _qr_svg(url: str) -> str:
    # Inline SVG from segno: our own markup (no user text inside but the otpauth URL, escaped).
    return mark_safe(segno.make(url, error="m").svg_inline(scale=4, border=2))


@login_required
@require_http_methods(["GET", "POST"])
def setup(request: HttpRequest) -> HttpResponse:
    """Set up an authenticator app: scan, type the first code, keep the recovery codes."""
    user = request.user
    if user_has_device(user, confirmed=True) and not user.is_verified():
        return redirect(_with_next(reverse("dashboard:two_factor"), request))
    if AuthenticatorDevice.objects.filter(user=user, confirmed=True).exists():
        return render(request, "registration/two_factor_setup.html", {"done": True})
    device = services.authenticator_pending(user=user)
    form = TokenForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        if _first_code_matches(form, device):
            device.confirmed = True
            device.save(update_fields=["confirmed"])
            codes = services.recovery_codes_issue(user=user)
            otp_login(request, device)
            context = {"codes": codes, "next": _next(request)}
            return render(request, "registration/recovery_codes.html", context)
        status = 400
    context = {**_enrolment(form, device), "next": _next(request)}
    return render(request, "registration/two_factor_setup.html", context, status=status)


def _first_code_matches(form: TokenForm, device) -> bool:
    """Whether a new authenticator app's first code is right; if not, the form says so."""
    if form.is_valid() and device.verify_token(form.cleaned_data["token"].replace(" ", "")):
        return True
    form.add_error("token", "That code did not match. Check the phone's clock and try again.")
    return False


def _enrolment(form: TokenForm, device) -> dict:
    """What a page enrolling an authenticator app shows: the QR code, the key, the code form."""
    return {"form": form, "qr": _qr_svg(device.config_url), "secret": _spaced(device.bin_key)}


def _spaced(key: bytes) -> str:
    from base64 import b32encode

    text = b32encode(key).decode().rstrip("=")
    return " ".join(text[i : i + 4] for i in range(0, len(text), 4))


# --- A login's own second factor, once it has passed it ---------------------------------------


def _passed(view):
    """Only a login that has passed its second factor (the password alone must not be enough to
    make codes or swap the phone); a login with none is sent to set one up."""

    @login_required
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not user_has_device(request.user, confirmed=True):
            return redirect(reverse("dashboard:two_factor_setup"))
        if not request.user.is_verified():
            return redirect(_with_next(reverse("dashboard:two_factor"), request))
        return view(request, *args, **kwargs)

    wrapped.__doc__ = view.__doc__
    return wrapped


@_passed
@require_http_methods(["GET"])
def manage(request: HttpRequest) -> HttpResponse:
    """The login's second factor: its authenticator app and how many recovery codes are left."""
    user = request.user
    app = AuthenticatorDevice.objects.filter(user=user, confirmed=True).first()
    recovery = RecoveryDevice.objects.filter(user=user).first()
    context = {"app": app, "codes_left": recovery.codes.count() if recovery else 0}
    return render(request, "registration/two_factor_manage.html", context)


@_passed
@require_http_methods(["POST"])
def recovery_codes(request: HttpRequest) -> HttpResponse:
    """Make new recovery codes (the old ones stop working) and show them, once. Audited."""
    codes = services.recovery_codes_issue(user=request.user, renewed=True)
    context = {"codes": codes, "next": reverse("dashboard:two_factor_manage")}
    return render(request, "registration/recovery_codes.html", context)


@_passed
@require_http_methods(["GET", "POST"])
def replace(request: HttpRequest) -> HttpResponse:
    """Move to a new authenticator app: scan, type its first code; only then is the old one
    removed (so a mistake never leaves the login without a second factor). Audited."""
    user = request.user
    device = services.authenticator_pending(user=user)
    form = TokenForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        if _first_code_matches(form, device):
            services.authenticator_replace(user=user, device=device)
            otp_login(request, device)
            messages.success(
                request, "Your new authenticator app is set up; the old one no longer works."
            )
            return redirect(reverse("dashboard:two_factor_manage"))
        status = 400
    context = _enrolment(form, device)
    return render(request, "registration/two_factor_replace.html", context, status=status)
