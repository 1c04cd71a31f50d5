"""A crowd on one gate (issue 37): does one agent's read loop hold back another agent's writes?

One `write-gate serve --transport http` on a graph grown to N nodes (bench/scale.py's growth: :Person nodes,
one RELATED_TO per two). A victim agent loops `write_node` (a new node each call); an attacker agent, with a
read-only grant, loops one read after another, each for a phase of its own. Each agent is a process of its own,
as agents are: the attacker's client parsing its answers does not hold the victim's client. Printed: the victim's
p50 / p99 alone and under each attacker, its failed calls, and the attacker's call times. An attacker call still running
when its phase ends is waited for up to --attacker-timeout, then given up (the gate may still be running it).

    uv run python bench/crowd.py [--nodes 50000] [--seconds 20] [--attacker-timeout 180]
"""

import argparse
import asyncio
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from scale import grow, person, person_item, settle

from write_gate.access.agents import AgentsFile, Grant
from write_gate.services.reads import MAX_OPEN_NAMES
from write_gate.serving.config import Settings
from write_gate.surface.server import build_server


@dataclass(frozen=True)
class Attack:
    name: str  # as the table shows it
    tool: str
    args: dict[str, Any]


def attacks(nodes: int) -> list[Attack]:
    """The issue's table: each read the docs allow, with arguments that make it heavy."""
    names = [person(i) for i in range(min(nodes, MAX_OPEN_NAMES))]  # the most one call may name
    return [
        Attack('find_duplicates {"labels": ["Person"]}', "find_duplicates", {"labels": ["Person"]}),
        Attack(f"open_nodes with {len(names):,} names", "open_nodes", {"names": names}),
        Attack('changes_since {"limit": 500} from the start', "changes_since", {"limit": 500}),
        Attack('read_graph {"limit": 1000}', "read_graph", {"limit": 1000}),
        Attack('search_nodes {"query": "a"}', "search_nodes", {"query": "a"}),
        # Not in the table: the ranked search with a word every node holds (its 1,000-candidate cap judged).
        Attack('search_nodes_ranked {"query": "person"}', "search_nodes_ranked", {"query": "person"}),
    ]


@dataclass
class Phase:
    victim: list[float] = field(default_factory=list)  # seconds per answered write_node
    victim_failed: int = 0
    attacker: list[float] = field(default_factory=list)
    attacker_failed: int = 0
    attacker_unanswered: float | None = None  # seconds waited for a call given up on


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def session(url: str, token: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=600)) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        yield client


