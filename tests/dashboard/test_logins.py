"""Logins: django-axes locks an account from one address, an address, and an account from
anywhere (each with its own limit, dashboard/lockout.py), the client's
address comes from X-Forwarded-For only through a trusted proxy (clara/client_ip.py), and
passwords follow the validators (12 characters at least, not common, not like the login)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client, RequestFactory
from django.urls import reverse

from clara.client_ip import client_ip, is_internal
from tests.dashboard.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def _try(username: str, password: str = "wrong-password", **meta):
    return Client().post(
        reverse("dashboard:login"), {"username": username, "password": password}, **meta
    )


def _locked(response) -> bool:
    return response.status_code == 429 and b"Login paused" in response.content


def test_spraying_many_names_from_one_address_locks_that_address(alice, settings):
    settings.CLARA_LOGIN_IP_FAILURE_LIMIT = 8
    for index in range(7):
        assert not _locked(_try(f"someone{index}", REMOTE_ADDR="198.51.100.7"))
    _try("someone7", REMOTE_ADDR="198.51.100.7")  # the address limit's failure locks
    # Even alice's right password is refused from there now...
    assert _locked(_try("alice", PASSWORD, REMOTE_ADDR="198.51.100.7"))
    # ...while alice from her own address is fine.
    assert _try("alice", PASSWORD, REMOTE_ADDR="203.0.113.20").status_code == 302


def test_a_care_home_behind_one_address_outlasts_the_account_limit(alice, settings):
    """Staff sharing one address make more typos between them than one account may: the
    address limit is higher, so the home is not locked out when a few people mistype."""
    settings.CLARA_LOGIN_IP_FAILURE_LIMIT = 20
    assert settings.CLARA_LOGIN_IP_FAILURE_LIMIT > settings.AXES_FAILURE_LIMIT
    home = {"REMOTE_ADDR": "198.51.100.7"}
    for index in range(16):  # four staff, four typos each
        assert not _locked(_try(f"staff{index % 4}", **home))
    _try("staff0", **home)  # staff0's fifth
    # The account past the account limit is locked from there...
    assert _locked(_try("staff0", PASSWORD, **home))
    # ...and the address, with 17 failures, is not.
    assert _try("alice", PASSWORD, **home).status_code == 302


def test_a_good_login_does_not_clear_the_other_names_tried_from_its_address(alice, settings):
    """Spraying names from one address with one account of one's own: logging into that
    account between guesses must not reset the address's count."""
    settings.CLARA_LOGIN_IP_FAILURE_LIMIT = 8
    sprayer = {"REMOTE_ADDR": "198.51.100.7"}
    for index in range(7):
        assert not _locked(_try(f"someone{index}", **sprayer))
    assert _try("alice", PASSWORD, **sprayer).status_code == 302
    _try("someone7", **sprayer)  # the eighth name from this address
    assert _locked(_try("alice", PASSWORD, **sprayer))


def test_a_good_login_forgives_that_accounts_own_typos(alice, settings):
    settings.CLARA_LOGIN_IP_FAILURE_LIMIT = 20
    home = {"REMOTE_ADDR": "198.51.100.7"}
    for _ in range(4):
        assert not _locked(_try("alice", **home))
    assert _try("alice", PASSWORD, **home).status_code == 302
    # Her four typos are forgotten: four more do not reach the account limit of five.
    for _ in range(4):
        assert not _locked(_try("alice", **home))
    assert _try("alice", PASSWORD, **home).status_code == 302


def test_guessing_one_name_from_many_addresses_locks_that_name(alice, settings):
    settings.CLARA_LOGIN_ACCOUNT_FAILURE_LIMIT = 8
    for index in range(7):
        assert not _locked(_try("alice", REMOTE_ADDR=f"198.51.100.{index + 1}"))
    _try("alice", REMOTE_ADDR="198.51.100.8")  # the account limit's failure locks
    assert _locked(_try("alice", PASSWORD, REMOTE_ADDR="203.0.113.20"))


