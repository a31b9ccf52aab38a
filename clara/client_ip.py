"""The address a request came from, and whether it is on the internal network.

`X-Forwarded-For` is anyone's to write, so it is believed only when the connection itself comes
from a proxy listed in CLARA_TRUSTED_PROXIES; then the nearest address in the header that is not
one of those proxies is the client (a client may prepend anything, but the proxies append what
they saw). With no trusted proxies, the connection's own address (REMOTE_ADDR) is the client.
django-axes (login lockouts per address) and /readyz (details for the internal network) both ask
here, so the two never disagree about who is asking.
"""

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=16)
def _networks(spec: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in spec)


def _address(value: str | None):
    if not value:
        return None
    value = value.strip()
    # "[::1]:443" or "203.0.113.5:1234" from some proxies: drop the port.
    if value.startswith("[") and "]" in value:
        value = value[1 : value.index("]")]
    elif value.count(":") == 1:
        value = value.split(":", 1)[0]
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def in_networks(address, spec) -> bool:
    """Whether `address` (an ip_address, or None) is in one of the networks `spec` lists."""
    if address is None:
        return False
    return any(address in network for network in _networks(tuple(spec)))


def client_ip(request: HttpRequest) -> str | None:
    """The client's address as a string (None when REMOTE_ADDR is missing or malformed)."""
    address = _client_address(request)
    return None if address is None else str(address)


def _client_address(request: HttpRequest):
    remote = _address(request.META.get("REMOTE_ADDR"))
    proxies = settings.CLARA_TRUSTED_PROXIES
    if remote is None or not proxies or not in_networks(remote, proxies):
        return remote
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    # Right to left: the last hop our proxy added first; skip our own proxies.
    for item in reversed([part for part in forwarded.split(",") if part.strip()]):
        address = _address(item)
        if address is None:
            # Our proxies write well-formed addresses: a garbled hop means the header is not
            # what we think, so nobody is named (never the proxy, which may look internal).
            return None
        if not in_networks(address, proxies):
            return address
    return remote


def is_internal(request: HttpRequest) -> bool:
    """Whether the request comes from CLARA_INTERNAL_NETWORKS (loopback by default)."""
    return in_networks(_client_address(request), settings.CLARA_INTERNAL_NETWORKS)
