"""Login lockout with two limits: one per account, a higher one per address.

django-axes counts failures per username and per address (AXES_LOCKOUT_PARAMETERS) but compares
every count with the one AXES_FAILURE_LIMIT. A care home's staff share one public address, so
five typos across the whole home would lock everyone out. Here the address count is compared
with its own, higher limit (CLARA_LOGIN_IP_FAILURE_LIMIT): guessing one account still stops at
AXES_FAILURE_LIMIT, and spraying many names from one address stops at the address limit.
"""

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_parameters, get_client_username, get_failure_limit
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
