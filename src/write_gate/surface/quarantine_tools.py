"""The quarantine's tools (admin group, both profiles): list, replay and discard rejected calls."""

import time

from write_gate.services.quarantine import (
    Discarded,
    DiscardQuarantineRequest,
    ListQuarantineRequest,
    Quarantine,
    QuarantineList,
    Replayed,
    ReplayQuarantineRequest,
)
from write_gate.surface.tool_spec import READ, Call, Services, ToolSpec, lean_hints


def _quarantine(services: Services) -> Quarantine:
    assert services.quarantine is not None, "the server builds its services with a quarantine"
    return services.quarantine


async def _replay(services: Services, request: ReplayQuarantineRequest, call: Call) -> Replayed:
    # The call's arrival at the gate, not the handler's start: replays at once are those whose calls arrive at once,
    # and the gate's own work before the handler (a session's first tool table, admission, the write guard) would
    # place this one later than it came, counting a replay that ended meanwhile as over before it.
    arrived = call.arrived if call.arrived is not None else time.monotonic()
    assert services.rerun is not None, "the server builds its services with its call path"
    return await _quarantine(services).replay(request, services.rerun, arrived)


LIST_QUARANTINE = ToolSpec(
    name="list_quarantine",
    title="List quarantine",
    description="Rejected writes kept for replay, newest first. Paged: pass next_cursor back as cursor.",
    input_model=ListQuarantineRequest,
    output_model=QuarantineList,
    annotations=READ,
    handler=lambda s, req, _call: _quarantine(s).list(req),
    admin=True,  # every agent's arguments: for operators
)

REPLAY_QUARANTINE = ToolSpec(
    name="replay_quarantine",
    title="Replay quarantine",
    description="Re-run matching rejected writes (oldest first) as their agents; written ones leave the quarantine.",
    input_model=ReplayQuarantineRequest,
    output_model=Replayed,
    # A replay re-runs whatever was kept: deletes and merges among them.
    annotations=lean_hints(destructive=True, idempotent=False),
    handler=_replay,
    admin=True,
)

DISCARD_QUARANTINE = ToolSpec(
    name="discard_quarantine",
    title="Discard quarantine",
    description="Drop quarantined writes by id.",
    input_model=DiscardQuarantineRequest,
    output_model=Discarded,
    annotations=lean_hints(destructive=True),
    handler=lambda s, req, _call: _quarantine(s).discard(req),
    admin=True,
)

QUARANTINE_TOOLS = (LIST_QUARANTINE, REPLAY_QUARANTINE, DISCARD_QUARANTINE)
