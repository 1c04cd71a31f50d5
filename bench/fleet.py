"""A fleet at the speed of its transport (issue 39): many agents over streamable HTTP, each its own MCP session,
calling `write_node` (a new node each call) or `open_nodes` (one node it wrote) as fast as answers come; against
one gate process also `refused`: `open_nodes` with arguments its input model refuses (INVALID_INPUT), the gate's
whole call path (the grant, admission, the guard, validation, the answer) with no statement: set beside the floor,
it says what the path costs and what the tool's own work does.

Measured in one run, each target in turn on one data folder (its embedded engine shared, as gates on one folder
share it):
- `gate sse`, `gate json`: one `write-gate serve --transport http` answering calls as event streams (the
  default) or as application/json (`--http-response json`);
- `floor sse`, `floor json`: the MCP SDK's own server (MCPServer) with one empty tool, in each response mode:
  what a call costs before any tool runs;
- `1 stateless`, `2 stateless`: `serve --stateless --http-response json` replicas behind bench/round_robin.py,
  which runs in this process and sends each request to the next replica;
- `workers-1`, `workers-2`: `serve --stateless --http-response json --workers N`, N gate processes on one port
  (the kernel spreads connections among them: no balancer in this process).

Clients speak the handshake-era protocol with a session (the SDK's `mode="legacy"`), as released clients do, and
run in this process: on a small machine they share its cores with the servers, so compare ratios within one run.
With `--client light` they are bench/light_client.py's instead (JSON answers only: the `-json`, `stateless` and
`workers` targets), which cost this process about a tenth of what the SDK's client does per call, so the servers
have the cores. Printed: a table of calls/s, p50, p99, the server processes' CPU time per call (the engine's left
out) and this process's (the clients', and the balancer's where one runs) per target, agents and tool, then the gate
against the floor. On a shared machine the CPU time per call is the steadiest figure: other load stretches the wall
time of a call more than the work it takes.

    uv run python bench/fleet.py [--agents 1,4,16] [--calls 100] [--only gate-json,floor-json,...] [--client light]
"""

import argparse
import asyncio
import functools
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from light_client import LightSession
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from round_robin import round_robin

from write_gate.access.agents import AgentsFile, Grant

PERSON = {"label": "Person", "source": "fleet", "extraction_method": "manual"}
TARGETS = ("gate-sse", "gate-json", "floor-sse", "floor-json", "stateless-1", "stateless-2", "workers-1", "workers-2")
WARM = 3  # calls per agent before timing: the first load code paths and caches


@dataclass
class Result:
    target: str
    agents: int
    tool: str
    rate: float  # calls answered per second, all agents together
    p50: float
    p99: float
    failed: int
    cpu: float  # the server processes' CPU seconds per answered call (the engine's not included)
    client_cpu: float = 0.0  # this process's (the clients', and a balancer's where one runs here) per answered call
    engine_cpu: float = 0.0  # the engine's (redis-server's), per answered call

    def machine_cpu(self) -> float:
        """CPU seconds a call costs the machine: where the cores are all busy, calls/s is at most cores / this."""
        return self.cpu + self.engine_cpu + self.client_cpu


def cpu_seconds(pid: int, engine: bool = False) -> float:
    """CPU time (user and system) of `pid` and its descendants, less any engine (redis-server) among them: what the
    server's own code costs, which the machine's other load does not stretch as it does the wall time; with
    `engine`, the engine's alone."""
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue
            comm_end = text.rindex(")")
            fields = text[comm_end + 2 :].split()  # from the state on: ppid is [1], utime [11], stime [12]
            stats[int(entry.name)] = [text[text.index("(") + 1 : comm_end], *fields]
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        found = stats.get(current)
        if found is not None and (found[0] == "redis-server") == engine:
            total += (int(found[12]) + int(found[13])) / ticks
    return total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(port: int, path: str, process: subprocess.Popen[bytes]) -> None:
    """Until the server answers `path` (a gate's /health with 200; the floor's /mcp with anything)."""
    for _ in range(1200):
        if process.poll() is not None:
            raise RuntimeError(f"a server ended with {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", path)
            status = connection.getresponse().status
            if status == 200 or path == "/mcp":
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("a server did not become ready")


