"""The SSE event log (pure): bounded in events and bytes, oldest dropped first, and each session replays only
its own stream's events after the one a client names."""

import anyio
import mcp_types as types
from mcp.server.streamable_http import GET_STREAM_KEY, EventMessage

from write_gate.surface.sse_events import EventLog, SessionEvents


def note(n: int) -> types.JSONRPCNotification:
    return types.JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"n": n})


def replayed(session: SessionEvents, event_id: str) -> tuple[str | None, list[int]]:
    got: list[int] = []

    async def send(event: EventMessage) -> None:
        got.append(event.message.params["n"])

    stream = anyio.run(session.replay_events_after, event_id, send)
    return stream, got


def store(session: SessionEvents, stream: str, message: types.JSONRPCNotification | None) -> str:
    return anyio.run(session.store_event, stream, message)


def test_a_session_replays_its_stream_after_the_named_event_and_nothing_of_another_session() -> None:
    log = EventLog()
    mine, theirs = log.session(), log.session()
    priming = store(mine, "1", None)
    store(mine, "1", note(1))
    store(theirs, "1", note(99))  # the same request id in another session
    store(mine, "2", note(2))
    store(mine, "1", note(3))
    assert replayed(mine, priming) == ("1", [1, 3])
    assert replayed(theirs, priming) == (None, [])
    assert replayed(mine, "no-such-event") == (None, [])


def test_the_log_keeps_the_newest_within_its_bounds() -> None:
    size = len(note(0).model_dump_json(by_alias=True, exclude_unset=True))
    by_count, by_bytes = EventLog(max_events=3), EventLog(max_bytes=2 * size)
    for log in (by_count, by_bytes):
        session = log.session()
        first = store(session, "1", note(0))
        for n in range(1, 5):
            store(session, "1", note(n))
        assert replayed(session, first) == (None, [])  # dropped: a client that far behind starts over
    assert len(by_count) == 3 and len(by_bytes) == 2


def test_with_json_answers_only_the_get_stream_is_kept() -> None:
    """A POST answered as application/json carries no event id, so nothing can resume it: keeping (and sizing) it
    was a second serialisation of every answer for nothing. The GET stream stays resumable."""
    log = EventLog()
    session = log.session(json_answers=True)
    answer = store(session, "7", note(1))
    first = store(session, GET_STREAM_KEY, note(2))
    store(session, GET_STREAM_KEY, note(3))
    assert len(log) == 2
    assert replayed(session, answer) == (None, [])
    assert replayed(session, first) == (GET_STREAM_KEY, [3])
