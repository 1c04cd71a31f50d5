"""A history check in the manner of Jepsen's Elle: gate processes on one graph, writers racing on a few subjects,
a poller following the change feed, engines killed mid-run; then each subject's history is checked as one
serial chain, and the feed against it.

The workload: `writers` clients spread over `gates` `write-gate serve` processes (stdio), each writing a value no
other write uses to one of `subjects` nodes, every call with its own idempotency key; an answer of
BACKEND_UNAVAILABLE (or a key still in progress) is sent again with the same key, as a careful agent does. So each
write ends acknowledged, refused (it must not be there), or unknown (IDEMPOTENCY_OUTCOME_UNKNOWN, or no answer at
all: it may be there, once). A poller follows `changes_since` throughout. The checks, per subject:

- its value records (get_history) have revisions 1, 2, ..., n: none missing, none twice; the node's revision is n;
- each record's `before` is the previous one's `after`; the node holds the last `after`;
- every acknowledged value is recorded exactly once, a refused one never, an unknown one at most once, and no
  value is recorded that no writer sent;
- acknowledged writes are in real-time order: one answered before another was sent comes first;
- the feed answered the same changes in the same order, each once, none skipped, and none before it was
  `settle` seconds old.
"""

import math
import os
import random
import signal
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import anyio
from mcp import Client, StdioServerParameters

from tests.conftest import settings_env, start_falkordb_server, stop_server, write_gate_argv
from tests.integration.test_embedded import engines_on
from write_gate.core.cypher.statement import Statement
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, Fsync, Settings
from write_gate.store.migrations import migrate

SETTLE = 1.0  # the feed's settle window (the gate's default)
RETRY_PAUSE = (0.05, 0.25)  # a writer's pause before sending a call again
GIVE_UP_SECONDS = 30.0  # a call still not answered for good after this long counts as unknown


# --- the engine under the gates ----------------------------------------------------------------------------------


class Tier(Protocol):
    name: str
    settings: Settings

    def kill(self) -> None: ...  # SIGKILL the engine; it comes back (by the gates, or started again here)

    def close(self) -> None: ...


class EmbeddedTier:
    """One data folder: the gates share its engine, and start it again when it is killed."""

    name = "embedded"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # The default, appendfsync no (the gates sync every second), answers no write before the engine has written
        # it to its file, as the external tier's always: under everysec, while a slow fsync runs (a busy disk), redis
        # holds its writes to the file back for up to 2 s and answers meanwhile, so a kill loses what it answered (CI
        # lost about 48 acknowledged writes over five kills so: why everysec is not the default).
        self.settings = Settings(backend=BackendKind.EMBEDDED, data_dir=folder, graph_name="chains")
        assert self.settings.embedded_fsync in (Fsync.NO, Fsync.ALWAYS)  # no answer before the write

    def kill(self) -> None:
        for engine in engines_on(self.folder):
            os.kill(engine.pid, signal.SIGKILL)

    def close(self) -> None:
        pass


class FalkorDBTier:
    """An external FalkorDB (append-only, fsync always); a kill is followed by a restart on the same port and
    files, as a supervisor would."""

    name = "falkordb"

    # Every restart replays the queries appended since the last rewrite, slowly (a round appends about 3 MB):
    # rewriting them into a snapshot from 1 MB on keeps a restart short however many rounds have run.
    OPTIONS = ["--auto-aof-rewrite-min-size", "1mb"]

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.process, url = start_falkordb_server(folder, options=self.OPTIONS)
        self.port = int(url.rsplit(":", 1)[1])
        self.settings = Settings(backend=BackendKind.FALKORDB, falkordb_url=url, graph_name="chains")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        time.sleep(0.2)  # down for a moment: calls meanwhile find no engine
        self.process, _ = start_falkordb_server(self.folder, self.port, options=self.OPTIONS)

    def close(self) -> None:
        stop_server(self.process)