@contextmanager
def process(argv: list[str], env: dict[str, str], port: int, path: str) -> Iterator[int]:
    """The server's pid, once it answers."""
    started = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, path, started)
        yield started.pid
    finally:
        started.terminate()
        started.wait(timeout=60)


def floor_server(port: int, mode: str) -> None:
    """The SDK's own server with one empty tool, over streamable HTTP (this script, re-run with --floor)."""
    import anyio
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("floor")

    @server.tool()
    def nothing() -> str:
        return ""

    anyio.run(functools.partial(server.run_streamable_http_async, port=port, json_response=mode == "json"))


@asynccontextmanager
async def target(name: str, env: dict[str, str]) -> AsyncIterator[tuple[str, list[int]]]:
    """The URL of `name`'s server(s) and their pids, started for the block and stopped after it."""
    exe = shutil.which("write-gate", path=str(Path(sys.executable).parent)) or "write-gate"
    with ExitStack() as stack:
        if name.startswith("floor"):
            port = free_port()
            argv = [sys.executable, __file__, "--floor", str(port), name.removeprefix("floor-")]
            pid = stack.enter_context(process(argv, env, port, "/mcp"))
            yield f"http://127.0.0.1:{port}", [pid]
            return
        serve = [exe, "serve", "--transport", "http"]
        if name.startswith("workers"):
            port = free_port()
            argv = [*serve, "--port", str(port), "--http-response", "json", "--stateless"]
            argv += ["--workers", name.removeprefix("workers-")]
            pid = stack.enter_context(process(argv, env, port, "/health"))
            yield f"http://127.0.0.1:{port}", [pid]  # the workers are its children: their CPU is counted with it
            return
        if name.startswith("gate"):
            port = free_port()
            argv = [*serve, "--port", str(port), "--http-response", name.removeprefix("gate-")]
            pid = stack.enter_context(process(argv, env, port, "/health"))
            yield f"http://127.0.0.1:{port}", [pid]
            return
        ports = [free_port() for _ in range(int(name.removeprefix("stateless-")))]
        pids = []
        for port in ports:
            argv = [*serve, "--port", str(port), "--http-response", "json", "--stateless"]
            pids.append(stack.enter_context(process(argv, env, port, "/health")))
        async with round_robin([("127.0.0.1", port) for port in ports]) as (_balancer, url):
            yield url, pids


@asynccontextmanager
async def session(url: str, token: str, light: bool, stateless: bool) -> AsyncIterator[Client | LightSession]:
    """The SDK's client in a session of its own, or (`light`) bench/light_client.py's."""
    if light:
        client = LightSession(f"{url}/mcp", token)
        try:
            await client.open(stateless)
            yield client
        finally:
            await client.close()
        return
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=600)) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as client,
    ):
        yield client


# The gate's whole call path with no tool work: arguments the tool's input model refuses (INVALID_INPUT), answered
# after the grant, the admission, the guard and the validation, as every call is, but before any statement.
REFUSED = ("open_nodes", {"names": 5})


