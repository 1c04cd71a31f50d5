"""The console's sessions and form parsing, decided without a browser: the one-time link works once, an idle
session ends, a CSRF token must match, and a subject's keys typed badly get the tools' INVALID_INPUT."""

import pytest

from write_gate.core.model import ErrorCode, GateRejection
from write_gate.surface.console.sessions import Sessions
from write_gate.surface.console.views import parse_keys, parse_time


def test_the_one_time_link_works_once_and_a_new_one_replaces_it() -> None:
    sessions = Sessions(60)
    first = sessions.one_time_link()
    second = sessions.one_time_link()
    assert not sessions.use_once(first)  # replaced
    assert not sessions.use_once("guess")
    assert sessions.use_once(second)
    assert not sessions.use_once(second)


def test_an_idle_session_ends_and_its_csrf_token_must_match() -> None:
    now = [0.0]
    sessions = Sessions(10, clock=lambda: now[0])
    session = sessions.start("operator", "hash")
    now[0] = 9.0
    assert sessions.get(session.id) is session  # used: its idle time starts again
    assert session.csrf_matches(session.csrf) and not session.csrf_matches(None) and not session.csrf_matches("x")
    now[0] = 19.5
    assert sessions.get(session.id) is None
    assert sessions.get(session.id) is None and sessions.get(None) is None


def test_keys_as_a_person_types_them() -> None:
    assert parse_keys("name=Alice, country = NL") == {"name": "Alice", "country": "NL"}
    assert parse_keys('{"name": "Alice", "n": 3}') == {"name": "Alice", "n": 3}
    for bad in ("Alice", "{not json", "[]", "=x"):
        with pytest.raises(GateRejection) as refused:
            parse_keys(bad)
        assert refused.value.rejected.error_code is ErrorCode.INVALID_INPUT
    with pytest.raises(GateRejection):
        parse_time("yesterday", "since")
    assert parse_time("2026-11-22T08:05", "since").isoformat() == "2026-11-22T08:05:00+00:00"
