"""The bot API's whole-person endpoints: export everything stored about a person, erase them.

Both are audited (memory.conversations.audit): who, which person, when, and the outcome.
"""

from typing import Any, Literal
from uuid import UUID

from django.http import HttpResponse
from ninja import Router

from memory import privacy
from memory.conversations import audit, tenancy
from memory.conversations.models import AccessAction, AccessOutcome, Scope
from memory.core.errors import Invalid
from memory.core.schemas import ERRORS, RequestSchema

router = Router(tags=["privacy"])


class EraseIn(RequestSchema):
    # The person's id again: erasure cannot happen by a mistyped URL alone.
    confirm: UUID


# `format=csv` answers text/csv: documented beside the JSON, so a generated client reads it as text.
CSV_RESPONSE = {
    "responses": {
        # An int, as ninja keys its own responses, so the two merge.
        200: {
            "description": "Everything stored (JSON), or the memories as CSV with `format=csv`.",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        }
    }
}


@router.get(
    "/people/{person_id}/export",
    response={200: dict[str, Any], **ERRORS},
    openapi_extra=CSV_RESPONSE,
)
def person_export(request, person_id: UUID, format: Literal["json", "csv"] = "json"):
    """Everything stored about a person as JSON, or their memories as CSV."""
    caller = tenancy.caller_for_key(request.auth)
    action = AccessAction.EXPORT_CSV if format == "csv" else AccessAction.EXPORT_JSON
    with audit.audited(caller, action, person=person_id) as access:
        caller.require(Scope.EXPORT)
        tenancy.person_check(caller, person_id)
        access.person_id = person_id
        if format == "csv":
            response = HttpResponse(
                privacy.person_export_csv(person_id), content_type="text/csv; charset=utf-8"
            )
            response["Content-Disposition"] = f'attachment; filename="memories-{person_id}.csv"'
            return response
        return privacy.person_export(person_id)


@router.post("/people/{person_id}/erase", response={200: dict[str, int], **ERRORS})
def person_erase(request, person_id: UUID, payload: EraseIn):
    """Erase a person and everything that refers to them. Irreversible; `confirm` repeats the id."""
    caller = tenancy.caller_for_key(request.auth)
    # An erasure's row names no one: once erased there is no one to point at (as a dashboard
    # erasure's row, whose person is set to null). A refused one names the person.
    with audit.audited(caller, AccessAction.ERASE, person=person_id) as access:
        caller.require(Scope.ERASE)
        tenancy.person_check(caller, person_id)
        if payload.confirm != person_id:
            # Audited as an attempt with the wrong confirmation, naming the (existing) person.
            access.person_id = person_id
            access.outcome_if_invalid = AccessOutcome.UNCONFIRMED
            raise Invalid("confirm must repeat the person's id.", field="confirm")
        return privacy.person_erase(person_id)
