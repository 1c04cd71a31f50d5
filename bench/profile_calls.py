"""Where one MCP call's time goes: per-operation medians of the memory profile against the transport's floor
(an empty tool on the same SDK and transport), over stdio and streamable HTTP, in one run.

    uv run --group bench python bench/profile_calls.py [--entities 1000] [--calls 300] [--transport stdio http]
    uv run --group bench python bench/profile_calls.py --py-spy /tmp/prof      # where the servers spend it
    uv run --group bench python bench/profile_calls.py --client-profile /tmp/prof  # the client's end (cProfile)
    uv run --group bench python bench/profile_calls.py --baseline OTHER/.venv/bin/write-gate  # before/after

The gate runs as `write-gate serve --profile memory` (embedded engine, WARNING logs), seeded with N entities
(two observations each) and N/2 relations; the timed loop then interleaves create_entities (one new entity),
search_nodes (about ten entities found) and open_nodes (one name); with --baseline, another build's server
runs beside this one on its own graph and each call goes to both in turn, so drift on the machine falls on
both alike. With --py-spy DIR, `py-spy record` (fetched by uvx) is attached to each server's timed loop
(by pid) and leaves DIR/<transport>-<server>.txt, collapsed stacks (`--format raw`); the heaviest frames
are printed. cProfile's figures inflate small calls; compare its lists, not its times.
"""

import argparse
import cProfile
import os
import pstats
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from run import NOOP_SERVER  # bench/ is this script's folder, first on sys.path

# The transport's floor over stdio: bench/run.py's empty tool on the same SDK, one copy for both benchmarks.
FLOOR_STDIO = NOOP_SERVER

