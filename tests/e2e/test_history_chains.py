"""Exactly once, checked from outside (tests/e2e/history_chains.py): on each engine tier, four gate processes and
eight writers on five subjects, a poller on the change feed; a round without faults, then rounds in which the
engine is SIGKILLed five times mid-run. Every subject's history must be one serial chain that holds each
acknowledged write once, and the feed must answer it whole, in order, and never inside its settle window.

Bounded here (one round of each kind per tier: 320 writes each); the full form, thirty rounds with kills per
tier, enough to meet a one-in-thirty event: `WRITE_GATE_HISTORY_ROUNDS=30 uv run pytest -m history -n 3
-rA tests/e2e/test_history_chains.py`. Each round prints its tally (shown by -rA)."""

import os
import time
from pathlib import Path

import pytest
from mcp import Client

from tests.e2e.history_chains import (
    BoltTier,
    EmbeddedTier,
    FalkorDBTier,
    Poller,
    Round,
    anomalies,
    run_round,
    with_gates,
)

pytestmark = [pytest.mark.anyio, pytest.mark.history]

ROUNDS = int(os.environ.get("WRITE_GATE_HISTORY_ROUNDS", "1"))  # rounds with kills, after the one without
TIERS = {"embedded": EmbeddedTier, "falkordb": FalkorDBTier, "bolt": BoltTier}


@pytest.mark.parametrize("tier_name", list(TIERS))
async def test_every_subject_is_one_chain_and_the_feed_follows_it(tier_name: str, tmp_path: Path) -> None:
    tier = TIERS[tier_name](tmp_path)
    rounds: list[Round] = []

    async def body(clients: list[Client], poller: Poller) -> None:
        for number in range(ROUNDS + 1):
            kills = 0 if number == 0 else 5
            began = time.monotonic()
            done = await run_round(tier, clients, poller, number, writers=8, calls=320, subjects=5, kills=kills)
            print(
                f"{tier_name} round {number}: {dict(done.tally())}, {done.killed} kills, {len(done.seen)} fed, "
                f"{done.same_millisecond()} in the millisecond of the change before, "
                f"{time.monotonic() - began:.1f} s; refusals on the way: {dict(done.answers())}"
            )
            rounds.append(done)

    try:
        await with_gates(tier, 4, body)
    finally:
        tier.close()
    found = [line for done in rounds for line in anomalies(done)]
    assert found == []
    for done in rounds:
        assert done.killed == done.kills  # each kill landed while writes ran
        assert done.tally()["ok"] >= len(done.writes) // 2  # the writers got through, kills or not
    assert sum(len(done.seen) for done in rounds) >= sum(done.tally()["ok"] for done in rounds)
