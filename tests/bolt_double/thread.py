"""Run a BoltDouble on its own event loop in a background thread: for a session-wide double that outlives each
test's event loop and serves `write-gate serve` subprocesses as well."""

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any

from tests.bolt_double.server import BoltDouble


class DoubleThread:
    def __init__(self, double: BoltDouble) -> None:
        self.double = double
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="bolt-double", daemon=True)

    def _call[T](self, coroutine: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout)

    def start(self, port: int = 0) -> str:
        self._thread.start()
        self._call(self.double.start(port))
        return self.double.url()

    def drop_connections(self) -> None:
        self._call(self.double.drop_connections())

    def stop(self) -> None:
        try:
            self._call(self.double.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()
