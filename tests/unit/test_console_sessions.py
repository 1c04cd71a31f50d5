"""The console's sessions and form parsing, decided without a browser: the one-time link works once, an idle
session ends, the least recently seen goes first past the limit, a CSRF token must match, and a subject's keys typed
badly get the tools' INVALID_INPUT; and what the pages draw from a claim and a neighbourhood."""

from datetime import UTC, datetime

import pytest

from write_gate.core.login_throttle import LoginLimit, LoginThrottle
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.surface.console.sessions import LoginForms, Sessions
from write_gate.surface.console.views import effective, neighbourhood, parse_keys, parse_time


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


def test_past_its_limit_the_least_recently_seen_session_goes_first() -> None:
    now = [0.0]
    sessions = Sessions(60, clock=lambda: now[0])
    sessions.MAX = 2
    first, second = sessions.start("a"), sessions.start("b")
    now[0] = 1.0
    assert sessions.get(first.id) is first  # seen again: now the second is the least recently seen
    third = sessions.start("c")
    assert sessions.get(second.id) is None
    assert sessions.get(first.id) is first and sessions.get(third.id) is third


def test_a_value_without_a_claim_has_no_effective_confidence_and_a_drawing_keeps_to_the_centre() -> None:
    assert effective(None, 30.0, {}, datetime.now(UTC)) is None
    relations = [
        {"from": "Alice", "to": "Bob", "relationType": "KNOWS"},
        {"from": "Bob", "to": "Carol", "relationType": "KNOWS"},  # not Alice's: left out
        {"from": "Dan", "to": "Alice", "relationType": "LIKES"},
    ]
    drawn = neighbourhood({"name": "Alice", "entityType": "Person"}, relations, {"Bob": "Person"})
    assert [(n["id"], n["type"], n["centre"]) for n in drawn["nodes"]] == [
        ("Alice", "Person", True),
        ("Bob", "Person", False),
        ("Dan", None, False),
    ]
    assert [(e["id"], e["source"], e["target"], e["type"]) for e in drawn["edges"]] == [
        ("e0", "Alice", "Bob", "KNOWS"),
        ("e2", "Dan", "Alice", "LIKES"),
    ]


def test_login_attempts_are_let_in_per_address_and_overall_within_a_sliding_window() -> None:
    throttle, mine, everyone = LoginThrottle(), LoginLimit(2, 60), LoginLimit(3, 60)
    assert throttle.attempt("a", 0.0, mine, everyone) is None
    assert throttle.attempt("a", 10.0, mine, everyone) is None
    refused = throttle.attempt("a", 20.0, mine, everyone)
    assert refused is not None and (refused.scope, refused.retry_after) == ("address", 40.0)  # when the first leaves
    assert "from this address (at most 2 in 60 s): try again in 40 s" in refused.message()
    assert throttle.attempt("b", 20.0, mine, everyone) is None  # another address: the third attempt in all
    overall = throttle.attempt("c", 30.0, mine, everyone)
    assert overall is not None and (overall.scope, overall.retry_after) == ("overall", 30.0)
    assert throttle.attempt("a", 60.0, mine, everyone) is None  # the first attempt left the window
    assert throttle.attempt("c", 70.5, mine, everyone) is None  # refused attempts were not counted


def test_the_login_forms_csrf_token_is_the_cookies_value_signed_by_this_process() -> None:
    forms, other = LoginForms(), LoginForms()
    value = forms.new_value()
    assert forms.matches(value, forms.csrf(value))
    assert not forms.matches(value, other.csrf(value))  # another process's (or a forged) token
    assert not forms.matches(None, forms.csrf(value)) and not forms.matches(value, None)
    assert not forms.matches(value, "é")  # any text a form may send is compared, never raised on
