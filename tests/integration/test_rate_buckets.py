"""The write-rate bucket in the graph (core.cypher.rate_limits through services.rate_limits), on every engine tier,
on a clock the test moves: N at once, then one every 60/N seconds; a refusal takes nothing and says how long to
wait; an idle bucket holds at most N; another limit starts a full bucket; a clock that moves back refills nothing."""

import pytest

from tests.bolt_double import Action
from tests.conftest import bolt_faults
from write_gate.core.cypher.statement import Statement
from write_gate.core.model import GateRejection
from write_gate.core.rate_limit import RATE_LABEL, wait_seconds
from write_gate.engines import GraphBackend
from write_gate.services.rate_limits import take_write
from write_gate.serving.config import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]
T = 1_800_000_000.0  # seconds since the epoch


async def refused_for(graph: GraphBackend, agent: str, per_minute: int, now: float) -> float | None:
    """None when a write was taken, else the seconds the refusal says to wait."""
    try:
        await take_write(graph, agent, per_minute, now)
    except GateRejection as exc:
        rejected = exc.rejected
        assert (rejected.error_code, rejected.details["limit"], rejected.details["max"]) == (
            "RATE_LIMITED",
            "max_writes_per_minute",
            per_minute,
        )
        assert rejected.details["shared"] == "graph"
        return rejected.details["retry_after_seconds"]
    return None


async def test_a_full_bucket_then_one_write_per_refill(graph: GraphBackend) -> None:
    assert [await refused_for(graph, "a", 3, T) for _ in range(3)] == [None, None, None]
    assert await refused_for(graph, "a", 3, T) == 20.0  # 3 a minute: one every 20 s
    assert await refused_for(graph, "a", 3, T + 5) == 15.0  # a refused write takes nothing
    assert await refused_for(graph, "a", 3, T + 20) is None
    assert await refused_for(graph, "a", 3, T + 20) == 20.0
    [bucket] = await graph.read(Statement(f"MATCH (b:{RATE_LABEL}) RETURN count(b) AS n"))
    assert bucket["n"] == 1  # one node per agent, however many takes


async def test_agents_have_their_own_buckets_and_a_bucket_holds_at_most_its_limit(graph: GraphBackend) -> None:
    assert await refused_for(graph, "a", 1, T) is None
    assert await refused_for(graph, "b", 1, T) is None
    assert await refused_for(graph, "a", 1, T + 3600) is None  # an hour idle refills one token, not sixty
    assert await refused_for(graph, "a", 1, T + 3600) == 60.0


async def test_a_changed_limit_starts_a_full_bucket_and_a_clock_moving_back_refills_nothing(
    graph: GraphBackend,
) -> None:
    assert await refused_for(graph, "a", 1, T) is None
    assert await refused_for(graph, "a", 1, T) == 60.0
    assert await refused_for(graph, "a", 2, T) is None  # a new limit: a full bucket of 2
    assert await refused_for(graph, "a", 2, T - 600) is None  # a gate whose clock lags takes what is there
    assert await refused_for(graph, "a", 2, T - 600) == 30.0  # and refills nothing
    assert await refused_for(graph, "a", 2, T + 29) == 1.0  # the bucket's clock stayed at T: 29 s refilled 0.97


def test_a_wait_is_rounded_up_to_a_tenth_and_never_zero() -> None:
    assert wait_seconds(0.0, 60) == 1.0
    assert wait_seconds(0.99999, 60) == 0.1
    assert wait_seconds(0.5, 7) == pytest.approx(4.3)  # 0.5 token at 7 a minute: 4.29 s, rounded up


@pytest.mark.parametrize("engine", ["bolt"], indirect=True)
async def test_a_take_in_doubt_refuses_the_write_and_says_it_was_not_applied(
    settings: Settings, graph: GraphBackend
) -> None:
    """The engine goes away while committing the take (the Bolt double's LOST_COMMIT): the token may be gone, but
    the call's own write was never sent, and its answer says so."""
    faults = bolt_faults(settings)
    faults.arm(Action.LOST_COMMIT, match=f"MERGE (b:{RATE_LABEL}")
    try:
        with pytest.raises(GateRejection) as refused:
            await take_write(graph, "a", 3, T)
    finally:
        faults.clear()
    rejected = refused.value.rejected
    assert (rejected.error_code, rejected.details["applied"]) == ("BACKEND_UNAVAILABLE", False)
    assert await refused_for(graph, "a", 3, T) is None  # the engine is back: the next take is answered
