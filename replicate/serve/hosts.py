"""Which `Host` headers the server answers: the address it is bound to, and the names allowed.

A web page the operator opens can send requests to a server on loopback; under DNS rebinding its
own name comes to point at 127.0.0.1, so the browser lets it read the answers too.  Such a
request carries the page's name in `Host`, never this server's address, so answering only the
Hosts below (421 for any other) shuts it out.  An IP literal cannot be rebound: it is answered
when it is the bound address (any address for a wildcard bind; any loopback address for a
loopback bind); a name only when it is `localhost` on a loopback or wildcard bind, the bound
name itself, or one allowed by `--allow-host-name`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback IP literal (IPv6 with or without brackets)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    address = _address(host)
    return address is not None and address.is_loopback


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def host_name(header: str) -> str:
    """The name or address of a Host header, without its port (and IPv6 brackets kept off)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


@dataclass(frozen=True)
class HostCheck:
    bind: str  # the address or name the server listens on
    names: frozenset[str] = frozenset()  # more names to answer (`--allow-host-name`)

    def allows(self, header: str | None) -> bool:
        if not header:
            return False
        host = host_name(header)
        asked = _address(host)
        bound = _address(self.bind)
        if asked is not None:
            if bound is None:
                return is_loopback(self.bind) and asked.is_loopback
            same = asked == bound or (bound.is_loopback and asked.is_loopback)
            return same or bound.is_unspecified
        allowed = {name.lower() for name in self.names} | {self.bind.lower()}
        if is_loopback(self.bind) or (bound is not None and bound.is_unspecified):
            allowed |= LOOPBACK_NAMES
        return host in allowed
