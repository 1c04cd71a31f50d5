"""services/at_once.py: two reads in flight together, not in turn; a failure raised as it is."""

import anyio
import pytest

from write_gate.core.model import ErrorCode, GateRejection
from write_gate.services.at_once import at_once

pytestmark = pytest.mark.anyio


async def test_the_second_is_sent_before_the_first_is_answered() -> None:
    first_sent, second_sent = anyio.Event(), anyio.Event()

    async def read(mine: anyio.Event, other: anyio.Event, answer: str) -> str:
        mine.set()
        await other.wait()  # answered only once the other is in flight too: in turn, this would wait forever
        return answer

    with anyio.fail_after(5):
        assert await at_once(read(first_sent, second_sent, "a"), read(second_sent, first_sent, "b")) == ("a", "b")


async def test_a_failure_is_raised_as_it_is() -> None:
    async def refused() -> None:
        raise GateRejection(ErrorCode.BACKEND_UNAVAILABLE, "away")

    async def answered() -> int:
        await anyio.sleep(0.01)
        return 1

    with pytest.raises(GateRejection) as raised:
        await at_once(answered(), refused())
    assert raised.value.rejected.error_code == ErrorCode.BACKEND_UNAVAILABLE
