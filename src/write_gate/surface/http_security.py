"""Which Host and Origin headers HTTP accepts, and the address the gate tells clients it has: pure decisions
from the settings.

DNS-rebinding protection is always on: a request must name the gate by a local name or by one the operator
listed (WRITE_GATE_ALLOWED_HOSTS), else the SDK's transport answers 421; a browser page may call it only
from a local origin or one listed (WRITE_GATE_ALLOWED_ORIGINS), else 403. Requests without an Origin
(every non-browser client) are not affected by the origin list.
"""

from mcp.server.transport_security import TransportSecuritySettings

from write_gate.serving.config import Settings

LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")
LOCAL_BINDS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
ALL_INTERFACES = frozenset({"0.0.0.0", "::", "[::]", ""})


def _bracketed(host: str) -> str:
    """A bare IPv6 address as it appears in a Host header."""
    return f"[{host}]" if host.count(":") > 1 and not host.startswith("[") else host


def _has_port(authority: str) -> bool:
    return "]:" in authority if authority.startswith("[") else ":" in authority


def _any_port(authority: str) -> list[str]:
    """`gate` allows `gate` and `gate:<any port>`; `gate:8000` allows just that."""
    return [authority] if _has_port(authority) else [authority, f"{authority}:*"]


def allowed_hosts(settings: Settings) -> list[str]:
    names = [*LOCAL_NAMES]
    if settings.host not in ALL_INTERFACES | LOCAL_BINDS:
        names.append(_bracketed(settings.host))  # bound to one address: requests to it by number pass
    names += [_bracketed(name) for name in settings.allowed_hosts]
    return _unique(pattern for name in names for pattern in _any_port(name))


def allowed_origins(settings: Settings) -> list[str]:
    origins = [f"http://{name}" for name in LOCAL_NAMES] + [origin.rstrip("/") for origin in settings.allowed_origins]
    return _unique(
        pattern
        for origin in origins
        for pattern in ([origin] if _has_port(origin.split("://", 1)[-1]) else [origin, f"{origin}:*"])
    )


def transport_security(settings: Settings) -> TransportSecuritySettings:
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts(settings),
        allowed_origins=allowed_origins(settings),
    )


def public_url(settings: Settings) -> str:
    """Where agents reach the gate: WRITE_GATE_PUBLIC_URL, else the bound address, else (bound to every
    interface) the first host name the operator allowed, else localhost."""
    if settings.public_url is not None:
        return str(settings.public_url).rstrip("/")
    if settings.host not in ALL_INTERFACES:
        return f"http://{_bracketed(settings.host)}:{settings.port}"
    for name in settings.allowed_hosts:
        name = _bracketed(name)
        if name.endswith(":*"):
            name = name[:-2]
        return f"http://{name}" if _has_port(name) else f"http://{name}:{settings.port}"
    return f"http://localhost:{settings.port}"


def unlisted_wildcard_bind(settings: Settings) -> bool:
    """Bound to every interface with no host name listed: only requests addressed to localhost will pass,
    which is safe but rarely what the operator meant; worth a warning at start."""
    return settings.host in ALL_INTERFACES and not settings.allowed_hosts


def _unique(items) -> list[str]:
    return list(dict.fromkeys(items))
