"""`subscriptions/listen`: the 2026-07-28 protocol's change notifications, where a client opens one stream for the
tool list and the change resources it names, instead of `resources/subscribe` and unasked notifications.

The SDK's `ListenHandler` serves each stream (the acknowledgment first, every frame stamped with the stream's
id, a bound on what a slow reader may leave unread); one per space, fed by that space's bus, so a stream hears
only its agent's space. Before a stream opens, each change URI is checked as `resources/subscribe` checks it
(a change resource, an area the agent may watch); a change then reaches every stream whose URI's area it
touched, under the URI as the client wrote it. Only what the gate sends is honoured: the tool list and change
resources (the resource list is fixed, and there are no prompts).
"""

from collections import Counter
from collections.abc import Iterable

import mcp_types as types
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated, ToolsListChanged

from write_gate.core.change_feed import Area, touched_uris
from write_gate.surface.change_resources import ChangeResources
from write_gate.surface.mcp_context import GateContext


class ListenStreams:
    def __init__(self, changes: ChangeResources) -> None:
        self._changes = changes
        self._buses: dict[str, InMemorySubscriptionBus] = {}
        self._handlers: dict[str, ListenHandler] = {}
        self._watched: dict[str, Counter[tuple[str, Area]]] = {}  # per space: the open streams' URIs and areas

    def _handler(self, space: str) -> ListenHandler:
        if space not in self._handlers:
            self._buses[space] = InMemorySubscriptionBus()
            self._handlers[space] = ListenHandler(self._buses[space])
        return self._handlers[space]

    async def listen(
        self, ctx: GateContext, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """One stream, until the client ends it or the server stops; refused before its acknowledgment when a
        URI is no change resource or names an area the agent may not watch."""
        wanted = params.notifications
        uris = list(dict.fromkeys(wanted.resource_subscriptions or ()))
        watched = Counter((uri, self._changes.area(ctx, uri)) for uri in uris)
        honoured = types.SubscriptionFilter(
            tools_list_changed=True if wanted.tools_list_changed else None,
            resource_subscriptions=uris or None,
        )
        space = ctx.lifespan_context.space
        handler = self._handler(space)
        self._watched.setdefault(space, Counter()).update(watched)
        try:
            return await handler(ctx, params.model_copy(update={"notifications": honoured}))
        finally:
            self._watched[space].subtract(watched)
            self._watched[space] = +self._watched[space]  # drop what no stream watches any more

    def listening(self, space: str = "") -> bool:
        """Whether a stream of `space` watches a change resource (the change watcher polls only then)."""
        return bool(self._watched.get(space))

    async def changed(self, labels: Iterable[str], space: str = "") -> None:
        """A change to `labels` in `space`: each URI a stream there watches whose area it touched."""
        bus = self._buses.get(space)
        if bus is None:
            return
        touched = touched_uris(labels)
        for uri in sorted({uri for uri, area in self._watched.get(space, ()) if area.uri in touched}):
            await bus.publish(ResourceUpdated(uri=uri))

    async def tools_changed(self) -> None:
        for bus in list(self._buses.values()):
            await bus.publish(ToolsListChanged())

    def close(self) -> None:
        """End every stream gracefully (each sends its result as its last frame)."""
        for handler in self._handlers.values():
            handler.close()
