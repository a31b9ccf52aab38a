"""Response headers (CSP, no-store), the per-key rate limit and the API body size limit."""

import json
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth import get_user_model
from django.http import HttpResponse

from clara import ratelimit
from clara.middleware import PrivacyHeadersMiddleware
from memory.conversations import services
from tests.conftest import ApiClient
from tests.support.otp import verified_client


@pytest.fixture
def staff_client(db):
    user = get_user_model().objects.create_superuser("ops", "ops@example.org", "pw-ops-123")
    return verified_client(user)


# --- Headers --------------------------------------------------------------------------------


def test_api_responses_are_never_stored(api):
    response = api.post("/api/v1/sessions", {})

    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_error_responses_are_never_stored_either(anonymous_api):
    response = anonymous_api.post("/api/v1/sessions", {})

    assert response.status_code == 401
    assert response["Cache-Control"] == "no-store"


def test_the_bot_api_runs_without_the_browser_middlewares(staff_client, api_key):
    # A browser's login cookie on a bot request: the API neither reads nor renews the login
    # (no session saved, no cookie set, nothing varies by cookie) and wants no CSRF token.
    staff_client.handler.enforce_csrf_checks = True
    api_response = staff_client.post(
        "/api/v1/sessions",
        "{}",
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_key}"},
    )

    assert api_response.status_code == 201
    assert not api_response.cookies
    assert "Cookie" not in api_response.get("Vary", "")
    # The same login on the dashboard still goes through all of them.
    page = staff_client.get("/admin/")
    assert page.status_code == 200
    assert "Cookie" in page["Vary"]
    refused = staff_client.post("/admin/logout/")
    assert refused.status_code == 403  # no CSRF token


