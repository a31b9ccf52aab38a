"""/readyz tells only operators what it found (clara/health.py): the internal network, or a
logged-in superuser past the second factor. Anyone else gets the bare status and the same code."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from tests.support.otp import verified_client

pytestmark = pytest.mark.django_db

OUTSIDE = {"REMOTE_ADDR": "203.0.113.9"}


@pytest.fixture
def operator(db):
    return get_user_model().objects.create_superuser("ops", "ops@example.org", "pw-ops-123456")


def test_from_outside_only_the_status():
    response = Client().get("/readyz", **OUTSIDE)
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert connection.vendor.encode() not in response.content


def test_from_outside_an_outage_is_still_a_bare_503(settings):
    settings.CELERY_BROKER_URL = "unknown://"
    response = Client().get("/readyz", **OUTSIDE)
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable"}


def test_the_internal_network_gets_the_details():
    body = Client().get("/readyz", REMOTE_ADDR="127.0.0.1").json()
    assert body["checks"]["database"]["vendor"] == connection.vendor
    assert "pending" in body["checks"]["recovery_log"]


def test_internal_networks_are_a_setting(settings):
    settings.CLARA_INTERNAL_NETWORKS = ["10.1.0.0/16"]
    assert "checks" in Client().get("/readyz", REMOTE_ADDR="10.1.2.3").json()
    assert "checks" not in Client().get("/readyz", REMOTE_ADDR="127.0.0.1").json()


def test_a_forwarded_loopback_address_is_not_believed_without_a_trusted_proxy():
    response = Client().get("/readyz", HTTP_X_FORWARDED_FOR="127.0.0.1", **OUTSIDE)
    assert "checks" not in response.json()


def test_an_operator_past_the_second_factor_gets_the_details_from_anywhere(operator):
    body = verified_client(operator).get("/readyz", **OUTSIDE).json()
    assert body["checks"]["database"]["vendor"] == connection.vendor


def test_a_password_alone_or_a_lesser_login_is_not_enough(operator):
    unverified = Client()
    unverified.force_login(operator)
    assert "checks" not in unverified.get("/readyz", **OUTSIDE).json()
    staff = get_user_model().objects.create_user("ann", password="pw-ann-123456", is_staff=True)
    assert "checks" not in verified_client(staff).get("/readyz", **OUTSIDE).json()
