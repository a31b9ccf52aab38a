"""Login lockout with three limits: an account from one address, an address, an account overall.

django-axes counts failures per parameter of AXES_LOCKOUT_PARAMETERS but compares every count
with the one AXES_FAILURE_LIMIT. Here each count has its own limit:

- an account from one address (the username and address together): AXES_FAILURE_LIMIT (5). Five
  wrong passwords for a caregiver from an attacker's address lock that address out of that
  account; the caregiver still logs in from the care home (issue 30: anyone could lock a named
  caregiver out for 15 minutes with five wrong passwords);
- an address, whatever the names: CLARA_LOGIN_IP_FAILURE_LIMIT (20). A care home's staff share one
  public address, so five typos across the home must not lock everyone out; spraying many names
  from one address stops there;
- an account from anywhere: CLARA_LOGIN_ACCOUNT_FAILURE_LIMIT (15). Guessing one password from
  many addresses still stops, later than from one (three addresses' worth).

A good login forgets that account's own failures from that address (its typos there), and only
those: the attacker's address stays locked out of the account, and the address's count keeps
the other names tried from it. django-axes' own reset deletes every failure matching any lockout
parameter, so one good login also wiped the address's count: someone spraying names from one
address with one account of their own could log in every nineteenth try and never reach the
address limit.
"""

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_parameters, get_client_username, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum


class LoginLockoutHandler(AxesDatabaseHandler):
    def get_failures(self, request, credentials: dict | None = None) -> int:
        """The failures that count towards AXES_FAILURE_LIMIT: an account's from this address,
        and an address's and an account's overall, each scaled so that it reaches that limit only
        at its own limit."""
        limit = get_failure_limit(request, credentials)
        own_limits = {
            frozenset({"ip_address"}): max(settings.CLARA_LOGIN_IP_FAILURE_LIMIT, limit),
            frozenset({"username"}): max(settings.CLARA_LOGIN_ACCOUNT_FAILURE_LIMIT, limit),
        }
        parameters = get_client_parameters(
            get_client_username(request, credentials),
            request.axes_ip_address,
            request.axes_user_agent,
            request,
            credentials,
        )
        worst = 0
        for kwargs, attempts in zip(
            parameters, self.get_user_attempts(request, credentials), strict=True
        ):
            failures = attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
            own = own_limits.get(frozenset(kwargs))
            if own is not None:
                failures = limit if failures >= own else min(failures, limit - 1)
            worst = max(worst, failures)
        return worst

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        """On a good login: delete the failures recorded under this account's name from this
        address only; other addresses stay locked out of it, and the address's count keeps the
        other names tried from it."""
        username = get_client_username(request, credentials)
        if not username:
            return 0
        deleted, _ = AccessAttempt.objects.filter(
            username=username, ip_address=request.axes_ip_address
        ).delete()
        return deleted