def wait_healthy(port: int, process: subprocess.Popen[bytes]) -> None:
    """Until the gate's /health says ok (it needs no token)."""
    for _ in range(1200):
        if process.poll() is not None:
            raise RuntimeError(f"write-gate serve ended with {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("write-gate serve did not become healthy")


async def grown(data: Path, nodes: int) -> float:
    """The graph grown in process (bench/scale.py's growth), before the HTTP gate opens the same folder; then the
    keeper's work on it done (`settle`), so the victim alone is measured on a graph at rest. Returns the seconds
    that settling took."""
    server = build_server(Settings(data_dir=data))
    async with Client(server) as client:
        await grow(client, 0, nodes)
        return await settle(server.services.gate)  # type: ignore[attr-defined]


async def victim_loop(client: Client, phase: Phase, until: float, first: int) -> None:
    i = first
    while time.perf_counter() < until:
        started = time.perf_counter()
        try:
            result = await client.call_tool("write_node", person_item(i))
            failed = result.is_error
        except Exception:  # a transport error is a failed call too
            failed = True
        if failed:
            phase.victim_failed += 1
        else:
            phase.victim.append(time.perf_counter() - started)
        i += 1


async def attacker_loop(client: Client, attack: Attack, phase: Phase, until: float, give_up: float) -> None:
    while time.perf_counter() < until:
        started = time.perf_counter()
        try:
            async with asyncio.timeout(give_up):
                result = await client.call_tool(attack.tool, attack.args)
        except TimeoutError:
            phase.attacker_unanswered = time.perf_counter() - started
            return
        except Exception as exc:  # a transport error: said once, and the phase goes on without the attacker
            print(f"attacker's {attack.tool} failed: {exc!r}", file=sys.stderr)
            phase.attacker_failed += 1
            return
        if result.is_error:
            phase.attacker_failed += 1
        phase.attacker.append(time.perf_counter() - started)


async def run_phase(victim: Client, attacker: "Attacker | None", seconds: float, first: int) -> Phase:
    phase = Phase()
    if attacker is not None:
        await attacker.go(seconds)
    await victim_loop(victim, phase, time.perf_counter() + seconds, first)
    if attacker is not None:
        phase.attacker, phase.attacker_failed, phase.attacker_unanswered = await attacker.results()
    return phase


_ATTACKER = "CROWD_ATTACKER"


class Attacker:
    """The attacker agent in a process of its own, as another agent is: its client's work (parsing megabytes of
    answers) does not hold the victim's client. Told when to start over its stdin; answers its times as JSON."""

    def __init__(self, url: str, token: str, attack: Attack, give_up: float) -> None:
        spec = json.dumps({"url": url, "token": token, "tool": attack.tool, "args": attack.args, "give_up": give_up})
        self._env = {**os.environ, _ATTACKER: spec}  # not in argv: the token would show in the process list
        self._process: asyncio.subprocess.Process | None = None

    async def ready(self) -> None:
        self._process = await asyncio.create_subprocess_exec(
            sys.executable, __file__, env=self._env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert self._process.stdout is not None
        await self._process.stdout.readline()  # "ready": connected and initialised

    async def go(self, seconds: float) -> None:
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.write(f"{seconds}\n".encode())
        await self._process.stdin.drain()

    async def results(self) -> tuple[list[float], int, float | None]:
        assert self._process is not None and self._process.stdout is not None
        line = await self._process.stdout.readline()
        await self._process.wait()
        found = json.loads(line)
        return found["times"], found["failed"], found["unanswered"]


async def attacker_process(spec: dict[str, Any]) -> None:
    """The attacker's side of `Attacker`."""
    attack = Attack(spec["tool"], spec["tool"], spec["args"])
    phase = Phase()
    async with session(spec["url"], spec["token"]) as client:
        print("ready", flush=True)
        seconds = float(await asyncio.to_thread(sys.stdin.readline))
        await attacker_loop(client, attack, phase, time.perf_counter() + seconds, spec["give_up"])
    found = {"times": phase.attacker, "failed": phase.attacker_failed, "unanswered": phase.attacker_unanswered}
    print(json.dumps(found), flush=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f}" if seconds >= 0.1 else f"{seconds * 1000:.1f}"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def row(name: str, phase: Phase) -> str:
    if phase.attacker_unanswered is not None:
        times = f"no answer in {phase.attacker_unanswered:.0f} s"
        if phase.attacker:
            times = f"{min(phase.attacker):.2f}–{max(phase.attacker):.2f} s; then {times}"
    elif phase.attacker:
        times = f"{min(phase.attacker):.2f}–{max(phase.attacker):.2f} s ({len(phase.attacker)} calls)"
    else:
        times = "—"
    if phase.attacker_failed:
        times += f", {phase.attacker_failed} refused"
    p50, p99 = percentile(phase.victim, 0.5), percentile(phase.victim, 0.99)
    return f"| {name} | {times} | {ms(p50)} | {ms(p99)} | {len(phase.victim)} | {phase.victim_failed} |"


async def crowd(nodes: int, seconds: float, give_up: float, only: list[str] | None) -> None:
    data = Path(tempfile.mkdtemp(prefix="wg-crowd-"))
    try:
        started = time.perf_counter()
        settled = await grown(data / "graph", nodes)
        print(f"graph grown to {nodes:,} nodes in {time.perf_counter() - started:.0f} s (settled in {settled:.0f} s)")
        agents = AgentsFile(data / "agents.toml", {})
        victim_token = agents.add("victim", Grant())
        attacker_token = agents.add("attacker", Grant(tools=("read",)))
        agents.save()
        port = free_port()
        env = {
            **os.environ,
            "WRITE_GATE_DATA_DIR": str(data / "graph"),
            "WRITE_GATE_AGENTS_FILE": str(data / "agents.toml"),
            "WRITE_GATE_TOOLSETS": "all",  # find_duplicates and changes_since are in sets not listed by default
            "WRITE_GATE_LOG_LEVEL": "WARNING",
        }
        exe = shutil.which("write-gate", path=str(Path(sys.executable).parent)) or "write-gate"
        server = subprocess.Popen([exe, "serve", "--transport", "http", "--port", str(port)], env=env)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(port, server)
            async with session(url, victim_token) as victim:
                for i in range(20):  # warm: the first calls load code paths and caches
                    await victim.call_tool("write_node", person_item(nodes + 20_000_000 + i))
                first = nodes + 10_000_000
                print(f"\nvictim: write_node in a loop; each phase {seconds:g} s\n")
                print("| the attacker loops | its calls take | victim p50 ms | victim p99 ms | victim calls | failed |")
                print("|---|---|---|---|---|---|")
                alone = await run_phase(victim, None, seconds, first)
                print(row("nothing (the victim alone)", alone), flush=True)
                for attack in attacks(nodes):
                    if only and attack.tool not in only:
                        continue
                    first += 1_000_000
                    attacker = Attacker(url, attacker_token, attack, give_up)
                    await attacker.ready()
                    phase = await run_phase(victim, attacker, seconds, first)
                    print(row(f"`{attack.name}`", phase), flush=True)
        finally:
            server.terminate()
            server.wait(timeout=60)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=50_000)
    parser.add_argument("--seconds", type=float, default=20.0, help="each phase's length")
    parser.add_argument("--attacker-timeout", type=float, default=180.0, help="an attacker call given up after")
    parser.add_argument("--only", default="", help="comma-separated attacker tools (default: every one)")
    args = parser.parse_args()
    if _ATTACKER in os.environ:  # started by Attacker: this process is the attacker agent
        asyncio.run(attacker_process(json.loads(os.environ[_ATTACKER])))
        return
    only = [name for name in args.only.split(",") if name] or None
    asyncio.run(crowd(args.nodes, args.seconds, args.attacker_timeout, only))


if __name__ == "__main__":
    main()
