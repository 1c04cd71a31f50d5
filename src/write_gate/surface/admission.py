"""Admission before every call of an agent the agents file lists (core.fair_share; docs/fleets/limits.md): for a
read, a read budget above zero; then a slot among the agent's calls in flight, waited for up to
WRITE_GATE_CALL_QUEUE_SECONDS; a read's cost is charged once it has run. Either refusal is RATE_LIMITED.

An agent the file does not list (stdio's trusted caller, any caller of a gate without an agents file) is never
held back: one caller has no one to share with, and per-agent counts cannot tell its clients apart.
"""

import time
from collections.abc import Awaitable, Callable

import anyio
import mcp_types as types

from write_gate.access.agents import Agent
from write_gate.core.fair_share import READ_BUDGET, FairShares, Share
from write_gate.core.model import GateRejection
from write_gate.engines import counted_reads
from write_gate.serving.config import Settings
from write_gate.surface.write_guard import rejection

REFUSAL_PAUSE_SECONDS = 1.0  # how long a read refused for its budget waits before its answer, at most


class Admission:
    """One per server. `held(agent, limit)` hears of each refusal (the metrics)."""

    def __init__(
        self,
        settings: Settings,
        listed: Callable[[str], bool],
        held: Callable[[str, str], None] = lambda _agent, _limit: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.listed = listed
        self.held = held
        self.clock = clock
        self.shares = FairShares()
        self._freed: anyio.Event | None = None  # set when any call leaves its slot (made on the event loop)

    def share(self, agent: Agent) -> Share:
        grant, settings = agent.grant, self.settings
        return Share(
            calls_in_flight=grant.max_calls_in_flight or settings.max_calls_in_flight,
            read_budget=grant.read_budget or settings.read_budget,
            window_seconds=settings.read_budget_window_seconds,
        )

    async def call(
        self, agent: Agent, is_read: bool, run: Callable[[], Awaitable[types.CallToolResult]]
    ) -> types.CallToolResult:
        if not self.listed(agent.id):
            return await run()
        share = self.share(agent)
        try:
            if is_read:
                self.shares.check_read(agent.id, share, self.clock())
            if not await self._enter(agent.id, share):
                raise self.shares.too_many(agent.id, share)
        except GateRejection as exc:
            self.held(agent.id, exc.rejected.details["limit"])
            if exc.rejected.details["limit"] == READ_BUDGET:
                # Answered after a pause (at most REFUSAL_PAUSE_SECONDS, never past its own retry-after): an agent
                # that loops on regardless is slowed to its pace, instead of costing every other agent's calls a
                # hundred refusals a second of the gate's time (bench/crowd.py).
                await anyio.sleep(min(exc.rejected.details["retry_after_seconds"], REFUSAL_PAUSE_SECONDS))
            return rejection(exc)
        try:
            if not is_read:
                return await run()
            with counted_reads() as reads:
                try:
                    return await run()
                finally:
                    self.shares.charge(agent.id, share, reads.cost, self.clock())
        finally:
            self._leave(agent.id)

    async def _enter(self, agent: str, share: Share) -> bool:
        """A slot now, or one freed within the queue's wait (False: none was)."""
        if self.shares.enter(agent, share):
            return True
        with anyio.move_on_after(self.settings.call_queue_seconds):
            while True:
                if self._freed is None:
                    self._freed = anyio.Event()
                await self._freed.wait()
                if self.shares.enter(agent, share):
                    return True
        return False

    def _leave(self, agent: str) -> None:
        self.shares.leave(agent)
        if self._freed is not None:
            self._freed.set()  # every waiter looks again; a fresh event for the next wait
            self._freed = None
