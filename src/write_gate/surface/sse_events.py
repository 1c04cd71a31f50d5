"""Resumable SSE streams over HTTP: the recent events of each session, bounded in number and bytes.

With an event store the SDK primes every SSE stream of a 2025-11-25 client with an event that has an id
and empty data (and `retry`, when set), and replays what a client missed when it reconnects with
Last-Event-ID. The SDK keys a stream by its JSON-RPC request id, which every session starts from 1; so each
session gets its own view, and a Last-Event-ID of another session's event replays nothing.
"""

import itertools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.streamable_http import GET_STREAM_KEY, EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import DEFAULT_NEGOTIATED_VERSION, JSONRPCMessage

from write_gate.surface.direct_calls import DirectCallTransport, stateless_call

# Enough for a few long calls' worth of progress and results per session; the oldest go first.
MAX_EVENTS = 2_000
MAX_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class _Event:
    session: "SessionEvents"
    stream_id: StreamId
    message: JSONRPCMessage | None  # None: a priming event
    size: int


class EventLog:
    """Every session's events in the order they were stored; past either bound, the oldest are dropped."""

    def __init__(self, max_events: int = MAX_EVENTS, max_bytes: int = MAX_BYTES) -> None:
        self.max_events, self.max_bytes = max_events, max_bytes
        self._events: OrderedDict[EventId, _Event] = OrderedDict()
        self._bytes = 0
        self._ids = itertools.count(1)

    def session(self, json_answers: bool = False) -> "SessionEvents":
        return SessionEvents(self, json_answers)

    def add(self, session: "SessionEvents", stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        size = len(message.model_dump_json(by_alias=True, exclude_unset=True)) if message is not None else 0
        event_id = str(next(self._ids))
        self._events[event_id] = _Event(session, stream_id, message, size)
        self._bytes += size
        while len(self._events) > self.max_events or (self._bytes > self.max_bytes and len(self._events) > 1):
            _, dropped = self._events.popitem(last=False)
            self._bytes -= dropped.size
        return event_id

    def unkept(self) -> EventId:
        """An id for an event no client can resume from: numbered as the kept ones are, but not stored."""
        return str(next(self._ids))

    def after(self, session: "SessionEvents", event_id: EventId) -> tuple[StreamId, list[tuple[EventId, Any]]] | None:
        """The stream of `event_id` and its later messages, if the event is this session's and still kept."""
        start = self._events.get(event_id)
        if start is None or start.session is not session:
            return None
        later, seen = [], False
        for key, event in self._events.items():
            if seen and event.session is session and event.stream_id == start.stream_id and event.message is not None:
                later.append((key, event.message))
            seen = seen or key == event_id
        return start.stream_id, later

    def __len__(self) -> int:
        return len(self._events)


class SessionEvents(EventStore):
    """One session's view of the log: the SDK's EventStore. `json_answers`: the session's POSTs are answered as
    application/json, so only its GET stream is an event stream worth keeping."""

    def __init__(self, log: EventLog, json_answers: bool = False) -> None:
        self._log = log
        self._json_answers = json_answers

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        if self._json_answers and stream_id != GET_STREAM_KEY:
            return self._log.unkept()
        return self._log.add(self, stream_id, message)

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        found = self._log.after(self, last_event_id)
        if found is None:
            return None
        stream_id, later = found
        for event_id, message in later:
            await send_callback(EventMessage(message, event_id))
        return stream_id


class ResumableSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, giving each new session its own view of one bounded event log."""

    def __init__(self, app: Server[Any], *, events: EventLog, **kwargs: Any) -> None:
        super().__init__(app, event_store=events.session(), **kwargs)
        self.events = events

    def _admit_session(self, requestor: Any) -> Any:
        # The SDK hands self.event_store to the transport it makes here: a fresh view per session.
        self.event_store = self.events.session(self.json_response)
        transport = super()._admit_session(requestor)
        # With JSON answers, a session's tools/call is answered in its POST's task (surface/direct_calls.py).
        return DirectCallTransport.adopt(transport) if transport is not None and self.json_response else transport

    async def _handle_stateless_request(
        self, protocol_version_hint: str | None, scope: Any, receive: Any, send: Any
    ) -> None:
        # With JSON answers, a plain tools/call is answered without a server task of its own (direct_calls.py).
        if self.json_response and scope["method"] == "POST":
            version = protocol_version_hint or DEFAULT_NEGOTIATED_VERSION
            receive = await stateless_call(
                self.app, self._lifespan_state, self.security_settings, version, scope, receive, send
            )
            if receive is None:
                return
        await super()._handle_stateless_request(protocol_version_hint, scope, receive, send)
