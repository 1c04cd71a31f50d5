"""Safe retries' pure decisions (core.idempotency): whose key, which call it binds, what a repeat meets."""

import hashlib
from datetime import UTC, datetime, timedelta

import pytest

from write_gate.core.idempotency import (
    DONE,
    IN_DOUBT,
    PENDING,
    Disposal,
    Verdict,
    Window,
    arguments_digest,
    dispose,
    judge,
    kept,
    record_id,
    retry_after,
    scope,
)
from write_gate.core.model import ErrorCode

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
WINDOW = Window(retention=timedelta(hours=24), stale=timedelta(minutes=10))


def record(state: str, digest: str = "d", ago: float = 1.0) -> dict[str, object]:
    at = (NOW - timedelta(seconds=ago)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {"args": digest, "state": state, "at": at}


def test_a_key_is_the_agents_own() -> None:
    assert record_id(scope("a"), "k") != record_id(scope("b"), "k")
    assert record_id(scope("a"), "k") == record_id(scope("a"), "k")
    assert len(record_id(scope("a"), "x" * 200)) == 64


def test_the_digest_binds_tool_and_arguments_in_any_key_order_without_the_key() -> None:
    base = arguments_digest("write_node", {"label": "P", "merge_keys": {"a": 1, "b": 2}})
    assert base == arguments_digest("write_node", {"merge_keys": {"b": 2, "a": 1}, "label": "P"})
    assert base == arguments_digest(
        "write_node", {"label": "P", "merge_keys": {"a": 1, "b": 2}, "idempotency_key": "k"}
    )
    assert base != arguments_digest("write_nodes", {"label": "P", "merge_keys": {"a": 1, "b": 2}})
    assert base != arguments_digest("write_node", {"label": "P", "merge_keys": {"a": 1, "b": 3}})


@pytest.mark.parametrize(
    ("is_error", "code", "expected"),
    [
        (False, None, True),
        (True, ErrorCode.ENDPOINT_NOT_FOUND.value, True),
        (True, ErrorCode.INVALID_INPUT.value, True),
        (True, ErrorCode.BACKEND_UNAVAILABLE.value, False),
        (True, ErrorCode.RATE_LIMITED.value, False),
        (True, ErrorCode.INTERNAL_ERROR.value, False),
        (True, ErrorCode.IDEMPOTENCY_IN_PROGRESS.value, False),
    ],
)
def test_transient_outcomes_are_not_kept(is_error: bool, code: str | None, expected: bool) -> None:
    assert kept(is_error, code) is expected


def test_what_a_repeat_meets() -> None:
    assert judge(record(DONE), "d", NOW, WINDOW) is Verdict.REPLAY
    assert judge(record(DONE, "other"), "d", NOW, WINDOW) is Verdict.REUSED
    assert judge(record(PENDING, "other"), "d", NOW, WINDOW) is Verdict.REUSED
    assert judge(record(PENDING, ago=5), "d", NOW, WINDOW) is Verdict.WAIT
    assert judge(record(PENDING, ago=601), "d", NOW, WINDOW) is Verdict.UNKNOWN
    assert judge(record(IN_DOUBT, ago=1), "d", NOW, WINDOW) is Verdict.UNKNOWN  # at once, not once stale
    assert judge(record(IN_DOUBT, "other"), "d", NOW, WINDOW) is Verdict.REUSED


@pytest.mark.parametrize(
    ("is_error", "code", "wrote", "expected"),
    [
        (False, None, True, Disposal.SETTLE),
        (False, None, False, Disposal.SETTLE),  # a success that wrote nothing (a no-op) is an outcome too
        (True, ErrorCode.CONFLICT.value, True, Disposal.SETTLE),
        (True, ErrorCode.BACKEND_UNAVAILABLE.value, False, Disposal.RELEASE),
        (True, ErrorCode.BACKEND_UNAVAILABLE.value, True, Disposal.DOUBT),
        (True, ErrorCode.INTERNAL_ERROR.value, True, Disposal.DOUBT),
        (True, ErrorCode.RATE_LIMITED.value, False, Disposal.RELEASE),
    ],
)
def test_a_transient_outcome_frees_its_key_only_when_nothing_of_it_reached_the_engine(
    is_error: bool, code: str | None, wrote: bool, expected: Disposal
) -> None:
    assert dispose(is_error, code, wrote) is expected


def test_retry_after_is_soon_never_zero_and_never_past_staleness() -> None:
    assert retry_after(record(PENDING, ago=5), NOW, WINDOW) == 5.0
    assert retry_after(record(PENDING, ago=599.9), NOW, WINDOW) == 1.0


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_ids_and_digests_are_digests_of_one_canonical_text() -> None:
    """Every gate on a graph reads the others' records: the id and the digest are pinned to their text."""
    assert record_id(["ägent"], "kéy") == sha256('["ägent", "kéy"]')
    assert arguments_digest("write_node", {"label": "Pérson", "n": 1, "idempotency_key": "k"}) == sha256(
        '{"arguments":{"label":"Pérson","n":1},"tool":"write_node"}'
    )
    when = datetime(2026, 1, 2, tzinfo=UTC)  # no JSON form: its text
    assert arguments_digest("t", {"at": when}) == sha256('{"arguments":{"at":"2026-01-02 00:00:00+00:00"},"tool":"t"}')


def test_a_claim_exactly_as_old_as_the_stale_timeout_is_stale() -> None:
    assert judge(record(PENDING, ago=600), "d", NOW, WINDOW) is Verdict.UNKNOWN
    assert judge(record(PENDING, ago=599.9), "d", NOW, WINDOW) is Verdict.WAIT


def test_retry_after_keeps_a_tenth_of_a_second() -> None:
    assert retry_after(record(PENDING, ago=597.66), NOW, WINDOW) == 2.3  # 2.34 s left
    assert retry_after(record(PENDING, ago=597.25), NOW, WINDOW) == 2.8  # 2.75 s left: not 2.75, not 3
