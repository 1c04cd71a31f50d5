"""Console login attempts, throttled (issue 36, item 10): at most so many in a sliding window from one client
address, and at most so many from everywhere, so a token cannot be guessed at speed from one address or from
many. An attempt over a limit is refused (and not counted), with the time until the window lets one more in.
The caller passes the time; nothing here reads a clock.
"""

from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Literal

Scope = Literal["address", "overall"]


@dataclass(frozen=True)
class LoginLimit:
    attempts: int
    seconds: float


@dataclass(frozen=True)
class Throttled:
    """Why an attempt was refused: which limit, and how long until one more is let in."""

    scope: Scope
    limit: LoginLimit
    retry_after: float

    def message(self) -> str:
        where = "from this address" if self.scope == "address" else "from all addresses together"
        return (
            f"too many login attempts {where} (at most {self.limit.attempts} in {self.limit.seconds:g} s): "
            f"try again in {self.retry_after:.0f} s"
        )


class LoginThrottle:
    TRACKED = 10_000  # addresses remembered at most; past it the least recent are forgotten (the overall limit holds)

    def __init__(self) -> None:
        self._by_address: OrderedDict[str, deque[float]] = OrderedDict()
        self._everywhere: deque[float] = deque()

    def attempt(self, address: str, now: float, per_address: LoginLimit, overall: LoginLimit) -> Throttled | None:
        """None, and the attempt counted, when both limits let it in; else what refused it."""
        mine = self._by_address.get(address) or deque()
        _expire(mine, now, per_address.seconds)
        _expire(self._everywhere, now, overall.seconds)
        if len(mine) >= per_address.attempts:
            return Throttled("address", per_address, _wait(mine, now, per_address, len(mine)))
        if len(self._everywhere) >= overall.attempts:
            return Throttled("overall", overall, _wait(self._everywhere, now, overall, len(self._everywhere)))
        mine.append(now)
        self._everywhere.append(now)
        self._by_address[address] = mine
        self._by_address.move_to_end(address)
        while len(self._by_address) > self.TRACKED:
            self._by_address.popitem(last=False)
        return None


def _expire(times: deque[float], now: float, seconds: float) -> None:
    while times and times[0] <= now - seconds:
        times.popleft()


def _wait(times: deque[float], now: float, limit: LoginLimit, held: int) -> float:
    """Until enough of the oldest attempts leave the window for one more to fit (at least a second)."""
    oldest_to_leave = times[held - limit.attempts] if limit.attempts > 0 else now
    return max(1.0, oldest_to_leave + limit.seconds - now)
