"""`subscriptions/listen`: the 2026-07-28 protocol's change notifications, where a client opens one stream for the
tool list and the change resources it names, instead of `resources/subscribe` and unasked notifications.

The SDK's `ListenHandler` serves each stream (the acknowledgment first, every frame stamped with the stream's
id, a bound on what a slow reader may leave unread), one handler and bus per stream, so one stream can be ended
alone. Before a stream opens, each change URI is checked as `resources/subscribe` checks it (a change resource,
an area the agent may watch); a change then reaches every stream of its space whose URI's area it touched, under
the URI as the client wrote it. A stream outlives the request that opened it, so before each change it would
hear, whether its agent may still watch every area it names is asked again of the agents file as it is then: a
stream whose agent may not any more (its reads taken away, its space, the agent removed, its token re-keyed) is
ended gracefully instead (its result is its last frame), and the log says so. Only what the gate sends is
honoured: the tool list and change resources (the resource list is fixed, and there are no prompts).
"""

from collections.abc import Iterable
from dataclasses import dataclass

import mcp_types as types
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated, ToolsListChanged
from mcp.shared.exceptions import MCPError

from write_gate.core.change_feed import touched_uris
from write_gate.surface.change_resources import ChangeResources, Watch, revoked
from write_gate.surface.mcp_context import GateContext

MAX_STREAMS = 1024  # open streams per server, as the SDK's handler bounds them


@dataclass(frozen=True, eq=False)
class _Stream:
    space: str
    watches: dict[str, Watch]  # per change URI, as the client wrote it
    bus: InMemorySubscriptionBus
    handler: ListenHandler

    def allowed(self) -> bool:
        return all(watch.allowed() for watch in self.watches.values())


class ListenStreams:
    def __init__(self, changes: ChangeResources) -> None:
        self._changes = changes
        self._streams: set[_Stream] = set()

    async def listen(
        self, ctx: GateContext, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """One stream, until the client ends it, the server stops or its agent may no longer watch; refused
        before its acknowledgment when a URI is no change resource or names an area the agent may not watch."""
        wanted = params.notifications
        uris = list(dict.fromkeys(wanted.resource_subscriptions or ()))
        watches = {uri: self._changes.watch(ctx, uri) for uri in uris}
        if len(self._streams) >= MAX_STREAMS:
            raise MCPError(types.INTERNAL_ERROR, "Subscription limit reached")
        honoured = types.SubscriptionFilter(
            tools_list_changed=True if wanted.tools_list_changed else None,
            resource_subscriptions=uris or None,
        )
        bus = InMemorySubscriptionBus()
        stream = _Stream(ctx.lifespan_context.space, watches, bus, ListenHandler(bus))
        self._streams.add(stream)
        try:
            return await stream.handler(ctx, params.model_copy(update={"notifications": honoured}))
        finally:
            self._streams.discard(stream)

    def listening(self, space: str = "") -> bool:
        """Whether a stream of `space` watches a change resource (the change watcher polls only then)."""
        return any(stream.space == space and stream.watches for stream in self._streams)

    async def changed(self, labels: Iterable[str], space: str = "") -> None:
        """A change to `labels` in `space`: each URI a stream there watches whose area it touched, for streams
        whose agent still may watch; the others end."""
        touched = touched_uris(labels)
        for stream in list(self._streams):
            if stream.space != space:
                continue
            uris = sorted(uri for uri, watch in stream.watches.items() if watch.area.uri in touched)
            if not uris:
                continue
            if not stream.allowed():
                self._streams.discard(stream)
                stream.handler.close()
                revoked("listen stream", ", ".join(stream.watches))
                continue
            for uri in uris:
                await stream.bus.publish(ResourceUpdated(uri=uri))

    async def tools_changed(self) -> None:
        for stream in list(self._streams):
            await stream.bus.publish(ToolsListChanged())

    def close(self) -> None:
        """End every stream gracefully (each sends its result as its last frame)."""
        for stream in list(self._streams):
            stream.handler.close()