def test_five_wrong_passwords_from_a_strangers_address_do_not_lock_the_caregiver_out(alice):
    """Issue 30: anyone could lock a named caregiver out for 15 minutes. Now the stranger's
    address is locked out of the account; the caregiver, from the care home, is not."""
    stranger = {"REMOTE_ADDR": "198.51.100.7"}
    home = {"REMOTE_ADDR": "203.0.113.20"}
    for _ in range(4):
        assert not _locked(_try("alice", **stranger))
    _try("alice", **stranger)  # the fifth locks the pair
    assert _locked(_try("alice", PASSWORD, **stranger))
    assert _try("alice", PASSWORD, **home).status_code == 302
    # Her good login at home does not open the account to the stranger's address again.
    assert _locked(_try("alice", PASSWORD, **stranger))
    assert _locked(_try("alice", **stranger))


def test_without_a_trusted_proxy_a_forwarded_address_is_ignored(alice, settings):
    settings.CLARA_TRUSTED_PROXIES = []
    # Someone forging X-Forwarded-For to lock out another address only locks out themselves.
    for index in range(5):
        _try(
            f"someone{index}",
            REMOTE_ADDR="198.51.100.7",
            HTTP_X_FORWARDED_FOR="203.0.113.20",
        )
    assert _try("alice", PASSWORD, REMOTE_ADDR="203.0.113.20").status_code == 302


def test_behind_a_trusted_proxy_each_client_is_counted_by_its_own_address(alice, settings):
    settings.CLARA_TRUSTED_PROXIES = ["10.0.0.0/8"]
    settings.CLARA_LOGIN_IP_FAILURE_LIMIT = 5
    via_proxy = {"REMOTE_ADDR": "10.0.0.2"}
    for index in range(5):
        _try(f"someone{index}", HTTP_X_FORWARDED_FOR="198.51.100.7", **via_proxy)
    # The attacker's address is locked; another client behind the same proxy is not.
    assert _locked(_try("alice", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.7", **via_proxy))
    response = _try("alice", PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.20", **via_proxy)
    assert response.status_code == 302


@pytest.mark.parametrize(
    ("remote", "forwarded", "expected"),
    [
        ("198.51.100.7", "", "198.51.100.7"),
        ("198.51.100.7", "203.0.113.1", "198.51.100.7"),  # not a proxy of ours
        ("10.0.0.2", "203.0.113.1", "203.0.113.1"),
        # A client's own forged entry sits left of what our proxy appended.
        ("10.0.0.2", "127.0.0.1, 203.0.113.1", "203.0.113.1"),
        ("10.0.0.2", "203.0.113.1, 10.0.0.9", "203.0.113.1"),  # two of our proxies
        ("10.0.0.2", "", "10.0.0.2"),
        ("10.0.0.2", "garbage", None),
        ("10.0.0.2", "[2001:db8::1]:4711", "2001:db8::1"),
    ],
)
def test_client_address(remote, forwarded, expected, settings):
    settings.CLARA_TRUSTED_PROXIES = ["10.0.0.0/8"]
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_ip(request) == expected


def test_a_forged_loopback_address_is_not_internal(settings):
    settings.CLARA_TRUSTED_PROXIES = ["10.0.0.0/8"]
    request = RequestFactory().get(
        "/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="127.0.0.1, 203.0.113.1"
    )
    assert not is_internal(request)
    assert is_internal(RequestFactory().get("/", REMOTE_ADDR="127.0.0.1"))


@pytest.mark.parametrize(
    "password",
    ["short-pass1", "password1234", "alice.carer.home", "123456789012345"],
    ids=["11 characters", "common", "like the login", "numbers only"],
)
def test_weak_passwords_are_refused(password):
    user = get_user_model()(username="alice.carer", email="alice.carer@home.example")
    with pytest.raises(ValidationError):
        validate_password(password, user)


def test_a_long_uncommon_password_is_accepted():
    user = get_user_model()(username="alice.carer")
    validate_password("heron-lantern-quiet-41", user)