class BoltTier(FalkorDBTier):
    """The Memgraph backend and the real neo4j driver, through the Bolt double, with the FalkorDB behind it killed
    and started again (the double answers as a Memgraph that died would: tests/bolt_double/server.py).

    The gates' statistics keeper is off here: every statement it sends every 2 s from each gate is answered by
    the double in the test's own process (a fifth of the run's CPU), and its fold racing these writes and kills is
    checked on the other two tiers."""

    name = "bolt"

    def __init__(self, folder: Path) -> None:
        from tests.bolt_double import BoltDouble, DoubleThread

        super().__init__(folder)
        self.runner = DoubleThread(BoltDouble(self.settings.falkordb_url))
        url = self.runner.start()
        self.settings = Settings(
            backend=BackendKind.MEMGRAPH,
            memgraph_url=url,
            memgraph_database="chains",
            graph_name="chains",
            stats_fold_seconds=0,
        )

    def close(self) -> None:
        self.runner.stop()
        super().close()


# --- what happened ------------------------------------------------------------------------------------------------


@dataclass
class Write:
    writer: int
    subject: str
    value: str
    invoked: float = 0.0
    answered: float = math.inf
    outcome: str = "unknown"  # ok, refused, unknown
    codes: Counter[str] = field(default_factory=Counter)  # the answers on the way there


@dataclass
class Seen:
    """A change as the feed answered it."""

    change_id: str
    subject: str
    before: Any
    after: Any
    at: str
    received: float


@dataclass
class Round:
    number: int
    subjects: list[str]
    kills: int
    writes: list[Write] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    chains: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # subject -> value records, oldest first
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # subject -> value and revision
    killed: int = 0

    def tally(self) -> Counter[str]:
        return Counter(w.outcome for w in self.writes)

    def answers(self) -> Counter[str]:
        """The refusals the writers met on their way to a final answer (each sent again with its key)."""
        return sum((w.codes for w in self.writes), Counter())

    def same_millisecond(self) -> int:
        """Changes stamped in the same millisecond as the subject's change before them (ordered by `seq`'s `#`)."""
        return sum(a["at"] == b["at"] for chain in self.chains.values() for a, b in zip(chain, chain[1:], strict=False))


# --- the run --------------------------------------------------------------------------------------------------------


def gate_parameters(tier: Tier, agent: str) -> StdioServerParameters:
    command, *args = write_gate_argv("serve", "--toolsets", "all")
    env = settings_env(tier.settings) | {"WRITE_GATE_AGENT": agent, "WRITE_GATE_CHANGE_SETTLE_SECONDS": str(SETTLE)}
    return StdioServerParameters(command=command, args=args, env=env)


