"""A `write-gate serve` process spoken to over stdio line by line, as a client's transport would."""

import json
import queue
import subprocess
import threading
from typing import IO, Any

from tests.conftest import settings_env, write_gate_argv
from write_gate.serving.config import Settings


class RawStdio:
    """A server process spoken to line by line, as a client's transport would."""

    def __init__(
        self, settings: Settings, *options: str, stderr: IO[bytes] | int = subprocess.DEVNULL, **env: str
    ) -> None:
        self.process = subprocess.Popen(
            write_gate_argv(*options, "serve"),
            env={**settings_env(settings), **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stdout: list[bytes] = []  # every line the server wrote, for checking that only messages were
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.stdout.append(line)
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answer(self, timeout: float = 30) -> dict[str, Any]:
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError(f"no answer within {timeout} s") from None

    def request(self, request_id: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params else {})}
        self.send(json.dumps(message).encode())
        return self.answer(timeout=60)

    def initialize(self) -> None:
        info = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        assert "result" in self.request(0, "initialize", info)
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
