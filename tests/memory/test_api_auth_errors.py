"""Auth errors say what is wrong, and every error under /api/ is JSON.

Each way a key can be wrong is a 401 with its own `code`, `field: "Authorization"` and
`WWW-Authenticate: Bearer` (RFC 6750: `error="invalid_token"` only when a key was offered). A
guessed key prefix is answered exactly like an unknown key, whoever's key it is.
"""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from memory.conversations import services, tenancy

URL = "/api/v1/webhooks"


def _get(**headers):
    return Client().get(URL, headers=headers)


def _assert_401(response, code: str, *, invalid_token: bool) -> dict:
    assert response.status_code == 401
    body = response.json()
    assert body["code"] == code
    assert body["field"] == "Authorization"
    challenge = response["WWW-Authenticate"]
    assert challenge.startswith('Bearer realm="clara"')
    assert ('error="invalid_token"' in challenge) is invalid_token
    return body


@pytest.mark.django_db
def test_no_key_is_missing_api_key():
    body = _assert_401(_get(), "missing_api_key", invalid_token=False)
    assert "Authorization: Bearer" in body["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("header", ["Token abc", "Basic dXNlcjpwYXNz", "clara_ab_cd"])
def test_another_scheme_is_unsupported_and_not_echoed(header):
    body = _assert_401(_get(Authorization=header), "unsupported_auth_scheme", invalid_token=False)
    assert "Bearer" in body["detail"]
    assert header.split()[-1] not in body["detail"]


@pytest.mark.django_db
def test_an_x_api_key_header_is_told_to_use_authorization_bearer(api_key):
    body = _assert_401(
        _get(**{"X-API-Key": api_key}), "unsupported_auth_scheme", invalid_token=False
    )
    assert "X-API-Key" in body["detail"]
    assert "Authorization: Bearer" in body["detail"]


@pytest.mark.django_db
@pytest.mark.django_db
@pytest.mark.parametrize("header", ["Bearer ", "Bearer"])
def test_a_bearer_with_no_token_is_a_missing_key(header):
    _assert_401(_get(Authorization=header), "missing_api_key", invalid_token=False)


@pytest.mark.django_db
def test_the_scheme_s_case_does_not_matter(api_key):
    assert _get(Authorization=f"bearer {api_key}").status_code == 200


@pytest.mark.parametrize("token", ["not-a-clara-key", "clara_only", "clara__x"])
def test_a_token_that_is_not_a_clara_key_is_malformed(token):
    _assert_401(_get(Authorization=f"Bearer {token}"), "malformed_api_key", invalid_token=True)


@pytest.mark.django_db
def test_an_unknown_key_is_unknown():
    _assert_401(
        _get(Authorization="Bearer clara_00000000_x"), "unknown_api_key", invalid_token=True
    )


@pytest.mark.django_db
def test_a_revoked_key_is_revoked():
    key, raw = services.api_key_create(name="old bot")
    services.api_key_revoke(key=key)
    _assert_401(_get(Authorization=f"Bearer {raw}"), "revoked_api_key", invalid_token=True)


@pytest.mark.django_db
def test_an_expired_key_is_expired():
    _, raw = services.api_key_create(
        name="trial bot", expires_at=timezone.now() - timedelta(minutes=1)
    )
    _assert_401(_get(Authorization=f"Bearer {raw}"), "expired_api_key", invalid_token=True)


@pytest.mark.django_db
def test_a_real_prefix_with_a_wrong_secret_reads_exactly_like_an_unknown_key():
    # Another organisation's key, revoked even: without its secret nothing about it shows.
    organisation = tenancy.organisation_get_or_create("elsewhere")
    key, raw = services.api_key_create(name="theirs", organisation_id=organisation.pk)
    services.api_key_revoke(key=key)
    guessed = _get(Authorization=f"Bearer {raw[:-4]}abcd")
    unknown = _get(Authorization="Bearer clara_ffffffff_abcd")
    assert guessed.status_code == unknown.status_code == 401
    assert guessed.json() == unknown.json()
    assert guessed["WWW-Authenticate"] == unknown["WWW-Authenticate"]


@pytest.mark.django_db
def test_a_good_key_still_gets_in(api_key):
    assert _get(Authorization=f"Bearer {api_key}").status_code == 200


def test_a_wrong_method_is_a_json_405_naming_the_allowed_ones(client):
    response = client.delete("/api/v1/sessions")
    assert response.status_code == 405
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == "method_not_allowed"
    assert "POST" in response["Allow"]
    assert "POST" in response.json()["detail"]


@pytest.mark.parametrize("path", ["/api/v1/", "/api/v1/nothing-here", "/api/v2/sessions", "/api/"])
def test_an_unknown_api_path_is_a_json_404(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == "not_found"


def test_an_unknown_host_on_the_api_is_a_json_400(client):
    response = client.get("/api/v1/sessions/x", headers={"Host": "evil.example"})
    assert response.status_code == 400
    assert response.json()["code"] == "malformed"
    # Still private: the privacy headers are on the shaped answer too.
    assert "no-store" in response["Cache-Control"]
