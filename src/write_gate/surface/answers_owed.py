"""The requests read from stdin and not yet answered, so that a closed stdin ends serving only once they are.

When its read stream ends, the SDK cancels every request still running: a client that writes its calls and
then closes stdin at once (`write-gate serve < calls.jsonl`, a script's pipe) lost the answers of the last
ones, and a write could be cut off part way. The stdio transport holds the end of stdin back until each
request read has been answered (or cancelled by the client), for at most `DRAIN_SECONDS`; SIGTERM and SIGHUP
still stop serving at once.
"""

from collections import Counter
from typing import Any

import anyio
import mcp_types as types

# Long enough for a large import to finish; a client that will not wait sends SIGTERM (the MCP stdio shutdown).
DRAIN_SECONDS = 60.0


# A request whose answer is a stream that lasts until the client leaves: nothing to wait for once it has.
STREAMS = frozenset({"subscriptions/listen"})


def _key(request_id: Any) -> str:
    return str(request_id)  # a response may carry 1 for "1" (the SDK coerces ids); a repeat is one more owed


class AnswersOwed:
    """Request ids read and not yet answered, counted (a client may reuse an id once its answer is out)."""

    def __init__(self) -> None:
        self._owed: Counter[str] = Counter()
        self._changed = anyio.Event()
        self._unread = False  # the client closed stdout: no answer can reach it

    def nobody_reads(self) -> None:
        """The client has gone (its end of stdout closed): nothing is owed any more, so stdin's end is not held
        back, and the SDK cancels the calls still running."""
        self._unread = True
        self._changed.set()

    def read(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest) and message.method not in STREAMS:
            self._owed[_key(message.id)] += 1
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            cancelled = (message.params or {}).get("requestId")
            self._settle(_key(cancelled))  # a cancelled request gets no answer (MCP cancellation)

    def answered(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)) and message.id is not None:
            self._settle(_key(message.id))

    def _settle(self, key: str) -> None:
        if key in self._owed:
            self._owed[key] -= 1
            if not self._owed[key]:
                del self._owed[key]  # a long session's ids must not pile up
            self._changed.set()

    @property
    def count(self) -> int:
        return sum(self._owed.values())

    async def settled(self, seconds: float = DRAIN_SECONDS) -> bool:
        """Wait until every request read is answered; False when `seconds` passed first."""
        with anyio.move_on_after(seconds):
            while self.count and not self._unread:
                self._changed = anyio.Event()
                await self._changed.wait()
            return True
        return False


class CountedAnswers:
    """The transport's write stream, as the server writes to it, counting each answer off `owed`."""

    def __init__(self, stream: Any, owed: AnswersOwed) -> None:
        self._stream = stream
        self._owed = owed

    async def send(self, item: Any) -> None:
        await self._stream.send(item)
        self._owed.answered(item.message)

    async def __aenter__(self) -> "CountedAnswers":
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._stream.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
