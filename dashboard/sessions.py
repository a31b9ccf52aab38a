"""How long a login lasts: idle timeout, absolute lifetime, and background polls.

- **Activity** is what a person at the screen does. A background poll (an htmx element with
  `hx-trigger="every ..."` sends `X-Clara-Poll: 1`) is not: it neither renews the idle timeout
  nor saves the session. So an open person page on a shared care-home PC still logs out after
  SESSION_COOKIE_AGE of nobody touching it.
- **Absolute lifetime**: however active, a login ends CLARA_LOGIN_MAX_AGE_SECONDS after it began.
- **Expired inside htmx**: a panel must not swap the login page into itself. The answer is an
  `HX-Redirect` to the login page with `?next=` set to the page the browser shows, so after
  logging in the caregiver is back where they were.

The login's start and last activity are kept in the session (epoch seconds); Django's own
session expiry (SESSION_COOKIE_AGE from the last save) backs the idle timeout up on the server.
"""

import time
from collections.abc import Callable
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect

LOGIN_STARTED = "clara_login_started"
LAST_ACTIVITY = "clara_last_activity"
POLL_HEADER = "X-Clara-Poll"


def is_poll(request: HttpRequest) -> bool:
    """Whether the request is a background poll rather than something a person did.

    Only a read can be a poll: htmx passes hx-headers down to child elements, so a button inside
    a polling panel may carry the header too, and what it posts is the caregiver's doing.
    """
    return request.method in ("GET", "HEAD") and request.headers.get(POLL_HEADER) == "1"


@receiver(user_logged_in, dispatch_uid="clara_login_started")
def _login_started(sender, request, user, **kwargs) -> None:
    """A new login starts its lifetime now (the dashboard's and the admin's alike)."""
    if request is not None and hasattr(request, "session"):
        now = int(time.time())
        request.session[LOGIN_STARTED] = now
        request.session[LAST_ACTIVITY] = now


def login_expired(session, *, now: float) -> bool:
    """Whether a login with this session is past its idle timeout or its absolute lifetime."""
    started = session.get(LOGIN_STARTED)
    last = session.get(LAST_ACTIVITY, started)
    if not isinstance(started, int | float) or not isinstance(last, int | float):
        # A session from before these keys existed: it has no known start, so it ends now
        # rather than living forever.
        return True
    return (
        now - started >= settings.CLARA_LOGIN_MAX_AGE_SECONDS
        or now - last >= settings.SESSION_COOKIE_AGE
    )


def login_redirect_for_htmx(request: HttpRequest) -> HttpResponse:
    """HX-Redirect to the login page, coming back to the page the browser shows."""
    login_url = resolve_url(settings.LOGIN_URL)
    # django-htmx keeps HX-Current-URL only when it is this site's (scheme and host): no open
    # redirect through a forged header.
    back = request.htmx.current_url_abs_path if getattr(request, "htmx", False) else None
    if back:
        login_url = f"{login_url}?{urlencode({'next': back})}"
    return HttpResponseClientRedirect(login_url)


def _is_login_redirect(response: HttpResponse) -> bool:
    if response.status_code not in (301, 302, 303, 307, 308):
        return False
    location = urlsplit(response.get("Location", ""))
    login_path = urlsplit(resolve_url(settings.LOGIN_URL)).path
    return location.path == login_path or location.path.endswith("/admin/login/")


class LoginSessionMiddleware:
    """Ends logins that are idle or too old; records activity; answers htmx with HX-Redirect.

    Sits after AuthenticationMiddleware and HtmxMiddleware. A poll of a live login is answered
    without touching the session, so it is not saved and its expiry does not move.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            now = time.time()
            if login_expired(request.session, now=now):
                logout(request)
            elif not is_poll(request):
                # Marks the session modified, so SessionMiddleware saves it and renews both the
                # server-side expiry and the cookie.
                request.session[LAST_ACTIVITY] = int(now)
        response = self.get_response(request)
        if getattr(request, "htmx", False) and _is_login_redirect(response):
            # login_required (or the admin) would send the panel to the login page, and htmx
            # would follow the redirect and swap the login form into the panel.
            return login_redirect_for_htmx(request)
        return response
