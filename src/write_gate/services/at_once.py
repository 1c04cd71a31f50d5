"""A read and the check that says whether its answer can be trusted, sent together (each on a connection of its
own), so a call waits for the slower of the two rather than for both in turn."""

import asyncio
from collections.abc import Awaitable


async def checked_read[T](check: Awaitable[bool], read: Awaitable[T]) -> T | None:
    """`read`'s answer where `check` passed, None where it did not, whatever `read` did meanwhile (as if it had
    not been sent: an index not ready may answer less, or refuse). A failure of `check` is raised; one of `read`
    only where `check` passed."""
    passed, answer = await asyncio.gather(check, read, return_exceptions=True)
    if isinstance(passed, BaseException):
        raise passed
    if not passed:
        return None
    if isinstance(answer, BaseException):
        raise answer
    return answer
