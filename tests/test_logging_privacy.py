"""No personal data in logs or URLs.

Every log record emitted (at any level, by any logger, whether or not a handler would print it)
while a bot talks with a person through the API, the background jobs run, and caregivers use the
dashboard and the admin is captured; none may contain the person's name, what they said, what
Clara answered, or the caregivers' notes, and no URL visited may either.
"""

import logging
import re
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError
from django.test import Client

from dashboard.models import CareRole, CareTeamMembership
from memory import tasks
from memory.conversations import services
from memory.models import Alert, OrganisationMembership, Person, Session
from tests.support.otp import pass_second_factor, verified_client

# Distinctive, so a hit is never a coincidence.
NAME = "Wilhelmina Quarrendon"
PREFERRED = "Minnie-Quill"
SAID = [
    "Where is my budgie Pemberton?",
    "I fell down by the wardrobe and my hip hurts, help me",
    "Did Ottoline phone about the Thursday bridge club?",
]
ANSWER = "Pemberton is snug in his cage by the marigolds, and I am here with you."
NOTE = "Loves talking about her allotment in Chipping Sodbury"
SECRETS = [
    "Wilhelmina",
    "Quarrendon",
    "Minnie-Quill",
    "Pemberton",
    "budgie",
    "wardrobe",
    "Ottoline",
    "bridge club",
    "marigolds",
    "allotment",
    "Sodbury",
]
PASSWORD = "a-long-caregiver-password"


class Everything(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def captured(monkeypatch):
    """Every record any logger handles, propagating or not, with the root at DEBUG."""
    sink = Everything()
    original_handle = logging.Logger.handle

    def handle(self, record):
        sink.handle(record)
        return original_handle(self, record)

    monkeypatch.setattr(logging.Logger, "handle", handle)
    # As with LOG_LEVEL=DEBUG, the most a deployment can log: the root logger at DEBUG, and
    # the levels the settings pin on particular loggers kept.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.DEBUG)
    yield sink
    root.setLevel(level)


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret.lower() in text.lower()]


def _record_text(record: logging.LogRecord) -> str:
    parts = [record.getMessage(), repr(record.args)]
    if record.exc_info:
        parts.append(logging.Formatter().formatException(record.exc_info))
    if record.exc_text:
        parts.append(record.exc_text)
    # Anything passed in `extra=` lands on the record too.
    parts.extend(repr(value) for key, value in vars(record).items() if key not in _STANDARD)
    return "\n".join(parts)


_STANDARD = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime"}


def _bot_conversation(api, visited: list[str]) -> str:
    """The whole bot flow, with the unhappy paths that log: 4xx, 409, 413, 429, 202 and replay."""

    def post(path, body=None, raw=None):
        visited.append(path)
        return api.post(path, body, raw=raw)

    user_id = str(uuid.uuid4())
    session = post("/api/v1/sessions", {"user_id": user_id, "display_name": NAME}).json()
    sid = session["session_id"]
    person = Person.objects.get(id=user_id)
    person.caregiver_context = {"preferredName": PREFERRED, "knownTopics": [NOTE]}
    person.save()
    emotion = {
        "emotion": "anxious",
        "confidence": 0.8,
        "distress_score": 0.7,
        "trajectory": "escalating",
    }
    for turn, said in enumerate(SAID * 2):
        assert post(f"/api/v1/sessions/{sid}/context", {"message": said}).status_code == 200
        assert post(f"/api/v1/sessions/{sid}/query", {"message": said}).status_code == 200
        body = {
            "user_message": said,
            "assistant_message": ANSWER,
            "idempotency_key": f"turn-{turn}",
            "emotion": emotion,
        }
        assert post(f"/api/v1/sessions/{sid}/exchanges", body).status_code == 201
        assert post(f"/api/v1/sessions/{sid}/exchanges", body).status_code == 200  # a retry
    # A key reused for other words (409), bad input naming the field (422), malformed JSON.
    conflict = {
        "user_message": SAID[0] + "!",
        "assistant_message": ANSWER,
        "idempotency_key": "turn-0",
    }
    assert post(f"/api/v1/sessions/{sid}/exchanges", conflict).status_code == 409
    bad = {"user_message": SAID[1], "assistant_message": ANSWER, "emotion": {"emotion": SAID[2]}}
    assert post(f"/api/v1/sessions/{sid}/exchanges", bad).status_code == 422
    assert post(f"/api/v1/sessions/{sid}/context", raw='{"message": "' + SAID[0]).status_code == 422
    unknown = f"/api/v1/sessions/{uuid.uuid4()}"
    visited.append(unknown)
    assert api.get(unknown).status_code == 404
    visited.append(f"/api/v1/sessions/{sid}/messages")
    assert api.get(f"/api/v1/sessions/{sid}/messages", limit=50).status_code == 200
    assert post(f"/api/v1/sessions/{sid}/close", {}).status_code == 200
    return sid


