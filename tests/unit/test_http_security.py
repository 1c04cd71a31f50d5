"""Which Host and Origin headers HTTP accepts, and the address the gate gives in its metadata (pure)."""

import pytest

from write_gate.serving.config import Settings
from write_gate.surface.http_security import allowed_hosts, allowed_origins, public_url, unlisted_wildcard_bind

LOCAL = ["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"]


def settings(**values: object) -> Settings:
    return Settings.model_validate(values)


def test_bound_to_localhost_only_local_names() -> None:
    assert allowed_hosts(settings()) == LOCAL
    assert allowed_origins(settings()) == [
        "http://127.0.0.1",
        "http://127.0.0.1:*",
        "http://localhost",
        "http://localhost:*",
        "http://[::1]",
        "http://[::1]:*",
    ]


def test_listed_names_without_a_port_allow_any_port_and_with_one_only_it() -> None:
    hosts = allowed_hosts(settings(host="0.0.0.0", allowed_hosts="gate, gate.example.com:443, 2001:db8::1"))
    assert hosts == [*LOCAL, "gate", "gate:*", "gate.example.com:443", "[2001:db8::1]", "[2001:db8::1]:*"]
    origins = allowed_origins(settings(allowed_origins="https://app.example.com/,http://tool:3000"))
    assert origins[-3:] == ["https://app.example.com", "https://app.example.com:*", "http://tool:3000"]


def test_bound_to_one_address_that_address_passes() -> None:
    assert allowed_hosts(settings(host="10.0.0.5"))[-2:] == ["10.0.0.5", "10.0.0.5:*"]
    assert allowed_hosts(settings(host="::")) == LOCAL


@pytest.mark.parametrize(
    ("values", "url"),
    [
        ({}, "http://127.0.0.1:8000"),
        ({"host": "10.0.0.5", "port": 9000}, "http://10.0.0.5:9000"),
        ({"host": "fd00::5"}, "http://[fd00::5]:8000"),
        ({"host": "0.0.0.0"}, "http://localhost:8000"),
        ({"host": "0.0.0.0", "allowed_hosts": "gate"}, "http://gate:8000"),
        ({"host": "0.0.0.0", "allowed_hosts": "gate:*"}, "http://gate:8000"),
        ({"host": "0.0.0.0", "allowed_hosts": "gate.example.com:443"}, "http://gate.example.com:443"),
        ({"host": "0.0.0.0", "public_url": "https://gate.example.com/"}, "https://gate.example.com"),
    ],
)
def test_public_url(values: dict[str, object], url: str) -> None:
    assert public_url(settings(**values)) == url


def test_a_wildcard_bind_with_no_names_listed_is_worth_a_warning() -> None:
    assert unlisted_wildcard_bind(settings(host="0.0.0.0"))
    assert not unlisted_wildcard_bind(settings(host="0.0.0.0", allowed_hosts="gate"))
    assert not unlisted_wildcard_bind(settings())
