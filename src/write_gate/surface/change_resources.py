"""The change feed as MCP resources: `write-gate://changes` (every change) and `write-gate://changes/{label}`
(one node label's or relationship type's), which a session subscribes to (`resources/subscribe`) to be sent
`notifications/resources/updated` when a write lands there, and reads for the newest changes.

Only an agent that may watch the area (`access.change_areas`) subscribes or reads; only sessions subscribed to
an area hear of it. A subscription outlives the request that made it, so whether its agent may still watch is
asked again, of the agents file as it is then, before each notification: one whose grant no longer lets it
(its reads taken away, its space, the agent removed or, over HTTP, its token re-keyed) is dropped instead, and
the log says so. It hears nothing after its grant changed.
"""

import contextlib
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import mcp_types as types
from mcp.server.connection import Connection
from mcp.shared.exceptions import MCPError

from write_gate.access.agents import Agent
from write_gate.access.change_areas import may_watch
from write_gate.core.change_feed import AREA_TEMPLATE, CHANGES_URI, Area, parse_area, touched_uris
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.services.change_feed import latest_changes
from write_gate.services.gate import Gate
from write_gate.services.history import filter_label
from write_gate.surface.connections import connection_of
from write_gate.surface.mcp_context import GateContext
from write_gate.surface.schema_resources import protocol_error

logger = logging.getLogger(__name__)

JSON = "application/json"
RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource URI

CHANGES = types.Resource(
    uri=CHANGES_URI,
    name="changes",
    title="Changes",
    description="The newest accepted changes; subscribe to hear of each write (as changes_since).",
    mime_type=JSON,
)
AREA = types.ResourceTemplate(
    uri_template=AREA_TEMPLATE,
    name="label-changes",
    title="Changes of one label",
    description="The newest changes of one node label or relationship type; subscribe to hear of each write.",
    mime_type=JSON,
)


@dataclass(frozen=True)
class Watch:
    """What a subscription or listen stream watches: an area of a space, and whether its agent still may."""

    space: str
    area: Area
    allowed: Callable[[], bool]  # asks the agents file as it is now


class ChangeSubscriptions:
    """Each client connection's subscribed URIs, as the client wrote them, with what each watches (labels
    resolved). Kept per connection (a request's session lives for that request only) until it closes. A
    subscription hears of its own space's writes only: the space its agent works in when it subscribed."""

    def __init__(self) -> None:
        self._by_connection: dict[Connection, dict[str, Watch]] = {}

    def add(self, connection: Connection, uri: str, watch: Watch) -> None:
        if connection not in self._by_connection:
            self._by_connection[connection] = {}
            connection.exit_stack.callback(self._by_connection.pop, connection, None)
        self._by_connection[connection][uri] = watch

    def remove(self, connection: Connection, uri: str) -> None:
        self._by_connection.get(connection, {}).pop(uri, None)

    def listening(self, space: str = "") -> bool:
        return any(w.space == space for subscribed in self._by_connection.values() for w in subscribed.values())

    async def notify(self, labels: Iterable[str], space: str = "") -> None:
        """Send `resources/updated` for each subscribed URI of `space` whose area a change to `labels` touched,
        if its agent still may watch it; a subscription whose agent may not any more is dropped."""
        touched = touched_uris(labels)
        for connection, subscribed in list(self._by_connection.items()):
            for uri, watch in list(subscribed.items()):
                if watch.space != space or watch.area.uri not in touched:
                    continue
                if not watch.allowed():
                    subscribed.pop(uri, None)
                    revoked("change subscription", uri)
                    continue
                with contextlib.suppress(Exception):  # a gone or deaf client loses nothing
                    await connection.send_resource_updated(uri)


def revoked(kind: str, uri: str) -> None:
    logger.info(
        "%s to %s ended: its agent may no longer read it",
        kind,
        uri,
        extra={"event": "change_watch_revoked", "uri": uri},
    )


def _denied(message: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, message, {"error_code": ErrorCode.PERMISSION_DENIED.value})


def resolve_area(gate: Gate, uri: str, agent: Agent, offered: bool) -> Area | None:
    """The area a change URI names, its label as the writes resolve it; None for a URI that is no change
    resource. An agent that may not watch it is refused (a protocol error carrying PERMISSION_DENIED)."""
    area = parse_area(uri)
    if area is None:
        return None
    if not offered or not may_watch(agent.grant, area.label):
        raise _denied("this agent may not read the change feed")
    if area.label is None:
        return area
    try:
        return Area(filter_label(gate, area.label))
    except GateRejection as exc:
        raise MCPError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri}) from exc


class ChangeResources:
    """The subscribe, unsubscribe and read handlers, for the agent each session's identity gives.

    `caller_of`: for a request, a function that looks its caller up again in the agents file as it is then (for
    what outlives the request); `in_space`: whether an agent may still work in a space."""

    def __init__(
        self,
        subscriptions: ChangeSubscriptions,
        caller_of: Callable[[GateContext], Callable[[], Agent]],
        offered: bool,
        in_space: Callable[[Agent, str], bool] = lambda _agent, _space: True,
    ):
        self.subscriptions = subscriptions
        self._caller_of = caller_of
        self._offered = offered
        self._in_space = in_space

    def area(self, ctx: GateContext, uri: str) -> Area:
        """The area a URI to subscribe to names; a protocol error for one that is no change resource or may not be
        watched."""
        area = resolve_area(ctx.lifespan_context.gate, uri, self._caller_of(ctx)(), self._offered)
        if area is None:
            raise MCPError(types.INVALID_PARAMS, "only change resources take subscriptions", {"uri": uri})
        return area

    def watch(self, ctx: GateContext, uri: str) -> Watch:
        """What a subscription or stream on `uri` watches, from this request on (a protocol error as `area`)."""
        area, caller, space = self.area(ctx, uri), self._caller_of(ctx), ctx.lifespan_context.space

        def allowed() -> bool:
            agent = caller()
            return may_watch(agent.grant, area.label) and self._in_space(agent, space)

        return Watch(space, area, allowed)

    async def subscribe(self, ctx: GateContext, params: types.SubscribeRequestParams) -> types.EmptyResult:
        self.subscriptions.add(connection_of(ctx), params.uri, self.watch(ctx, params.uri))
        return types.EmptyResult()

    async def unsubscribe(self, ctx: GateContext, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        self.subscriptions.remove(connection_of(ctx), params.uri)
        return types.EmptyResult()

    async def read(self, ctx: GateContext, uri: str) -> types.ReadResourceResult | None:
        """The newest changes of a change resource; None for a URI that is no change resource."""
        gate = ctx.lifespan_context.gate
        area = resolve_area(gate, uri, self._caller_of(ctx)(), self._offered)
        if area is None:
            return None
        try:
            changes = await latest_changes(gate, area.label)
        except GateRejection as exc:  # the engine could not be read: say so, never an empty feed
            raise protocol_error(exc) from exc
        text = json.dumps({"changes": [c.model_dump(mode="json") for c in changes]}, ensure_ascii=False)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=JSON, text=text)])
