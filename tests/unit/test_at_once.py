"""services/at_once.py: a read and its check in flight together, not in turn; the read's answer kept only where the
check passed, whatever the read did; a failure raised as it is."""

import anyio
import pytest

from write_gate.core.model import ErrorCode, GateRejection
from write_gate.services.at_once import checked_read

pytestmark = pytest.mark.anyio


def refusal() -> GateRejection:
    return GateRejection(ErrorCode.BACKEND_UNAVAILABLE, "away")


async def test_the_read_is_sent_before_the_check_is_answered() -> None:
    check_sent, read_sent = anyio.Event(), anyio.Event()

    async def check() -> bool:
        check_sent.set()
        await read_sent.wait()  # answered only once the read is in flight too: in turn, this would wait forever
        return True

    async def read() -> str:
        read_sent.set()
        await check_sent.wait()
        return "page"

    with anyio.fail_after(5):
        assert await checked_read(check(), read()) == "page"


async def test_a_failed_check_drops_the_read_whatever_it_did() -> None:
    async def failing() -> bool:
        return False

    async def page() -> str:
        return "page"

    async def refused() -> str:
        raise refusal()

    assert await checked_read(failing(), page()) is None
    assert await checked_read(failing(), refused()) is None


async def test_a_failure_of_the_check_or_of_a_trusted_read_is_raised_as_it_is() -> None:
    async def passing() -> bool:
        return True

    async def broken_check() -> bool:
        raise refusal()

    async def refused() -> str:
        raise refusal()

    async def page() -> str:
        return "page"

    for check, read in ((passing(), refused()), (broken_check(), page())):
        with pytest.raises(GateRejection) as raised:
            await checked_read(check, read)
        assert raised.value.rejected.error_code == ErrorCode.BACKEND_UNAVAILABLE
