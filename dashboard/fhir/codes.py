"""Clara's own FHIR code systems: the codes the export uses where no standard one honestly fits.

Each is named by a URL under the deployment (`<CLARA_SITE_URL>/fhir/CodeSystem/<name>`), and that
URL serves it as a FHIR `CodeSystem` resource (views.py), so a receiving system can look a code
up. The export (bundle.py) takes every code and display from here. Nothing here is about anyone.
"""

from django.conf import settings

from dashboard import words
from dashboard.alerting.models import AlertStep
from memory.models import Alert, QuestionType

OBSERVATION = {
    "upset-score-weekly": "How upset in conversations, week average (0-100)",
    "conversations-weekly": "Conversations with Clara in the week",
    "repeated-questions": "Questions asked again, by kind of question",
}
COMMUNICATION = {
    "alert-delivery": "An alert e-mail told someone",
    "alert-acknowledgement": "Someone allowed to act took the alert on or closed it",
}
# An urgent moment's reason, or an alert's kind when it has no reason.
ALERT_REASON = {
    **{reason: noun.capitalize() for reason, noun in words.REASON_NOUNS.items()},
    "flagged_by_companion": "Flagged by the companion",
    Alert.Kind.ESCALATION.value: "A moment that needed a person",
    Alert.Kind.DISTRESS_ABOVE_BASELINE.value: "More upset than usual in a conversation",
    Alert.Kind.CHRONIC_REPETITION.value: "Asking the same things more often than usual",
}

SYSTEMS: dict[str, tuple[str, dict[str, str]]] = {
    "observation": ("Clara observations", OBSERVATION),
    "question-kind": (
        "Kinds of question asked again",
        {kind.value: words.question_label(kind) for kind in QuestionType},
    ),
    "alert-reason": ("Why an alert was raised", ALERT_REASON),
    "communication": ("Alert communications", COMMUNICATION),
    "alert-step": ("Steps of an alert's timeline", dict(AlertStep.Kind.choices)),
    "alert-outcome": ("How an alert ended", dict(Alert.Outcome.choices)),
}


def url(name: str) -> str:
    """The canonical URL of one of Clara's code systems."""
    return f"{settings.CLARA_SITE_URL}/fhir/CodeSystem/{name}"


def display(name: str, code: str) -> str:
    """A code's display in its system ("" for a code the system does not list)."""
    return SYSTEMS[name][1].get(code, "")


def code_system(name: str) -> dict:
    """The FHIR R4 CodeSystem resource of one of Clara's code systems (KeyError if unknown)."""
    title, concepts = SYSTEMS[name]
    return {
        "resourceType": "CodeSystem",
        "id": f"clara-{name}",
        "url": url(name),
        "name": "Clara" + "".join(part.capitalize() for part in name.split("-")),
        "title": title,
        "status": "active",
        "publisher": "Clara Memory",
        "caseSensitive": True,
        "content": "complete",
        "count": len(concepts),
        "concept": [{"code": code, "display": text} for code, text in concepts.items()],
    }
