"""`write-gate serve --transport http`: streamable HTTP on WRITE_GATE_HOST/WRITE_GATE_PORT, path /mcp."""

import socket
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.conftest import GATE_TOOLS, settings_env, write_gate_argv
from write_gate.config import BackendKind, Settings

pytestmark = pytest.mark.anyio


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_http_transport_serves_the_gate(tmp_path: Path) -> None:
    settings = Settings(backend=BackendKind.EMBEDDED, data_dir=tmp_path, embedded_fsync="everysec")
    port = free_port()
    env = {**settings_env(settings), "WRITE_GATE_PORT": str(port)}
    process = subprocess.Popen(
        write_gate_argv("serve", "--transport", "http"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        with anyio.fail_after(60):
            while True:
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                    await stream.aclose()
                    break
                except OSError:
                    assert process.poll() is None, process.stderr.read().decode()
                    await anyio.sleep(0.2)
        async with Client(url) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            assert names == sorted(GATE_TOOLS)
            result = await client.call_tool(
                "write_node",
                {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "http", "extraction_method": "api"},
            )
            assert not result.is_error and result.structured_content["confidence"] == 0.5
    finally:
        process.terminate()
        process.wait(timeout=30)
