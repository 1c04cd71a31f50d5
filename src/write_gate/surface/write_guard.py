"""What stands before every write and admin call, whatever its tool: the agent's limits (docs/fleets/limits.md)
and its idempotency key (docs/fleets/safe-retries.md). Reads pass straight through.

Order: the key's form and the grant's batch size (both decided by the arguments alone, so nothing is claimed);
then the key's claim, which may answer the key's first outcome again without running anything or counting
against the rate; then the rate; then the call, shielded from the client's cancellation once the key is
claimed, so a client that gave up still finds the outcome stored when it retries.
"""

import json
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import anyio
import mcp_types as types

from write_gate.core.change_feed import UNKNOWN_OUTCOMES
from write_gate.core.idempotency import KEY_ARGUMENT, MAX_KEY_LENGTH, Disposal, Window, dispose, scope
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.values import check_storable
from write_gate.engines import GraphBackend, traced_writes
from write_gate.services.idempotency import Claim, IdempotencyRecords, Stored
from write_gate.services.late_writes import LateWrites
from write_gate.services.rate_limits import take_write
from write_gate.serving.config import Settings
from write_gate.surface.tool_spec import Call, Services, ToolSpec

# The answer's `_meta` on a repeat of a key: the outcome is the first call's, nothing ran.
REPLAYED_META = "write-gate/replayed"

Run = Callable[[ToolSpec, Services, dict[str, Any], Call], Awaitable[types.CallToolResult]]


def rejection(rejected: GateRejection) -> types.CallToolResult:
    data = rejected.rejected.model_dump(mode="json")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
        structured_content=data,
        is_error=True,
    )


def _key(arguments: dict[str, Any]) -> str | None:
    key = arguments.pop(KEY_ARGUMENT, None)
    if key is not None and not (isinstance(key, str) and 1 <= len(key) <= MAX_KEY_LENGTH):
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"idempotency_key must be a string of 1 to {MAX_KEY_LENGTH} characters",
            field=KEY_ARGUMENT,
        )
    check_storable(key, KEY_ARGUMENT)  # taken off before the call's own check: held to it here
    return key


def check_grant_batch(arguments: dict[str, Any], most: int | None) -> None:
    """The grant's batch size, as WRITE_GATE_MAX_BATCH_ITEMS is checked (the smaller of the two applies)."""
    if most is None:
        return
    for name, value in arguments.items():
        if isinstance(value, list) and len(value) > most:
            raise GateRejection(
                ErrorCode.INVALID_INPUT,
                f"{name} has {len(value)} items, over this agent's limit of {most}",
                limit="max_batch_items",
                max=most,
                field=name,
                set_by="grant",
            )


def error_code(answer: types.CallToolResult) -> str | None:
    code = (answer.structured_content or {}).get("error_code")
    return code if isinstance(code, str) else None


def _replayed(stored: Stored) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=stored.text)],
        structured_content=stored.outcome,
        is_error=stored.is_error,
        meta={REPLAYED_META: True},
    )


class WriteGuard:
    """One per server. The rate buckets live in the graph (services.rate_limits), so every gate on it counts an
    agent's writes together; `buckets` names the graph that holds them for a call (the default space's, with
    spaces: an agent's limit is one, whichever space it writes in)."""

    def __init__(
        self,
        settings: Settings,
        clock: Callable[[], float] = time.time,
        buckets: Callable[[Services], GraphBackend] = lambda services: services.gate.backend,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.buckets = buckets
        self.late = LateWrites()  # idempotency records the engine was away for (services/late_writes.py)
        self.window = Window(
            retention=timedelta(hours=settings.idempotency_retention_hours),
            stale=timedelta(seconds=settings.idempotency_stale_seconds),
        )

    async def check_rate(self, call: Call, services: Services) -> None:
        per_minute = call.agent.grant.max_writes_per_minute
        if per_minute is not None:
            await take_write(self.buckets(services), call.agent.id, per_minute, self.clock())

    async def call(
        self, spec: ToolSpec, services: Services, arguments: dict[str, Any] | None, call: Call, run: Run
    ) -> types.CallToolResult:
        if spec.group == "read":
            return await run(spec, services, arguments or {}, call)
        # Every stamp the call makes is taken inside: the change feed's horizon stays below its start until it
        # ends, or longer where it may still commit (services/writes_in_flight.py).
        with services.gate.in_flight.running() as outcome:
            answer = await self._write(spec, services, arguments, call, run)
            outcome.unknown = bool(answer.is_error) and error_code(answer) in UNKNOWN_OUTCOMES
        return answer

    async def _write(
        self, spec: ToolSpec, services: Services, arguments: dict[str, Any] | None, call: Call, run: Run
    ) -> types.CallToolResult:
        arguments = dict(arguments or {})
        try:
            key = _key(arguments)
            check_grant_batch(arguments, call.agent.grant.max_batch_items)
            if key is None:
                await self.check_rate(call, services)
                return await run(spec, services, arguments, call)
        except GateRejection as exc:
            return rejection(exc)
        # Claimed keys are always settled or released. (The answer is returned outside the scope: a cancel scope
        # may swallow its own cancellation, so the checker cannot tell the block always returns.)
        with anyio.CancelScope(shield=True):
            answer = await self._keyed(spec, services, arguments, call, run, key)
        return answer

    async def _keyed(
        self, spec: ToolSpec, services: Services, arguments: dict[str, Any], call: Call, run: Run, key: str
    ) -> types.CallToolResult:
        records = IdempotencyRecords(
            services.gate.backend, self.window, self.settings.idempotency_wait_seconds, self.late
        )
        try:
            claimed = await records.claim(scope(call.agent.id), key, spec.name, arguments)
        except GateRejection as exc:
            return rejection(exc)
        if isinstance(claimed, Stored):
            return _replayed(claimed)
        return await self._run_claimed(spec, services, arguments, call, run, records, claimed)

    async def _run_claimed(
        self,
        spec: ToolSpec,
        services: Services,
        arguments: dict[str, Any],
        call: Call,
        run: Run,
        records: IdempotencyRecords,
        claimed: Claim,
    ) -> types.CallToolResult:
        try:
            await self.check_rate(call, services)
        except GateRejection as exc:
            await records.release(claimed)
            return rejection(exc)
        with traced_writes() as writes:
            try:
                result = await run(spec, services, arguments, call)
            except BaseException:
                await (records.in_doubt(claimed) if writes.reached else records.release(claimed))
                raise
        outcome = result.structured_content or {}
        code = outcome.get("error_code") if isinstance(outcome, dict) else None
        match dispose(bool(result.is_error), code, writes.reached):
            case Disposal.SETTLE:
                text = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
                await records.settle(claimed, outcome, text, bool(result.is_error))
            case Disposal.DOUBT:
                await records.in_doubt(claimed)
            case Disposal.RELEASE:
                await records.release(claimed)
        return result