async def answer(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    result = await client.call_tool(tool, arguments)
    return bool(result.is_error), result.structured_content or {}


async def write_once(client: Client, write: Write, key: str) -> None:
    """Send the write until its answer is final: with the same key each time, so it applies once at most."""
    arguments = {
        "label": "Person",
        "merge_keys": {"name": write.subject},
        "properties": {"value": write.value},
        "source": "chains",
        "extraction_method": "api",
        "idempotency_key": key,
    }
    write.invoked = time.time()
    deadline = time.monotonic() + GIVE_UP_SECONDS
    while time.monotonic() < deadline:
        try:
            is_error, content = await answer(client, "write_node", arguments)
        except Exception:  # noqa: BLE001 - no answer: the write may have landed
            write.codes["no answer"] += 1
            return
        if not is_error:
            write.answered, write.outcome = time.time(), "ok"
            return
        code = content.get("error_code", "?")
        write.codes[code] += 1
        if code in ("IDEMPOTENCY_OUTCOME_UNKNOWN", "INTERNAL_ERROR"):
            return  # the gate does not know whether it landed (and says so), or failed inside: unknown
        if code not in ("BACKEND_UNAVAILABLE", "IDEMPOTENCY_IN_PROGRESS"):
            write.outcome = "refused"  # a final answer that wrote nothing (a CONFLICT after contention, say)
            return
        await anyio.sleep(random.uniform(*RETRY_PAUSE))  # noqa: S311


class Poller:
    """Follows `changes_since` from where it started, as an agent catching every change would."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.cursor: str | None = None
        self.seen: list[Seen] = []

    async def poll(self) -> int:
        got = 0
        more = True
        while more:
            arguments = {"limit": 200, "labels": ["Person"]} | ({"cursor": self.cursor} if self.cursor else {})
            is_error, content = await answer(self.client, "changes_since", arguments)
            received = time.time()
            if is_error:
                return got  # the engine away: the next poll goes on from the same cursor
            for change in content["changes"]:
                subject = change["subject"]["merge_keys"]["name"]
                for record in change["properties"]:
                    if record["property"] == "value":
                        self.seen.append(
                            Seen(
                                change["change_id"], subject, record["before"], record["after"], change["at"], received
                            )
                        )
            got += len(content["changes"])
            self.cursor, more = content["next_cursor"], content["more"]
        return got

    async def follow(self, writing_done: anyio.Event) -> None:
        """Poll until the writers are done and the feed's horizon has passed their last change: a poll that
        began a window (and a margin) after the last write was answered, and answered nothing new."""
        done_at: float | None = None
        while True:
            began = time.monotonic()
            got = await self.poll()
            if done_at is None and writing_done.is_set():
                done_at = time.monotonic()
            if done_at is not None and began > done_at + SETTLE + 0.5 and not got:
                return
            await anyio.sleep(0.05)


async def history_of(client: Client, subject: str) -> list[dict[str, Any]]:
    """The subject's value records, oldest first (get_history answers newest first, by pages)."""
    changes: list[dict[str, Any]] = []
    cursor = None
    while True:
        arguments = {"label": "Person", "merge_keys": {"name": subject}, "property": "value", "limit": 500}
        is_error, content = await answer(client, "get_history", arguments | ({"cursor": cursor} if cursor else {}))
        assert not is_error, content
        changes += content["changes"]
        if not (cursor := content.get("next_cursor")):
            return changes[::-1]


async def run_round(
    tier: Tier,
    clients: list[Client],
    poller: Poller,
    number: int,
    *,
    writers: int,
    calls: int,
    subjects: int,
    kills: int,
) -> Round:
    rng = random.Random(number)
    this = Round(number, [f"r{number}-s{i}" for i in range(subjects)], kills)
    start = len(poller.seen)
    writing_done, progress = anyio.Event(), Counter[str]()
    plan = [Write(i % writers, rng.choice(this.subjects), f"r{number}-v{i}") for i in range(calls)]
    this.writes = plan

    async def writer(number_: int) -> None:
        mine = [w for w in plan if w.writer == number_]
        for n, write in enumerate(mine):
            await write_once(clients[number_ % len(clients)], write, f"{write.value}-{n}")
            progress["done"] += 1

    async def killer() -> None:
        """Kills spread over the run: at fixed shares of the calls done, so each lands mid-run."""
        for share in [(k + 1) / (kills + 1) for k in range(kills)]:
            while progress["done"] < share * calls and not writing_done.is_set():
                await anyio.sleep(0.01)
            if writing_done.is_set():
                return
            await anyio.to_thread.run_sync(tier.kill)
            this.killed += 1

    async def writing() -> None:
        async with anyio.create_task_group() as group:
            for w in range(writers):
                group.start_soon(writer, w)
        writing_done.set()

    with anyio.fail_after(calls * 2 + 120):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(poller.follow, writing_done)
            tasks.start_soon(killer)
            tasks.start_soon(writing)
    this.seen = [s for s in poller.seen[start:] if s.subject in this.subjects]
    for subject in this.subjects:
        this.chains[subject] = await history_of(clients[0], subject)
    this.nodes = await stored_nodes(tier, this.subjects)
    return this


async def stored_nodes(tier: Tier, subjects: list[str]) -> dict[str, dict[str, Any]]:
    backend = await open_backend(tier.settings)
    try:
        rows = await backend.read(
            Statement(
                "MATCH (n:Person) WHERE n.name IN $names RETURN n.name AS name, n.value AS value, n._rev AS revision",
                {"names": subjects},
            )
        )
    finally:
        await backend.close()
    return {row["name"]: row for row in rows}


async def with_gates(tier: Tier, gates: int, body: Callable[[list[Client], Poller], Awaitable[None]]) -> None:
    """`gates` gate processes on the tier's graph (migrated first), started at once, each with a client; the
    poller on the first."""
    backend = await open_backend(tier.settings)
    try:
        await migrate(backend)
    finally:
        await backend.close()
    clients: list[Client | None] = [None] * gates
    started, stop = [anyio.Event() for _ in range(gates)], anyio.Event()

    async def hold(g: int) -> None:  # each client is entered and left by its own task, as anyio requires
        async with Client(gate_parameters(tier, f"agent{g}"), read_timeout_seconds=120) as client:
            clients[g] = client
            started[g].set()
            await stop.wait()

    async with anyio.create_task_group() as tasks:
        for g in range(gates):
            tasks.start_soon(hold, g)
        for event in started:
            await event.wait()
        try:
            ready = [client for client in clients if client is not None]
            await body(ready, Poller(ready[0]))
        finally:
            stop.set()


# --- the checks ------------------------------------------------------------------------------------------------------


def _time(at: str) -> float:
    return datetime.fromisoformat(at).timestamp()


def anomalies(this: Round) -> list[str]:
    """Everything the round's history says went wrong, one line each; none when it is serial and whole."""
    found = []
    written: dict[str, list[Write]] = defaultdict(list)
    for w in this.writes:
        written[w.subject].append(w)
    for subject in this.subjects:
        chain = this.chains.get(subject, [])
        where = f"round {this.number} {subject}"
        revisions = [c["revision"] for c in chain]
        if revisions != list(range(1, len(chain) + 1)):
            found.append(f"{where}: revisions {revisions} are not 1..{len(chain)}")
        for previous, record in zip([None, *chain], chain, strict=False):
            before = previous["after"] if previous else None
            if record["before"] != before:
                found.append(f"{where}: revision {record['revision']} has before {record['before']!r}, not {before!r}")
        node = this.nodes.get(subject)
        if chain and (node is None or node["value"] != chain[-1]["after"] or node["revision"] != len(chain)):
            found.append(f"{where}: the node holds {node}, the history ends at {chain[-1]['after']!r} rev {len(chain)}")
        recorded = Counter(c["after"] for c in chain)
        sent = {w.value: w for w in written[subject]}
        found += [f"{where}: {v!r} recorded {n} times" for v, n in recorded.items() if n > 1]
        found += [f"{where}: {v!r} recorded, never sent" for v in recorded if v not in sent]
        for w in written[subject]:
            if w.outcome == "ok" and recorded[w.value] != 1:
                found.append(f"{where}: acknowledged {w.value!r} recorded {recorded[w.value]} times")
            if w.outcome == "refused" and recorded[w.value]:
                found.append(f"{where}: refused {w.value!r} ({dict(w.codes)}) is recorded")
        place = {c["after"]: i for i, c in enumerate(chain)}
        acked = sorted((w for w in written[subject] if w.outcome == "ok"), key=lambda w: w.invoked)
        for a in acked:
            for b in acked:
                if a.answered < b.invoked and place.get(a.value, -1) > place.get(b.value, -1):
                    found.append(f"{where}: {a.value!r} was acknowledged before {b.value!r} was sent, yet after it")
        fed = [s for s in this.seen if s.subject == subject]
        fed_ids, chain_ids = [s.change_id for s in fed], [c["change_id"] for c in chain]
        if fed_ids != chain_ids:
            missing = [i for i in chain_ids if i not in fed_ids]
            repeated = [i for i, n in Counter(fed_ids).items() if n > 1]
            found.append(
                f"{where}: the feed answered {len(fed_ids)} changes for {len(chain_ids)} recorded "
                f"(skipped {missing}, repeated {repeated}, or out of order)"
            )
        for s in fed:
            if s.received - _time(s.at) < SETTLE:
                found.append(
                    f"{where}: the feed answered {s.change_id} {s.received - _time(s.at):.3f} s after its stamp"
                )
    return found
