"""Accounts on the dashboard: invitations by an organisation's admin, and resetting a password.

Password reset is Django's own auth views with the dashboard's templates: the "sent" page is the
same whether or not the address belongs to a login, the link works once and expires after
PASSWORD_RESET_TIMEOUT, and the new password goes through the project's validators. A reset
does not log in (post_reset_login stays off): the login page, with django-axes' lockout and the
second factor, still stands between a reset and the dashboard.
"""

import uuid

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse, reverse_lazy
from django.views.decorators.http import require_http_methods, require_POST

from dashboard.access import Need, get_organisation_for, organisations_read_record
from dashboard.accounts import services
from dashboard.accounts.forms import InvitationForm, NewLoginForm
from dashboard.accounts.models import Invitation
from dashboard.accounts.reset_limits import LimitedPasswordResetView
from dashboard.models import AuditAction
from dashboard.selectors import person_name


def _uuid(value) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def _inviter(request: HttpRequest, slug: str) -> services.Inviter:
    """The login as an inviter of the organisation: its admins and its team admins (403 for
    other members, 404 for anyone outside it)."""
    org = get_organisation_for(request.user, slug, need=Need.VIEW)
    inviter = services.Inviter(
        user=request.user,
        organisation=org.organisation,
        organisation_admin=org.membership.is_admin,
    )
    if not inviter.may_invite():
        raise PermissionDenied("Only the organisation's admins and team admins invite.")
    return inviter


@login_required
@require_http_methods(["GET", "POST"])
def invitations(request: HttpRequest, slug: str) -> HttpResponse:
    """Invitations and a form to send one: the organisation's admins (any of its people, or
    the organisation alone) and team admins (the care teams they admin)."""
    inviter = _inviter(request, slug)
    organisation = inviter.organisation
    people = inviter.people()
    # "Invite someone to look after them" (a person with no care team yet, on the people list):
    # that person chosen. An id not among the people offered chooses no one. The role stays
    # the least right until the inviter changes it.
    initial = {}
    chosen = people.filter(id=_uuid(request.GET.get("person"))).first()
    if chosen is not None:
        initial = {"people": [chosen]}
    form = InvitationForm(request.POST or None, people=people, initial=initial)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                services.invitation_send(
                    inviter=inviter,
                    email=data["email"],
                    people=data["people"],
                    role=data["role"],
                    accept_url=lambda token: request.build_absolute_uri(
                        reverse("dashboard:invitation_accept", args=[token])
                    ),
                )
            except services.NotAllowed as refused:
                form.add_error(refused.field, str(refused))
            except OSError:
                # SMTP refused or unreachable (smtplib's errors are OSErrors): nothing was kept.
                form.add_error("email", "The e-mail could not be sent. Please try again later.")
            else:
                names = ", ".join(person_name(p) for p in data["people"])
                to = f" to the care team{'s' if len(data['people']) > 1 else ''} of {names}"
                messages.success(
                    request, f"Invitation sent to {data['email']}{to if names else ''}."
                )
                return redirect("dashboard:invitations", slug=slug)
        status = 400
    rows = [
        {
            "invitation": invitation,
            "state": _state(invitation),
            "people": [person_name(p) for p in invitation.people.all()],
        }
        for invitation in services.invitations_of(inviter)
    ]
    # The page lists who was invited to look after whom: a read of the organisation's, recorded.
    organisations_read_record(request.user, [organisation.pk], AuditAction.VIEW_INVITATIONS)
    context = {
        "organisation": organisation,
        "form": form,
        "rows": rows,
        "organisation_admin": inviter.organisation_admin,
    }
    return render(request, "dashboard/invitations.html", context, status=status)


def _state(invitation: Invitation) -> str:
    if invitation.accepted_at:
        return "accepted"
    if invitation.revoked_at:
        return "revoked"
    if services.invitation_expired(invitation):
        return "expired"
    return "pending"


@login_required
@require_POST
def invitation_revoke(request: HttpRequest, slug: str, invitation_id: uuid.UUID) -> HttpResponse:
    """Revoke a pending invitation this login sees (another organisation's: 404)."""
    inviter = _inviter(request, slug)
    # Among the invitations this login sees: another's (or another organisation's) is a 404.
    invitation = services.invitation_of(inviter, invitation_id)
    if invitation is None:
        raise Http404("No such invitation.")
    if services.invitation_revoke(invitation=invitation, user=request.user):
        messages.success(request, f"The invitation to {invitation.email} no longer works.")
    return redirect("dashboard:invitations", slug=slug)