async def called(client: Client | LightSession, name: str, arguments: dict[str, Any], refused: bool = False) -> bool:
    """Whether the call was answered without error (a transport error is a failed call too); with `refused`,
    whether it was refused INVALID_INPUT, as REFUSED is."""
    try:
        if isinstance(client, LightSession):
            if not refused:
                await client.call_tool(name, arguments)
                return True
            message = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
            _status, _headers, payload = await client.post(message)
            result = json.loads(payload).get("result") or {}
        else:
            answer = await client.call_tool(name, arguments)
            result = {"isError": answer.is_error, "structuredContent": answer.structured_content}
        if not refused:
            return not result.get("isError")
        return (
            bool(result.get("isError")) and (result.get("structuredContent") or {}).get("error_code") == "INVALID_INPUT"
        )
    except Exception:
        return False


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def load(
    url: str, pids: list[int], tokens: list[str], name: str, agents: int, calls: int, tool: str, light: bool = False
) -> Result:
    """`agents` sessions, each an agent of its own (`tokens`: its bearer token; so each has its own share of the
    gate's per-agent limits), making `calls` calls of `tool` one after another, all at once."""
    latencies: list[float] = []
    failed = 0

    def arguments(agent: int, i: int) -> tuple[str, dict[str, Any]]:
        if name.startswith("floor"):
            return "nothing", {}
        if tool == "refused":
            return REFUSED
        if tool == "write_node":
            return tool, {**PERSON, "merge_keys": {"name": f"{name}-{agents}-{agent}-{i}"}}
        return tool, {"names": [f"{name}-{agents}-{agent}-w{i % WARM}"]}

    async with AsyncExitStack() as stack:
        stateless = name.startswith(("stateless", "workers"))
        clients = [await stack.enter_async_context(session(url, tokens[i], light, stateless)) for i in range(agents)]
        for agent, client in enumerate(clients):  # warm; these also write the nodes open_nodes reads
            for i in range(WARM):
                args = {**PERSON, "merge_keys": {"name": f"{name}-{agents}-{agent}-w{i}"}}
                await called(client, *(("nothing", {}) if name.startswith("floor") else ("write_node", args)))

        async def agent_loop(agent: int, client: Client | LightSession) -> None:
            nonlocal failed
            for i in range(calls):
                started = time.perf_counter()
                if await called(client, *arguments(agent, i), refused=tool == "refused"):
                    latencies.append(time.perf_counter() - started)
                else:
                    failed += 1

        began, cpu, own = time.perf_counter(), sum(map(cpu_seconds, pids)), time.process_time()
        engine = sum(cpu_seconds(pid, engine=True) for pid in pids)
        async with asyncio.TaskGroup() as tasks:
            for agent, client in enumerate(clients):
                tasks.create_task(agent_loop(agent, client))
        wall, cpu = time.perf_counter() - began, sum(map(cpu_seconds, pids)) - cpu
        engine = sum(cpu_seconds(pid, engine=True) for pid in pids) - engine
        own = time.process_time() - own
    answered = max(len(latencies), 1)
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    n = answered
    return Result(name, agents, tool, len(latencies) / wall, p50, p99, failed, cpu / n, own / n, engine / n)


def tools_of(target: str) -> tuple[str, ...]:
    """The floor's one empty tool; a write and a read; and for one gate process, its call path alone (`refused`)."""
    if target.startswith("floor"):
        return ("write_node",)
    return ("write_node", "open_nodes", "refused") if target.startswith("gate") else ("write_node", "open_nodes")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


