"""`GET /api/v1/people/{id}/fhir`: a person over a period as a FHIR R4 Bundle (scope `export`).

It lives in `dashboard` because it is the clinician report's figures and points at its PDF
(dashboard/alerting/report.py), which sit above `memory`; clara/api.py mounts it like every
router. Audited as the JSON export is: who, which person, when, the outcome.
"""

from datetime import date
from typing import Any
from uuid import UUID

from django.utils import timezone
from ninja import Field, Query, Router, Schema

from dashboard.alerting import report
from dashboard.fhir import bundle
from memory.conversations import audit, tenancy
from memory.conversations.models import AccessAction, Scope
from memory.core.errors import Invalid
from memory.core.person import person_zone
from memory.core.schemas import ERRORS

router = Router(tags=["privacy"])


class PeriodQuery(Schema):
    start: date | None = Field(
        None, alias="from", description="First day (YYYY-MM-DD, the person's time)."
    )
    end: date | None = Field(
        None, alias="to", description="Last day, included (default: today; from: 30 days before)."
    )


@router.get(
    "/people/{person_id}/fhir",
    response={200: dict[str, Any], **ERRORS},
)
def person_fhir(request, person_id: UUID, period: Query[PeriodQuery]):
    """The person over a period as a FHIR R4 Bundle (type collection): the Patient (id and
    names only), weekly upset and conversation counts and the questions asked again as
    Observations, active alerts as Flags, alert e-mails and responses as Communications, the
    clinician report as a DocumentReference. No message text. Audited."""
    caller = tenancy.caller_for_key(request.auth)
    with audit.audited(caller, AccessAction.EXPORT_FHIR, person=person_id) as access:
        caller.require(Scope.EXPORT)
        person = tenancy.person_of(caller, person_id)
        today = timezone.now().astimezone(person_zone(person)).date()
        try:
            days = report.period_asked(start=period.start, end=period.end, today=today)
        except report.BadPeriod as bad:
            raise Invalid(bad.detail, field=bad.field) from None
        access.person_id = person_id
        return bundle.person_bundle(person=person, period=days, now=timezone.now())
