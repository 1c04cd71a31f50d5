"""answers_owed: which requests read from stdin still wait for their answer, and how long the end waits."""

import anyio
import mcp_types as types
import pytest

from write_gate.surface.answers_owed import AnswersOwed

pytestmark = pytest.mark.anyio


def request(request_id: int | str) -> types.JSONRPCRequest:
    return types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="ping")


def answer(request_id: int | str) -> types.JSONRPCResponse:
    return types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result={})


def cancelled(request_id: int | str) -> types.JSONRPCNotification:
    params = {"requestId": request_id}
    return types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=params)


async def test_the_end_waits_for_each_answer_then_goes_on() -> None:
    owed = AnswersOwed()
    for request_id in (1, "two", 1):  # an id reused once its answer is out counts again
        owed.read(request(request_id))
    assert owed.count == 3
    settled: list[bool] = []
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: _record(owed, settled))
        await anyio.sleep(0.05)
        assert settled == []
        owed.answered(answer(1))
        owed.answered(types.JSONRPCError(jsonrpc="2.0", id="two", error=types.ErrorData(code=-1, message="no")))
        await anyio.sleep(0.05)
        assert settled == []  # the second request 1 is still owed
        owed.answered(answer(1))
    assert settled == [True] and owed.count == 0


async def _record(owed: AnswersOwed, settled: list[bool]) -> None:
    settled.append(await owed.settled(5))


async def test_a_cancelled_request_is_owed_nothing_and_unknown_answers_change_nothing() -> None:
    owed = AnswersOwed()
    owed.read(request(7))
    owed.answered(answer(8))  # an answer to no request read (a malformed line's, say) is not counted off
    owed.answered(types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=-32700, message="x")))
    assert owed.count == 1
    owed.read(cancelled(7))
    assert owed.count == 0 and await owed.settled(0.01) is True


async def test_the_wait_has_a_bound() -> None:
    owed = AnswersOwed()
    owed.read(request(1))
    assert await owed.settled(0.05) is False and owed.count == 1


async def test_a_listen_stream_is_owed_nothing() -> None:
    owed = AnswersOwed()
    owed.read(types.JSONRPCRequest(jsonrpc="2.0", id=3, method="subscriptions/listen", params={}))
    assert owed.count == 0  # it lasts as long as the client: a closed stdin must not wait on it
