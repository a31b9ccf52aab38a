"""Password-reset requests, limited per address and per client.

Django's reset view sends a mail for every request, so anyone could fill a member's mailbox (or
make the server send thousands of mails). Two counters of clara/ratelimit.py, an hour wide:
- per e-mail address (a keyed hash: no address in the cache): past the limit the request gets
  the same answer as always, "if that address has a login, we sent a link", and no mail, so the
  limit tells nobody whether the address has a login;
- per client address (clara.client_ip, the one django-axes and /readyz use): past the limit the
  form answers 429, saying to try again later.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordResetForm

from clara import ratelimit
from clara.client_ip import client_ip
from memory.core import crypto

WINDOW_SECONDS = 3600


def _within(kind: str, who: str, limit: int) -> bool:
    """Counts one request of `who` (the bot API's sliding window, an hour wide); True while
    within `limit` (0: no limit)."""
    client_id = f"password-reset:{settings.CLARA_RATE_LIMIT_SCOPE}:{kind}:{who}"
    return ratelimit.hit(client_id=client_id, limit=limit, window=WINDOW_SECONDS).allowed


class LimitedPasswordResetForm(PasswordResetForm):
    def save(self, *args, **kwargs) -> None:
        address = crypto.keyed_hash(
            self.cleaned_data["email"].strip().casefold(), purpose="password-reset-address"
        )
        if _within("address", address, settings.CLARA_PASSWORD_RESETS_PER_ADDRESS_PER_HOUR):
            super().save(*args, **kwargs)


class LimitedPasswordResetView(auth_views.PasswordResetView):
    form_class = LimitedPasswordResetForm

    def post(self, request, *args, **kwargs):
        client = client_ip(request) or "unknown"
        if not _within("client", client, settings.CLARA_PASSWORD_RESETS_PER_CLIENT_PER_HOUR):
            form = self.get_form()
            form.is_valid()
            form.add_error(None, "Too many reset requests from here. Please try again in an hour.")
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)