FLOOR_HTTP = """
import sys, uvicorn, mcp_types as types
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Route
async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="noop", input_schema={"type": "object"})])
async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text="{}")], structured_content={})
server = Server("noop", on_list_tools=list_tools, on_call_tool=call_tool)
sessions = StreamableHTTPSessionManager(app=server)
app = Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(sessions))], lifespan=lambda _a: sessions.run())
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_argv(kind: str, transport: str, port: int, exe: str | None) -> list[str]:
    if kind == "floor":
        script = FLOOR_STDIO if transport == "stdio" else FLOOR_HTTP
        return [sys.executable, "-c", script, *([str(port)] if transport == "http" else [])]
    exe = exe or shutil.which("write-gate", path=str(Path(sys.executable).parent))
    assert exe, "write-gate is not installed in this environment"
    extra = ["--transport", "http", "--port", str(port), "--no-auth"] if transport == "http" else []
    return [exe, "serve", "--profile", "memory", *extra]


def server_pid(argv: list[str]) -> int:
    """The server process this one started (over stdio the SDK's client starts it)."""
    for child in psutil.Process().children(recursive=True):
        line = child.cmdline()  # a script's is [interpreter, script, ...]
        if line[-len(argv) + 1 :] == argv[1:] and argv[0] in line[:2]:
            return child.pid
    raise AssertionError(f"no server process {argv[:2]}")


def start_py_spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy attached to the running server: its own output stays off the server's stdout (the protocol)."""
    uvx = shutil.which("uvx")
    assert uvx, "--py-spy needs uvx on PATH"
    command = [uvx, "py-spy", "record", "--pid", str(pid), "--rate", "200", "--nonblocking", "--format", "raw"]
    spy = subprocess.Popen([*command, "--output", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)  # uvx and py-spy start before the timed loop
    return spy


def stop_py_spy(spy: subprocess.Popen[bytes]) -> None:
    spy.send_signal(signal.SIGINT)  # py-spy writes its profile on SIGINT
    spy.wait(timeout=60)


@asynccontextmanager
async def connect(argv: list[str], transport: str, port: int, env: dict[str, str]) -> AsyncIterator[Client]:
    if transport == "stdio":
        async with Client(StdioServerParameters(command=argv[0], args=argv[1:], env=env)) as client:
            yield client
        return
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        async with httpx2.AsyncClient(timeout=60) as http:
            while True:  # up once the port answers anything
                try:
                    await http.get(f"http://127.0.0.1:{port}/mcp")
                    break
                except httpx2.TransportError:
                    assert process.poll() is None and time.monotonic() < deadline, "the server did not start"
                    await anyio.sleep(0.1)
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:
                yield client
    finally:
        process.terminate()
        process.wait(timeout=60)


async def seed(client: Client, entities: int) -> None:
    for start in range(0, entities, 100):
        batch = [
            {"name": f"seed-{i:06d}", "entityType": "person", "observations": [f"likes topic {i % 97}", f"met {i}"]}
            for i in range(start, min(entities, start + 100))
        ]
        assert not (await client.call_tool("create_entities", {"entities": batch})).is_error
    for start in range(0, entities // 2, 100):
        relations = [
            {"from": f"seed-{i:06d}", "to": f"seed-{(i * 7 + 1) % entities:06d}", "relationType": "related_to"}
            for i in range(start, min(entities // 2, start + 100))
        ]
        assert not (await client.call_tool("create_relations", {"relations": relations})).is_error


def gate_ops(i: int, entities: int) -> dict[str, dict[str, Any]]:
    return {
        "create_entities": {
            "entities": [{"name": f"new-{i:06d}", "entityType": "person", "observations": [f"topic {i}"]}]
        },
        "search_nodes": {"query": f"topic {10 + (i * 13) % 87}"},  # about ten entities each
        "open_nodes": {"names": [f"seed-{(i * 37) % entities:06d}"]},
    }


async def gate_loop(clients: dict[str, Client], entities: int, calls: int, times: dict[str, dict[str, list[float]]]):
    """Each operation on each server in turn, so drift on the machine falls on all of them alike."""
    for i in range(calls):
        for tool, args in gate_ops(i, entities).items():
            for name, client in clients.items():
                started = time.perf_counter()
                result = await client.call_tool(tool, args)
                times[name][tool].append(time.perf_counter() - started)
                assert not result.is_error, (name, tool, result.structured_content)


async def floor_loop(client: Client, calls: int, times: list[float]) -> None:
    for _ in range(calls):
        started = time.perf_counter()
        await client.call_tool("noop", {})
        times.append(time.perf_counter() - started)


class Profiles:
    """py-spy on each server and cProfile on this client, while the timed loop runs (when asked for)."""

    def __init__(self, args: argparse.Namespace, transport: str, servers: dict[str, list[str]]) -> None:
        self.args, self.transport, self.servers = args, transport, servers
        self.spies: dict[str, subprocess.Popen[bytes]] = {}
        self.client = cProfile.Profile() if args.client_profile else None

    def start(self) -> None:
        if self.args.py_spy:
            for name, argv in self.servers.items():
                self.spies[name] = start_py_spy(server_pid(argv), self.raw(name))
        if self.client:
            self.client.enable()

    def raw(self, name: str) -> Path:
        return self.args.py_spy / f"{self.transport}-{name}.txt"

    def stop(self) -> None:
        if self.client:
            self.client.disable()
        for spy in self.spies.values():
            stop_py_spy(spy)

    def report(self) -> None:
        for name in self.spies:
            print_top(self.raw(name), name, self.transport)
        if self.client:
            self.args.client_profile.mkdir(parents=True, exist_ok=True)
            out = self.args.client_profile / f"client-{self.transport}-{'-'.join(self.servers)}.pstats"
            self.client.dump_stats(out)
            print(f"\nclient profile ({self.transport}, {', '.join(self.servers)}): {out}")
            pstats.Stats(str(out)).sort_stats("tottime").print_stats(12)


def gate_env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WRITE_GATE_")}
    return env | {"WRITE_GATE_DATA_DIR": str(data), "WRITE_GATE_LOG_LEVEL": "WARNING"}


async def measure_floor(transport: str, args: argparse.Namespace) -> float:
    port = free_port()
    argv = server_argv("floor", transport, port, None)
    profiles = Profiles(args, transport, {"floor": argv})
    times: list[float] = []
    async with connect(argv, transport, port, gate_env(Path(tempfile.gettempdir()))) as client:
        await floor_loop(client, 100, [])  # warm-up
        profiles.start()
        await floor_loop(client, args.calls * 3, times)
        profiles.stop()
    profiles.report()
    return statistics.median(times) * 1000


async def measure_gates(transport: str, args: argparse.Namespace, exes: dict[str, str | None]) -> dict[str, Any]:
    """Each build its own server and graph, seeded alike, called in turn."""
    ports = {name: free_port() for name in exes}
    servers = {name: server_argv("gate", transport, ports[name], exe) for name, exe in exes.items()}
    profiles = Profiles(args, transport, servers)
    times = {name: {tool: [] for tool in gate_ops(0, 1)} for name in exes}
    data = Path(tempfile.mkdtemp(prefix="wg-profile-"))
    try:
        async with AsyncExitStack() as stack:
            clients = {
                name: await stack.enter_async_context(connect(argv, transport, ports[name], gate_env(data / name)))
                for name, argv in servers.items()
            }
            for client in clients.values():
                await seed(client, args.entities)
            await gate_loop(clients, args.entities, 20, {name: {t: [] for t in gate_ops(0, 1)} for name in exes})
            profiles.start()
            await gate_loop(clients, args.entities, args.calls, times)
            profiles.stop()
    finally:
        shutil.rmtree(data, ignore_errors=True)
    profiles.report()
    return {name: {tool: statistics.median(t) * 1000 for tool, t in ops.items()} for name, ops in times.items()}


def print_top(raw: Path, kind: str, transport: str, top: int = 15) -> None:
    """The heaviest frames of a py-spy raw profile, by self time and by total time (inclusive)."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = stack.split(";")
        total += n
        own[frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n
    print(f"\n--- server profile {transport}/{kind}: {total} samples, {raw}")
    print("self time:")
    for frame, n in own.most_common(top):
        print(f"  {100 * n / total:5.1f}%  {frame}")
    print("total time (our code):")
    ours = [(f, n) for f, n in inclusive.most_common() if "write_gate" in f]
    for frame, n in ours[:top]:
        print(f"  {100 * n / total:5.1f}%  {frame}")


async def main(args: argparse.Namespace) -> None:
    if args.py_spy:
        args.py_spy.mkdir(parents=True, exist_ok=True)
    for transport in args.transport:
        floor = await measure_floor(transport, args)
        exes = {"gate": None, **({"baseline": str(args.baseline)} if args.baseline else {})}
        gates = await measure_gates(transport, args, exes)
        print(f"\n{transport}: floor {floor:.2f} ms (median of {args.calls * 3})")
        for op in ("create_entities", "search_nodes", "open_nodes"):
            line = "  ".join(f"{name} {ms[op]:6.2f} ms = {ms[op] / floor:4.2f}x" for name, ms in gates.items())
            print(f"  {op:<16} {line}  (medians of {args.calls})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--transport", nargs="+", choices=["stdio", "http"], default=["stdio", "http"])
    parser.add_argument("--py-spy", type=Path, help="profile each server with py-spy; files go to this folder")
    parser.add_argument("--baseline", type=Path, help="another build's write-gate, measured in the same run")
    parser.add_argument("--client-profile", type=Path, help="profile the client loop with cProfile; files here")
    anyio.run(main, parser.parse_args())