def test_no_personal_data_in_logs_or_urls(api, captured, settings, monkeypatch):
    visited: list[str] = []
    sid = _bot_conversation(api, visited)

    # The database refuses a write: the exchange goes to the recovery log (202) and is replayed.
    second = api.post("/api/v1/sessions", {"display_name": NAME}).json()["session_id"]
    real_record = services.exchange_record

    def refuse(**fields):
        raise OperationalError(f"database is locked while writing {fields['user_message']}")

    monkeypatch.setattr(services, "exchange_record", refuse)
    body = {"user_message": SAID[1], "assistant_message": ANSWER, "idempotency_key": "r-1"}
    assert api.post(f"/api/v1/sessions/{second}/exchanges", body).status_code == 202
    monkeypatch.setattr(services, "exchange_record", real_record)
    assert services.recovery_replay().stored == 1

    # Over the size and rate limits.
    settings.CLARA_API_MAX_BODY_BYTES = 100
    assert api.post(f"/api/v1/sessions/{sid}/context", {"message": SAID[0] * 5}).status_code == 413
    settings.CLARA_API_MAX_BODY_BYTES = 256 * 1024
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 1
    assert api.post(f"/api/v1/sessions/{sid}/context", {"message": SAID[0]}).status_code == 429
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 0

    # The background jobs, run as a worker runs them.
    person_id = str(Session.objects.get(id=sid).person_id)
    tasks.compute_session_summary(sid)
    tasks.update_rolling_summary(sid)
    tasks.compute_person_trends(person_id)
    tasks.expire_idle_sessions()

    # A caregiver: a failed login, a real one, then every dashboard page reachable by links.
    caregiver = get_user_model().objects.create_user(
        "carer-7", password=PASSWORD, first_name="Carer"
    )
    OrganisationMembership.objects.create(
        user=caregiver, organisation_id=Person.objects.get(id=person_id).organisation_id
    )
    CareTeamMembership.objects.create(
        user=caregiver,
        person_id=person_id,
        role=CareRole.ADMIN,
        can_see_transcripts=True,
    )
    # Pages still being built elsewhere may fail; what they log is checked all the same.
    browser = Client(raise_request_exception=False)
    browser.post("/login/", {"username": "carer-7", "password": "wrong-password"})
    login = browser.post("/login/", {"username": "carer-7", "password": PASSWORD})
    assert login.status_code == 302
    pass_second_factor(browser, caregiver)  # a team admin
    pages = _crawl(browser, "/", visited)
    assert any(f"/people/{person_id}/" in page for page in pages), pages
    assert len(pages) >= 5, pages
    # Acting on the escalation alert the fall raised.
    alert = Alert.objects.filter(person_id=person_id).first()
    if alert is not None:
        path = f"/people/{person_id}/alerts/{alert.id}/"
        visited.append(path)
        browser.post(path, {"action": "resolve", "outcome": "well"})

    # An operator in the admin.
    admin = verified_client(
        get_user_model().objects.create_superuser("ops", "ops@example.org", "pw")
    )
    for path in ("/admin/memory/person/", f"/admin/memory/person/{person_id}/change/"):
        visited.append(path)
        assert admin.get(path).status_code == 200

    assert len(captured.records) > 10  # the capture works: requests and jobs did log
    leaks = [
        (record.name, record.levelname, _leaks(_record_text(record)), record.getMessage()[:200])
        for record in captured.records
        if _leaks(_record_text(record))
    ]
    assert leaks == []
    assert [url for url in visited if _leaks(url)] == []


_LINK = re.compile(r"""(?:href|hx-get|hx-post|action)="(/[^"#]*)""")


def _crawl(browser: Client, start: str, visited: list[str], limit: int = 60) -> list[str]:
    """GET every same-site page reachable from `start` (not logout, admin or static files)."""
    seen, queue = set(), [start]
    while queue and len(seen) < limit:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        visited.append(path)
        response = browser.get(path)
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        for link in _LINK.findall(response.content.decode()):
            link = link.replace("&amp;", "&")
            if link.startswith(("/logout", "/admin", "/static", "/login")):
                continue
            visited.append(link)
            if link not in seen:
                queue.append(link)
    return sorted(seen)
