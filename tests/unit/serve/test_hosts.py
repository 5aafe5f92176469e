"""Which Host headers `replicate serve` answers (`serve/hosts.py`): the bound address, loopback
names on a loopback bind, any address on a wildcard bind, and the names allowed; never another
name (DNS rebinding) nor a request without one."""

from __future__ import annotations

from replicate.serve import HostCheck, is_loopback


def test_allowed_host_names() -> None:
    loopback = HostCheck("127.0.0.1", frozenset({"trainer.internal"}))
    assert loopback.allows("trainer.internal:8000") and loopback.allows("127.0.0.2")
    assert loopback.allows("localhost") and loopback.allows("[::1]:1")
    assert not loopback.allows("evil.example") and not loopback.allows("10.0.0.1:8000")
    assert not loopback.allows(None) and not loopback.allows("")
    wildcard = HostCheck("0.0.0.0")
    assert wildcard.allows("10.1.2.3:8000") and wildcard.allows("[fe80::1]:8000")
    assert wildcard.allows("localhost") and not wildcard.allows("box.example")
    bound = HostCheck("10.1.2.3", frozenset({"box.example"}))
    assert bound.allows("10.1.2.3:80") and bound.allows("box.example")
    assert not bound.allows("10.1.2.4") and not bound.allows("127.0.0.1")


def test_loopback_hosts() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert is_loopback("[::1]") and not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    assert not is_loopback("example.org")
