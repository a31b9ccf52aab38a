"""Login lockout with two limits: one per account, a higher one per address.

django-axes counts failures per username and per address (AXES_LOCKOUT_PARAMETERS) but compares
every count with the one AXES_FAILURE_LIMIT. A care home's staff share one public address, so
five typos across the whole home would lock everyone out. Here the address count is compared
with its own, higher limit (CLARA_LOGIN_IP_FAILURE_LIMIT): guessing one account still stops at
AXES_FAILURE_LIMIT, and spraying many names from one address stops at the address limit.

A good login forgets that account's own failures (its typos, from wherever they came), and only
those. django-axes' own reset deletes every failure matching any lockout parameter, so one good
login also wiped the address's count: someone spraying names from one address with one account of
their own could log in every nineteenth try and never reach the address limit.
"""

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_parameters, get_client_username, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum


class LoginLockoutHandler(AxesDatabaseHandler):
    def get_failures(self, request, credentials: dict | None = None) -> int:
        """The failures that count towards AXES_FAILURE_LIMIT: an account's own, and an
        address's scaled so that it reaches that limit only at the address limit."""
        limit = get_failure_limit(request, credentials)
        address_limit = max(settings.CLARA_LOGIN_IP_FAILURE_LIMIT, limit)
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
            if set(kwargs) == {"ip_address"}:
                failures = limit if failures >= address_limit else min(failures, limit - 1)
            worst = max(worst, failures)
        return worst

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        """On a good login: delete the failures recorded under this account's name only; the
        address's count keeps the other names tried from it."""
        username = get_client_username(request, credentials)
        if not username:
            return 0
        deleted, _ = AccessAttempt.objects.filter(username=username).delete()
        return deleted
