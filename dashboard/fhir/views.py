"""Clara's FHIR code systems at the URLs that name them (codes.py): public, about no one."""

from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from dashboard.fhir import codes


@require_GET
def code_system(request: HttpRequest, name: str) -> JsonResponse:
    """One of Clara's code systems as a FHIR R4 CodeSystem resource."""
    if name not in codes.SYSTEMS:
        raise Http404("No such code system.")
    return JsonResponse(codes.code_system(name), content_type="application/fhir+json")
