"""`write-gate serve --transport http` as a separate process on a free port, agents made with the
`write-gate agents` command (in process: tests/conftest.py's run_write_gate), and raw HTTP requests whose headers
(Host, Origin) the test chooses."""

import http.client
import json
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import run_write_gate, settings_env, write_gate_argv
from write_gate.serving.config import Settings

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw-http", "version": "1"}},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def agents_command(settings: Settings, *args: str) -> str:
    """Run `write-gate agents ...` in process; its standard output (a new token, for `add`)."""
    result = run_write_gate("agents", *args, env=settings_env(settings))
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@dataclass
class Gate:
    url: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path


@contextmanager
def http_gate(settings: Settings, log: Path, *serve_args: str, **env: str) -> Iterator[Gate]:
    """A gate on 127.0.0.1 (or as serve_args say) and a free port given by `--port`; ready once /health is 200."""
    port = free_port()
    command = write_gate_argv("serve", "--transport", "http", "--port", str(port), *serve_args)
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            command, env={**settings_env(settings), **env}, stdout=subprocess.DEVNULL, stderr=stderr
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while request(url, "GET", "/health")[0] != 200:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the gate did not become healthy"
            time.sleep(0.1)
        yield Gate(url, port, process, log)
    finally:
        process.terminate()
        process.wait(timeout=30)


def request(
    url: str, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    """(status, headers with lower-case names, body); 0 when nothing listens. A body that is bytes is sent as
    it is, anything else as JSON; Host and Origin are sent as given."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        sent = {"Host": f"{host}:{port}", **(headers or {})}
        if data is not None:
            sent |= {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
            sent["Content-Length"] = str(len(data))
        for name, value in sent.items():
            connection.putheader(name, value)
        connection.endheaders(data)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()
    except ConnectionRefusedError:
        return 0, {}, ""
    finally:
        connection.close()


def mcp_post(
    url: str,
    token: str | None,
    message: dict[str, Any] | bytes,
    headers: dict[str, str] | None = None,
    session: str = "",
) -> tuple[int, dict[str, str], str]:
    """One JSON-RPC message to /mcp, with a bearer token, an MCP session id and other headers when given."""
    sent = dict(headers or {})
    if token:
        sent["Authorization"] = f"Bearer {token}"
    if session:
        sent |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"}
    return request(url, "POST", "/mcp", message, sent)


@asynccontextmanager
async def mcp_client(url: str, token: str | None, mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP, sending the token on every request: its public API, as
    docs/clients/connecting.md shows it (a long read timeout for the event stream). `mode`: the SDK's choice of
    protocol (`auto`: 2026-07-28, sessionless, with this gate; `legacy`: the handshake and a session, as every
    released client)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client
