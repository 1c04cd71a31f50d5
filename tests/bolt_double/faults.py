"""Fault hooks: make the double misbehave the way Memgraph or the network does, so the backend's retry, timeout
and unavailability code runs for real. They live in the tests only; production code has no hook."""

import threading
from dataclasses import dataclass, field
from enum import StrEnum


class Action(StrEnum):
    # RUN fails with Memgraph's TransientError for a write-write conflict; nothing is executed.
    TRANSIENT = "transient"
    # The transaction's COMMIT (or an auto-commit's PULL) fails with Memgraph's unique-constraint ClientError;
    # nothing is executed, as Memgraph rolls the loser back.
    UNIQUE_VIOLATION = "unique_violation"
    # RUN answers after `seconds`; past the transaction's `tx_timeout` it fails with Memgraph's timeout abort.
    DELAY = "delay"
    # RUN never answers (a frozen server): only the client's own deadline ends the wait.
    FREEZE = "freeze"
    # The connection is closed when RUN arrives; nothing is executed.
    DROP = "drop"
    # The statement runs, and the connection is closed when its COMMIT arrives: a Memgraph that died while
    # committing (the driver raises IncompleteCommit; whether it committed is unknown, and here it did).
    LOST_COMMIT = "lost_commit"
    # RUN fails with Memgraph's TransientError for a full memory; nothing is executed.
    OUT_OF_MEMORY = "out_of_memory"
    # RUN fails as a Memgraph before 3.6 without --experimental-enabled=text-search refuses text indexes and
    # text search; nothing is executed.
    NO_TEXT_SEARCH = "no_text_search"
    # RUN waits until the test releases the fault (`Fault.release`), then runs: a statement the engine queues
    # behind others, placed exactly where the test wants it among them. Nothing else on the double waits.
    HOLD = "hold"


@dataclass
class Fault:
    action: Action
    match: str = ""  # a substring of the statement text; "" matches every statement
    times: int = 1
    seconds: float = 0.0
    reached: threading.Event = field(default_factory=threading.Event)  # a statement waits at a HOLD
    released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self.released.set()


class Faults:
    """Armed faults, each taken by the first `times` statements it matches. Thread-safe: tests arm them from
    their own thread while the double runs on another."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed: list[Fault] = []
        self.fired: list[tuple[Action, str]] = []

    def arm(self, action: Action | str, match: str = "", times: int = 1, seconds: float = 0.0) -> Fault:
        fault = Fault(Action(action), match, times, seconds)
        with self._lock:
            self._armed.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            for fault in self._armed:
                fault.release()  # nothing stays held once the test is done with its faults
            self._armed.clear()

    def take(self, statement: str) -> Fault | None:
        with self._lock:
            for fault in self._armed:
                if fault.times > 0 and fault.match in statement:
                    fault.times -= 1
                    self.fired.append((fault.action, statement))
                    return fault
        return None