async def fleet(agent_counts: list[int], calls: int, only: list[str], light: bool = False) -> list[Result]:
    folder = Path(tempfile.mkdtemp(prefix="wg-fleet-"))
    try:
        agents_file = AgentsFile(folder / "agents.toml", {})
        tokens = [agents_file.add(f"fleet-{i}", Grant()) for i in range(max(agent_counts))]
        agents_file.save()
        env = {
            **os.environ,
            "WRITE_GATE_DATA_DIR": str(folder / "graph"),
            "WRITE_GATE_AGENTS_FILE": str(folder / "agents.toml"),
            "WRITE_GATE_LOG_LEVEL": "WARNING",
            "WRITE_GATE_EMBEDDED_FSYNC": "everysec",
        }
        results = []
        for name in only:
            async with target(name, env) as (url, pids):
                for tool in tools_of(name):
                    for agents in agent_counts:
                        result = await load(url, pids, tokens, name, agents, calls, tool, light)
                        results.append(result)
                        shown = "nothing" if name.startswith("floor") else tool
                        print(
                            f"| {name} | {agents} | {shown} | {result.rate:,.0f} | {ms(result.p50)} | "
                            f"{ms(result.p99)} | {ms(result.cpu)} | {ms(result.engine_cpu)} | "
                            f"{ms(result.client_cpu)} | {result.failed} |",
                            flush=True,
                        )
        return results
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def summary(results: list[Result]) -> None:
    def found(target: str, agents: int, tool: str) -> Result | None:
        return next((r for r in results if r.target == target and r.agents == agents and r.tool == tool), None)

    def rate(target: str, agents: int, tool: str) -> float | None:
        result = found(target, agents, tool)
        return result.rate if result else None

    lines = []
    for r in results:
        floor = found("floor-" + r.target.removeprefix("gate-"), r.agents, "write_node")
        if r.target.startswith("gate") and floor is not None:
            lines.append(
                f"{r.target} {r.tool} at {r.agents} agents: {r.rate / floor.rate:.2f}x the floor calls/s, "
                f"p50 {r.p50 / floor.p50:.2f}x, server CPU per call "
                # A tiny run can finish within one tick of the process clock: no CPU seen, no ratio.
                + (f"{r.cpu / floor.cpu:.2f}x" if floor.cpu > 0 else "not measured (no CPU time recorded)")
            )
            if r.machine_cpu() > 0 and floor.machine_cpu() > 0:
                # What the machine's cores allow: a call through the gate costs them the gate's CPU, its engine's
                # and its client's. Were they all busy, the gate could answer at most cores / that a second; and
                # were the gate's own work as cheap as the floor's empty tool, cores / (the floor's server CPU +
                # the engine's + the client's): the engine's share alone bounds any gate.
                cores = os.cpu_count() or 1
                bound, free = cores / r.machine_cpu(), cores / (floor.cpu + r.engine_cpu + r.client_cpu)
                lines.append(
                    f"  CPU a call: {ms(r.cpu)} ms gate + {ms(r.engine_cpu)} engine + {ms(r.client_cpu)} client "
                    f"(the floor's: {ms(floor.machine_cpu())}); the {cores} cores allow at most {bound:,.0f} calls/s "
                    f"({bound / floor.rate:.2f}x the floor's), {free:,.0f} ({free / floor.rate:.2f}x) were the "
                    "gate's own work the floor's"
                )
        if r.target == "stateless-2":
            one = rate("stateless-1", r.agents, r.tool)
            if one:
                lines.append(f"2 stateless replicas, {r.tool} at {r.agents} agents: {r.rate / one:.2f}x one replica")
        if r.target == "workers-2":
            one = rate("workers-1", r.agents, r.tool)
            if one:
                lines.append(f"--workers 2, {r.tool} at {r.agents} agents: {r.rate / one:.2f}x one worker")
    for line in lines:
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", default="1,4,16", help="comma-separated agent counts (default 1,4,16)")
    parser.add_argument("--calls", type=int, default=100, help="timed calls per agent (default 100)")
    parser.add_argument("--only", default=",".join(TARGETS), help=f"targets, of {', '.join(TARGETS)}")
    parser.add_argument(
        "--client",
        choices=("sdk", "light"),
        default="sdk",
        help="sdk: the MCP SDK's client (default); light: bench/light_client.py, JSON answers only",
    )
    parser.add_argument("--floor", nargs=2, metavar=("PORT", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        floor_server(int(args.floor[0]), args.floor[1])
        return
    only = [name for name in args.only.split(",") if name]
    unknown = [name for name in only if name not in TARGETS]
    if unknown:
        parser.error(f"unknown targets: {', '.join(unknown)}")
    light = args.client == "light"
    if light and (streams := [name for name in only if name.endswith("-sse")]):
        parser.error(f"the light client reads JSON answers only: not {', '.join(streams)}")
    counts = [int(n) for n in args.agents.split(",")]
    print(
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start; {args.calls} calls per agent; "
        f"the {args.client} client"
    )
    print(
        "| target | agents | tool | calls/s | p50 ms | p99 ms | server CPU ms/call | engine CPU ms/call "
        "| client CPU ms/call | failed |",
        flush=True,
    )
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    results = asyncio.run(fleet(counts, args.calls, only, light))
    summary(results)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
