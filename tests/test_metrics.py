"""GET /metrics: Prometheus text for the internal networks, the 404 of an unknown path for anyone
else, and nothing in it that names a person, a session or anything said."""

import json
import re
import uuid

from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from memory.models import ChatMessage, Person

NAME = "Philippa Thistlewood"
SAID = [
    "Is the greengrocer Bartholomew coming with the quinces today?",
    "I fell down by the wardrobe and my hip hurts, help me",
]
ANSWER = "Bartholomew brings the quinces on Thursday; I'm here with you."
MEMORY = "Grew prize dahlias at the Much Wenlock show"
WORDS = [
    "Philippa",
    "Thistlewood",
    "greengrocer",
    "Bartholomew",
    "quinces",
    "wardrobe",
    "dahlias",
    "Wenlock",
]

OUTSIDE = "203.0.113.9"


def _put(api, path: str, body: dict):
    return api.client.put(
        path, json.dumps(body), content_type="application/json", headers=api.headers
    )


def _bot_flow(api) -> list[str]:
    """Resolve a session, then a turn's context, query, exchange (urgent) and a memory search;
    returns every id the flow saw."""
    user_id = str(uuid.uuid4())
    resolved = api.post("/api/v1/sessions", {"user_id": user_id, "display_name": NAME})
    assert resolved.status_code in (200, 201), resolved.content
    sid = resolved.json()["session_id"]
    ids = [user_id, sid]
    assert _put(
        api,
        "/api/v1/memories",
        {
            "namespace": ["memories", user_id, "hobbies"],
            "key": "dahlias",
            "content": MEMORY,
            "type": "preference",
        },
    ).status_code in (200, 201)
    for turn, said in enumerate(SAID):
        assert api.post(f"/api/v1/sessions/{sid}/context", {"message": said}).status_code == 200
        assert api.post(f"/api/v1/sessions/{sid}/query", {"message": said}).status_code == 200
        stored = api.post(
            f"/api/v1/sessions/{sid}/exchanges",
            {"user_message": said, "assistant_message": ANSWER, "idempotency_key": f"t-{turn}"},
        )
        assert stored.status_code == 201, stored.content
        ids.extend(str(value) for value in stored.json().values() if _is_uuid(value))
    found = api.post(
        "/api/v1/memories/search",
        {"prefix": ["memories", user_id], "query": "dahlias show", "limit": 5},
    )
    assert found.status_code == 200, found.content
    ids.extend(item["memory"]["id"] for item in found.json()["items"])
    # An unknown session: a 404 whose path carries an id.
    unknown = str(uuid.uuid4())
    ids.append(unknown)
    assert api.post(f"/api/v1/sessions/{unknown}/context", {"message": "hi"}).status_code == 404
    ids.extend(
        str(pk) for pk in ChatMessage.objects.filter(session_id=sid).values_list("id", flat=True)
    )
    ids.append(str(Person.objects.get(id=user_id).organisation_id))
    return ids


def _is_uuid(value) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def _scrape() -> str:
    response = Client().get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    return response.content.decode()


def _value(text: str, name: str, **labels) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return 0.0


def test_outside_the_internal_networks_it_is_an_unknown_path(db):
    outsider = Client(REMOTE_ADDR=OUTSIDE)
    metrics = outsider.get("/metrics")
    unknown = outsider.get("/metrixx")
    assert metrics.status_code == unknown.status_code == 404
    # The same page (but for the path and the per-response CSRF token).
    same = [
        re.sub(rb"[A-Za-z0-9]{32,}", b"", r.content.replace(path, b""))
        for r, path in ((metrics, b"metrics"), (unknown, b"metrixx"))
    ]
    assert same[0] == same[1]
    assert b"clara_" not in metrics.content


def test_only_get_and_head_read_the_metrics(db):
    inside = Client()  # the test client's 127.0.0.1: an internal network by default
    refused = inside.post("/metrics")
    assert refused.status_code == 405 and refused["Allow"] == "GET, HEAD"
    assert b"clara_" not in refused.content
    head = inside.head("/metrics")
    assert head.status_code == 200 and not head.content


def test_the_internal_network_is_settable(db, settings):
    settings.CLARA_INTERNAL_NETWORKS = ["10.9.0.0/16"]
    assert Client(REMOTE_ADDR="10.9.3.4").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 404


def test_the_bot_flow_is_measured_and_names_nobody(api, django_capture_on_commit_callbacks):
    before = _scrape()
    with django_capture_on_commit_callbacks(execute=True):
        ids = _bot_flow(api)
    text = _scrape()

    context = "api/v1/sessions/<session_id>/context"
    assert (
        _value(text, "clara_http_request_duration_seconds_count", route=context)
        - _value(before, "clara_http_request_duration_seconds_count", route=context)
        == 3
    )
    assert (
        _value(text, "clara_http_requests_total", route=context, method="POST", status="404")
        - _value(before, "clara_http_requests_total", route=context, method="POST", status="404")
        == 1
    )
    for route in (
        "api/v1/sessions/<session_id>/exchanges",
        "api/v1/sessions/<session_id>/query",
        "api/v1/memories/search",
        "api/v1/sessions",
    ):
        assert _value(text, "clara_http_request_duration_seconds_count", route=route) >= 1, route
    # Database time is recorded per request (the exchange write runs statements).
    assert (
        _value(
            text,
            "clara_http_request_db_seconds_sum",
            route="api/v1/sessions/<session_id>/exchanges",
        )
        > 0
    )
    assert (
        _value(text, "clara_escalations_total", reason="fall")
        - _value(before, "clara_escalations_total", reason="fall")
        == 1
    )
    assert _value(text, "clara_search_memory_bytes") > 0
    assert _value(text, "clara_recovery_log_pending") == 0
    assert _value(text, "clara_celery_broker_up") == 1
    assert "clara_celery_queue_depth" in text

    lowered = text.lower()
    assert [value for value in ids if value.lower() in lowered] == []
    assert [value for value in ids if value.replace("-", "").lower() in lowered] == []
    assert [word for word in WORDS if word.lower() in lowered] == []
    for label in re.findall(r'route="([^"]*)"', text):
        assert "<" in label or "/" not in label or not re.search(r"[0-9a-f]{8}", label), label


def test_jobs_are_timed_and_failures_counted(db):
    from memory import tasks

    name = "memory.tasks.expire_idle_sessions"
    before = _scrape()
    tasks.expire_idle_sessions.apply()
    text = _scrape()
    assert (
        _value(text, "clara_task_duration_seconds_count", task=name)
        - _value(before, "clara_task_duration_seconds_count", task=name)
        == 1
    )

    failing = "memory.tasks.compute_session_summary"
    failures_before = _value(text, "clara_task_failures_total", task=failing)
    result = tasks.compute_session_summary.apply(args=["not-a-session-id"])
    assert result.failed()  # a malformed id is not retried: it fails for good
    assert _value(_scrape(), "clara_task_failures_total", task=failing) - failures_before == 1


def test_the_embedded_broker_queue_is_counted(db, settings, tmp_path):
    from clara import metrics

    queue = tmp_path / "queue"
    queue.mkdir()
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": str(queue)}
    settings.CELERY_TASK_DEFAULT_QUEUE = "clara-test"
    for n in range(3):
        (queue / f"{n}_x.clara-test.msg").write_text("{}")
    (queue / "9_x.other.msg").write_text("{}")
    assert metrics.queue_depth() == 3