@require_http_methods(["GET", "POST"])
def invitation_accept(request: HttpRequest, token: str) -> HttpResponse:
    """The invitee's page: a new login (name and password), or joining with their own login.

    Any link that is not good (altered, expired, used, revoked) gets the same 404 page. An
    address that already has a login joins only once that login is logged in: an invitation is
    never a way to set another organisation's member's password.
    """
    try:
        invitation = services.invitation_from_token(token)
    except services.InvitationRefused:
        return render(request, "registration/invitation_invalid.html", status=404)
    context = {"invitation": invitation, "organisation": invitation.organisation}
    existing = services.existing_login(invitation)
    if existing is not None:
        if not request.user.is_authenticated:
            context["login_url"] = f"{reverse('dashboard:login')}?next={request.path}"
            return render(request, "registration/invitation_login_first.html", context)
        if request.user.pk != existing.pk:
            return render(request, "registration/invitation_other_login.html", context, status=403)
        if request.method == "POST":
            return _accepted(request, invitation, user=request.user)
        return render(request, "registration/invitation_join.html", context)
    if request.user.is_authenticated:
        return render(request, "registration/invitation_other_login.html", context, status=403)
    form = NewLoginForm(request.POST or None, email=invitation.email)
    if request.method == "POST" and form.is_valid():
        try:
            return _accepted(
                request,
                invitation,
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
                first_name=form.cleaned_data["first_name"],
                last_name=form.cleaned_data["last_name"],
            )
        except services.LoginNameTaken:
            form.add_error("username", "That login name is taken. Please choose another.")
    context["form"] = form
    status = 400 if request.method == "POST" else 200
    return render(request, "registration/invitation_accept.html", context, status=status)


class PasswordChange(auth_views.PasswordChangeView):
    """A logged-in member changes their own password (the old one first, then the project's
    validators). The login stays, second factor included; the page says it is done and goes
    back to the people list."""

    template_name = "registration/password_change_form.html"
    success_url = reverse_lazy("dashboard:people")

    def form_valid(self, form):
        response = super().form_valid(form)
        messages.success(self.request, "Your new password is saved.")
        return response

    def form_invalid(self, form):
        return self.render_to_response(self.get_context_data(form=form), status=400)


def _accepted(request: HttpRequest, invitation: Invitation, **who) -> HttpResponse:
    try:
        accepted = services.invitation_accept(invitation=invitation, **who)
    except services.InvitationRefused:
        return render(request, "registration/invitation_invalid.html", status=404)
    name = invitation.organisation.name
    if accepted.created:
        messages.success(request, f"Your login is ready. Log in to see {name}.")
        return redirect("dashboard:login")
    messages.success(request, f"You have joined {name}.")
    return redirect("dashboard:people")


urlpatterns = [
    path("organisations/<slug:slug>/invitations/", invitations, name="invitations"),
    path(
        "organisations/<slug:slug>/invitations/<uuid:invitation_id>/revoke/",
        invitation_revoke,
        name="invitation_revoke",
    ),
    path("invitations/<str:token>/", invitation_accept, name="invitation_accept"),
    path("account/password/", PasswordChange.as_view(), name="password_change"),
    path(
        "account/password-reset/",
        LimitedPasswordResetView.as_view(
            template_name="registration/password_reset_form.html",
            email_template_name="registration/password_reset_email.txt",
            subject_template_name="registration/password_reset_subject.txt",
            success_url=reverse_lazy("dashboard:password_reset_done"),
        ),
        name="password_reset",
    ),
    path(
        "account/password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(
            template_name="registration/password_reset_done.html"
        ),
        name="password_reset_done",
    ),
    path(
        "account/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            template_name="registration/password_reset_confirm.html",
            success_url=reverse_lazy("dashboard:password_reset_complete"),
        ),
        name="password_reset_confirm",
    ),
    path(
        "account/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(
            template_name="registration/password_reset_complete.html"
        ),
        name="password_reset_complete",
    ),
]
