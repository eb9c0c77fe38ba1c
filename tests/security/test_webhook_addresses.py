"""Callback addresses that carry an IPv4 address are judged by it: 6to4 (`2002::/16`), NAT64
(`64:ff9b::/96`), IPv4-mapped, IPv4-translated, IPv4-compatible and Teredo forms of a loopback, private or
link-local IPv4 address are refused like it, unless the operator allows its network (issue 37, also
seen: `[2002:7f00:1::]`, 6to4 for 127.0.0.1, passed the check because its prefix looks global)."""

from __future__ import annotations

import pytest

from core.config import replace
from services import webhooks
from store.models import WebhookDelivery

REFUSED = [
    "2002:7f00:1::",  # 6to4 for 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 for 169.254.169.254 (cloud metadata)
    "2002:a00:1::",  # 6to4 for 10.0.0.1
    "64:ff9b::7f00:1",  # NAT64 for 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 for 169.254.169.254
    "64:ff9b:1::a9fe:a9fe",  # NAT64 local use: the IPv4 cannot be placed, refused
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:0:a00:1",  # IPv4-translated 10.0.0.1
    "::7f00:1",  # IPv4-compatible 127.0.0.1
    "2001:0:808:808::80ff:fffe",  # Teredo, client 127.0.0.1 (obfuscated)
]
PUBLIC = ["2002:808:808::", "64:ff9b::808:808", "::ffff:8.8.8.8", "2001:4860:4860::8888"]
#: addresses Python calls global that are no one host on the internet (the security audit's, all taken)
NOT_ONE_HOST = [
    "fec0::1",  # IPv6 site-local (deprecated, still routed inside some sites)
    "fec0::a:1",
    "ff02::1",  # all nodes on the link
    "ff0e::1",  # a global-scope multicast group
    "224.0.0.1",  # all hosts on the link
    "239.255.255.250",  # SSDP
    "::ffff:224.0.0.1",  # IPv4-mapped multicast
    "2002:e000:1::",  # 6to4 for 224.0.0.1
]


@pytest.fixture
def public_only(settings):  # type: ignore[no-untyped-def]
    return replace(settings, webhook_allowed_networks="")


@pytest.mark.parametrize("address", REFUSED)
def test_an_address_carrying_a_private_ipv4_is_refused(public_only, address: str) -> None:
    url = f"http://[{address}]:8080/hook"
    assert "private, loopback, link-local or multicast" in (webhooks.refused_address(public_only, url) or "")
    attempt = webhooks.send(public_only, webhooks.Message(WebhookDelivery(id=1, url=url), b"{}", "whsec_"))
    assert (attempt.status_code, attempt.reason) == (None, "address not allowed")


@pytest.mark.parametrize("address", PUBLIC)
def test_an_address_carrying_a_public_ipv4_passes(public_only, address: str) -> None:
    assert webhooks.refused_address(public_only, f"https://[{address}]/hook") is None


def test_6to4_loopback_passes_where_loopback_is_allowed(public_only) -> None:
    loopback = replace(public_only, webhook_allowed_networks="127.0.0.0/8")
    assert webhooks.refused_address(loopback, "http://[2002:7f00:1::]/hook") is None
    assert webhooks.refused_address(loopback, "http://[64:ff9b::a9fe:a9fe]/hook") is not None


@pytest.mark.parametrize("address", ["::ffff:10.0.0.1", "::ffff:a00:1", "::ffff:169.254.169.254"])
def test_a_mapped_address_in_dotted_form_is_refused_for_its_address_not_as_a_malformed_url(
    client, auth, address: str
) -> None:
    """marshmallow's URL pattern refused `[::ffff:127.0.0.1]` as "Not a valid URL.", which misled: the URL
    is valid, its address is what is refused (issue 50, item 6)."""
    job = {"kind": "dice", "params": {"dice": 3, "faces": 4}, "callback_url": f"http://[{address}]:8732/"}
    response = client.post("/jobs", json=job, headers=auth)
    assert response.status_code == 422, response.get_json()
    (message,) = response.get_json()["errors"]["callback_url"]
    assert "private, loopback, link-local or multicast" in message and "Not a valid URL" not in message


@pytest.mark.parametrize("address", NOT_ONE_HOST)
def test_multicast_and_site_local_addresses_are_refused(public_only, address: str) -> None:
    host = f"[{address}]" if ":" in address else address
    said = webhooks.refused_address(public_only, f"http://{host}:1900/hook") or ""
    assert "multicast address" in said, said