def test_admin_pages_carry_the_policy(staff_client):
    response = staff_client.get("/admin/memory/person/")

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    policy = response["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    # No inline script and no eval: only files from our own origin run.
    assert directives["script-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"


def test_a_view_that_already_says_no_store_keeps_its_header(staff_client):
    # The admin marks its pages never_cache; the middleware leaves a no-store header as it is.
    response = staff_client.get("/admin/")

    assert "no-store" in response["Cache-Control"]
    assert "private" in response["Cache-Control"]


def test_static_files_and_liveness_keep_their_own_caching(rf):
    def static_file(request):
        response = HttpResponse("body{}", content_type="text/css")
        response["Cache-Control"] = "max-age=315360000, public, immutable"
        return response

    middleware = PrivacyHeadersMiddleware(static_file)
    css = middleware(rf.get("/static/css/app.abc123.css"))
    live = PrivacyHeadersMiddleware(lambda request: HttpResponse("{}"))(rf.get("/healthz"))

    assert css["Cache-Control"] == "max-age=315360000, public, immutable"
    assert "Content-Security-Policy" not in css
    assert "Cache-Control" not in live


def test_a_cacheable_page_is_made_no_store(rf):
    def page(request):
        response = HttpResponse("<p>Nana</p>")
        response["Cache-Control"] = "public, max-age=600"
        return response

    response = PrivacyHeadersMiddleware(page)(rf.get("/people/1/"))

    assert response["Cache-Control"] == "no-store"


def test_dashboard_pages_carry_the_headers(client, db):
    # Whatever the login page redirects or renders, it gets both headers.
    response = client.get("/")

    assert response["Cache-Control"] == "no-store"
    assert "Content-Security-Policy" in response


# --- Rate limit -----------------------------------------------------------------------------


def test_over_the_limit_a_key_gets_429_with_retry_after(api, settings):
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 3

    statuses = [api.post("/api/v1/sessions", {}).status_code for _ in range(3)]
    refused = api.post("/api/v1/sessions", {})

    assert statuses == [201, 201, 201]
    assert refused.status_code == 429
    # Up to two windows: the full current window must end, then slide out far enough.
    assert 1 <= int(refused["Retry-After"]) <= 120
    body = refused.json()
    assert body["code"] == "rate_limited"
    assert set(body) == {"detail", "code", "field"}
    assert refused["Cache-Control"] == "no-store"


def test_a_refused_request_changes_nothing(api, settings):
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 1
    api.post("/api/v1/sessions", {})
    session_id = str(uuid.uuid4())

    refused = api.post("/api/v1/sessions", {"session_id": session_id})

    assert refused.status_code == 429
    # The session was not created: a read with another key (own budget) says so.
    other = ApiClient(services.api_key_create(name="reader")[1])
    assert other.get(f"/api/v1/sessions/{session_id}").status_code == 404


def test_each_key_has_its_own_budget(api, settings):
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 2
    other = ApiClient(services.api_key_create(name="second bot")[1])

    for _ in range(2):
        api.post("/api/v1/sessions", {})

    assert api.post("/api/v1/sessions", {}).status_code == 429
    assert other.post("/api/v1/sessions", {}).status_code == 201


def test_the_limit_covers_every_endpoint(api, settings):
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 1
    session_id = api.post("/api/v1/sessions", {}).json()["session_id"]

    assert api.get(f"/api/v1/sessions/{session_id}").status_code == 429
    assert (
        api.post(f"/api/v1/sessions/{session_id}/context", {"message": "Hello"}).status_code == 429
    )


def test_a_wrong_key_spends_no_budget(api, api_key, settings):
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 1
    prefix = api_key.split("_")[1]
    impostor = ApiClient(f"clara_{prefix}_not-the-secret")

    assert impostor.post("/api/v1/sessions", {}).status_code == 401
    assert api.post("/api/v1/sessions", {}).status_code == 201


def test_zero_turns_the_limit_off(api, settings):
    settings.CLARA_API_RATE_LIMIT_PER_MINUTE = 0

    statuses = {api.post("/api/v1/sessions", {}).status_code for _ in range(5)}

    assert statuses == {201}


def test_the_window_slides():
    client_id = f"test:{uuid.uuid4()}"
    start = 6000.0  # the start of a window

    full = [ratelimit.hit(client_id=client_id, limit=10, now=start + i).allowed for i in range(11)]
    # Half a window later, half of the previous window still counts: 5 left.
    later = [
        ratelimit.hit(client_id=client_id, limit=10, now=start + 90 + i * 0.01) for i in range(6)
    ]

    assert full == [True] * 10 + [False]
    assert [d.allowed for d in later] == [True] * 5 + [False]
    assert later[-1].retry_after >= 1


def test_a_window_of_an_hour_slides_over_the_hour():
    """The password-reset limits count per hour on the same counters."""
    client_id = f"test:{uuid.uuid4()}"
    start = 360000.0  # the start of an hour window

    first = [
        ratelimit.hit(client_id=client_id, limit=3, now=start + i * 600, window=3600)
        for i in range(4)
    ]
    # Half an hour into the next window, half of the previous one still counts: 1.5 of 3.
    later = [
        ratelimit.hit(client_id=client_id, limit=3, now=start + 5400 + i, window=3600)
        for i in range(3)
    ]

    assert [d.allowed for d in first] == [True, True, True, False]
    assert [d.allowed for d in later] == [True, False, False]
    assert 1 <= later[-1].retry_after <= 3600


def test_retry_after_is_when_the_next_request_fits():
    client_id = f"test:{uuid.uuid4()}"
    for i in range(10):
        ratelimit.hit(client_id=client_id, limit=10, now=6000.0 + i)

    refused = ratelimit.hit(client_id=client_id, limit=10, now=6030.0)
    too_early = ratelimit.hit(client_id=client_id, limit=10, now=6030.0 + refused.retry_after - 2)
    in_time = ratelimit.hit(client_id=client_id, limit=10, now=6030.0 + refused.retry_after)

    assert not refused.allowed
    assert not too_early.allowed
    assert in_time.allowed


# --- Body size ------------------------------------------------------------------------------


def test_an_oversized_body_gets_413_and_stores_nothing(api, settings):
    settings.CLARA_API_MAX_BODY_BYTES = 1000
    session_id = str(uuid.uuid4())
    body = {"session_id": session_id, "display_name": "x" * 2000}

    response = api.post("/api/v1/sessions", body)

    assert response.status_code == 413
    assert response.json() == {
        "detail": f"The body is {len(json.dumps(body))} bytes; the limit is 1000.",
        "code": "too_large",
        "field": "body",
    }
    settings.CLARA_API_MAX_BODY_BYTES = 256 * 1024
    assert api.get(f"/api/v1/sessions/{session_id}").status_code == 404


def test_the_largest_valid_exchange_fits_the_default_limit(api):
    session_id = api.post("/api/v1/sessions", {}).json()["session_id"]
    # 8,000 characters each (the schema's limit), all of them escaped as \\uXXXX in JSON.
    body = {
        "user_message": "\u00e9" * 8000,
        "assistant_message": "\u00e9" * 8000,
        "idempotency_key": "big-1",
    }
    raw = json.dumps(body, ensure_ascii=True)
    assert len(raw) > 90_000

    response = api.post(f"/api/v1/sessions/{session_id}/exchanges", raw=raw)

    assert response.status_code == 201, response.content


# --- Keys in the admin ----------------------------------------------------------------------


def test_the_admin_lists_keys_with_their_last_use_and_revoking_stops_one(api, staff_client):
    from memory.models import ApiKey

    assert api.post("/api/v1/sessions", {}).status_code == 201
    key = ApiKey.objects.get(name="test bot")
    listing = staff_client.get("/admin/memory/apikey/")

    assert key.last_used_at is not None
    assert key.prefix in listing.content.decode()
    assert "last used" in listing.content.decode().lower()

    staff_client.post(
        "/admin/memory/apikey/", {"action": "revoke_keys", "_selected_action": [key.pk]}
    )

    assert api.post("/api/v1/sessions", {}).status_code == 401


def test_concurrent_requests_never_overshoot_the_limit():
    # Without Redis the counter is a record in a file, read and rewritten under a lock: requests
    # racing from many threads (each its own open file, as separate processes would have) must
    # neither lose an increment nor let more through than the limit.
    client_id = f"test:{uuid.uuid4()}"
    now = 6000.0 + 30

    def burst() -> int:
        return sum(ratelimit.hit(client_id=client_id, limit=50, now=now).allowed for _ in range(20))

    with ThreadPoolExecutor(max_workers=8) as pool:
        allowed = sum(pool.map(lambda _: burst(), range(8)))

    assert allowed == 50
    # A second into the next window 59/60 of this window's 50 still count (49.2 + 1 > 50); half
    # a window in, half of them do (25 + 1), which would be 80 + 1 had the refusals counted.
    assert ratelimit.hit(client_id=client_id, limit=50, now=now + 31).allowed is False
    assert ratelimit.hit(client_id=client_id, limit=50, now=now + 60).allowed is True
