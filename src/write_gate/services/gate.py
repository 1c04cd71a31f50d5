"""The gate: decide (pure, in `decisions`), then run the one statement on the engine."""

import functools
import logging
import os
import random
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from write_gate.access.agents import Agent
from write_gate.core.clock import utc_now
from write_gate.core.cypher.aliases import alias_target
from write_gate.core.cypher.deciding_writes import (
    node_statement,
    planned_node_values,
    relationship_statement,
    relationship_values,
)
from write_gate.core.cypher.records import current_relationship
from write_gate.core.cypher.statement import Endpoint, Provenance, Statement
from write_gate.core.cypher.writes import write_node, write_relationship
from write_gate.core.decay import parse_at, weigher
from write_gate.core.decisions import Policy, Stamp, plan_node_write, plan_relationship_write, unregistered
from write_gate.core.formula import FormulaProvider
from write_gate.core.guard import Guarded, fresh_write, guard_write, next_weight
from write_gate.core.history import Subject
from write_gate.core.identity import identity_key
from write_gate.core.model import (
    ErrorCode,
    GateRejection,
    NodeWritten,
    RelationshipWritten,
    SchemaRefreshed,
    WriteNodeRequest,
    WriteRelationshipRequest,
)
from write_gate.core.registry import RegistrySnapshot, RegistrySource, SchemaEntry, SchemaRegistry
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend
from write_gate.engines.errors import engine_failure
from write_gate.services.aliases import addressed_to, survivor_of
from write_gate.services.call_stamps import CallStamp
from write_gate.services.embeddings import Embeddings
from write_gate.services.embeddings import Subject as Embedded
from write_gate.services.grant_checks import check_relationship_write
from write_gate.services.hierarchy_rule import hierarchy_breach
from write_gate.services.reads import Reader
from write_gate.services.search import Searcher
from write_gate.services.writes_in_flight import DEFAULT_LINGER_SECONDS, WritesInFlight

logger = logging.getLogger(__name__)

# A guarded write whose subject moved since it was read (another writer, a merge) is read and decided again,
# after a short random pause that grows with each attempt, so writers racing for one node fall out of step.
MAX_ATTEMPTS = 8
# learn_names: how long a name found unregistered stays so before it is looked for again (the registry's poll
# interval by default), and how many such names are remembered.
RECHECK_SECONDS = 2.0
MAX_LOOKED_FOR = 10_000
BACKOFF_SECONDS = 0.002


async def backoff(attempt: int) -> None:
    if attempt:
        await anyio.sleep(random.uniform(0, BACKOFF_SECONDS * 2**attempt))  # noqa: S311 - jitter, not security


def contention() -> GateRejection:
    return GateRejection(
        ErrorCode.CONFLICT,
        f"the subject kept changing under concurrent writers; gave up after {MAX_ATTEMPTS} attempts, nothing "
        "was written; try again",
        reason="contention",
        attempts=MAX_ATTEMPTS,
    )


def _stubs(row: Mapping[str, Any]) -> list[str]:
    """The endpoints a relationship write created as stubs."""
    return [side for side, key in (("from", "from_stub"), ("to", "to_stub")) if row.get(key)]


def _missing_endpoint(start: Endpoint, end: Endpoint, found: Mapping[str, Any]) -> GateRejection:
    missing = [side for side in ("from", "to") if not found.get(f"{side}_found")]
    return GateRejection(
        ErrorCode.ENDPOINT_NOT_FOUND,
        "endpoint not found: write the node first, or pass endpoint_policy='merge_endpoints'",
        missing=missing or ["from", "to"],
        **{f"{side}_label": ep.label for side, ep in (("from", start), ("to", end))},
    )


_ID_BYTES = 16
_IDS_PER_READ = 256  # one read of the system's randomness per 256 ids: a batch makes one id per item
_random_pool = bytearray()


def _forget_pool() -> None:
    _random_pool.clear()  # a forked child draws its own: it must never repeat its parent's ids


os.register_at_fork(after_in_child=_forget_pool)


def new_id() -> str:
    """As `uuid.uuid4().hex` (the same randomness, the same form), without a system call and a UUID object
    per id."""
    if not _random_pool:
        _random_pool.extend(os.urandom(_ID_BYTES * _IDS_PER_READ))
    raw = _random_pool[-_ID_BYTES:]
    del _random_pool[-_ID_BYTES:]
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


@dataclass(slots=True)  # not frozen: built per item of a batch, where a frozen init costs 5x
class Planned:
    """What a guarded write decides on: the properties it would set, the identity it creates a subject with,
    and its provenance."""

    properties: Mapping[str, Any]
    identity: Mapping[str, Any]
    provenance: Provenance


async def read_to_write(backend: GraphBackend, statement: Statement) -> list[dict]:
    """A write's own read (what it decides on): a refusal is the write's, and answered as one."""
    try:
        return await backend.read(statement)
    except (BackendUnavailable, BackendError) as exc:
        raise engine_failure(exc, "write") from exc


async def run_write(backend: GraphBackend, statement: Statement) -> list[dict]:
    try:
        return await backend.write(statement)
    except (BackendUnavailable, BackendError) as exc:
        raise engine_failure(exc, "write") from exc


class Gate:
    def __init__(
        self,
        backend: GraphBackend,
        source: RegistrySource,
        provider: FormulaProvider,
        policy: Policy,
        version: str,
        embeddings: Embeddings | None = None,
        in_flight: WritesInFlight | None = None,
    ) -> None:
        self.backend = backend
        self.source = source
        self.provider = provider
        self.policy = policy
        self.version = version
        # The snapshot in force; None until the first load succeeds (then every tool says why it cannot work,
        # instead of answering "unknown label" from an empty registry).
        self.snapshot: RegistrySnapshot | None = None
        self.load_error: GateRejection | None = None
        self._looked_for: dict[str, float] = {}  # unknown names looked for on the graph, and when (learn_names)
        self.reader = Reader(backend, lambda: self.registry, policy.half_life_by_method)
        # None: embeddings are off (WRITE_GATE_EMBEDDINGS), and no write pays for them.
        self.embeddings = embeddings
        self.searcher = Searcher(backend, self.reader, embeddings)
        # The writes this gate is running: the change feed's horizon stays below the oldest.
        self.in_flight = in_flight or WritesInFlight(linger_seconds=DEFAULT_LINGER_SECONDS)

    @property
    def registry(self) -> SchemaRegistry:
        """The snapshot in force, or the reason there is none."""
        if self.snapshot is None:
            raise self.load_error or GateRejection(
                ErrorCode.SCHEMA_SOURCE_UNAVAILABLE, "the schema registry has not been loaded yet"
            )
        return self.snapshot

    async def refresh(self) -> SchemaRefreshed:
        """Load a whole new snapshot, then swap it in with one assignment; a failed load keeps the old one."""
        try:
            snapshot = await self.source.load()
        except GateRejection as exc:
            self.load_error = exc
            raise
        self.snapshot, self.load_error = snapshot, None
        nodes, rels = len(snapshot.all_canonical_labels()), len(snapshot.all_relationship_types())
        return SchemaRefreshed(
            loaded=nodes + rels, node_labels=nodes, relationship_types=rels, write_gate_version=self.version
        )

    async def learn_names(self, labels: Iterable[str] = (), types: Iterable[str] = ()) -> None:
        """Before a write naming a label or type the snapshot does not know: where the graph registers it since (an
        entry written by hand, or a `schema load` this gate's poll has not seen yet), a new snapshot first, so the
        write lands on the registered label, not the fallback, from any gate at once. A name still unknown is
        looked for again only after RECHECK_SECONDS, so a fleet writing unknown labels adds a read per interval."""
        registry = self.registry
        names = [name for raw in labels if (name := unregistered(raw, registry)) is not None]
        names += [name for raw in types if (name := unregistered(raw, registry, relationship=True)) is not None]
        now = time.monotonic()
        due = [name for name in names if now - self._looked_for.get(name, -RECHECK_SECONDS) >= RECHECK_SECONDS]
        if not due:
            return
        if len(self._looked_for) > MAX_LOOKED_FOR:
            self._looked_for.clear()
        self._looked_for.update(dict.fromkeys(due, now))
        if await self.source.registers_any(due):
            await self.refresh()

    async def refresh_if_changed(self) -> bool:
        """One cheap read of the registry's version; a new snapshot only when it moved (a `schema load` or a
        migration through any gate or the CLI). True when the snapshot was replaced."""
        current = self.snapshot.version if self.snapshot is not None else None
        if self.snapshot is not None and await self.source.version() == current:
            return False
        await self.refresh()
        return True

    def stamp(self, agent: Agent) -> Stamp:
        return Stamp(self.version, utc_now(), agent.id)

    def call_stamp(self, agent: Agent) -> CallStamp:
        """The stamp of a call that sends statement after statement, taken again as it ages."""
        return CallStamp(lambda: self.stamp(agent), self.in_flight.settle_seconds)

    def guard(
        self,
        subject: Subject,
        entry: SchemaEntry | None,
        current: Mapping[str, Any] | None,
        plan: Planned,
        *,
        weight: float | None | Literal[False] = False,
    ) -> Guarded:
        """The write decided under the conflict policies (the entry's, else the gate's) on what `subject` held
        when read, with its records (core/guard.py). `weight`: a relationship's, as given (None: not given), its
        change recorded with the values'."""
        claim = plan.provenance.value_claim()
        computed = None
        if weight is not False:
            computed = {"weight": next_weight((current or {}).get("weight"), weight, current is None)}
        if current is None:  # nothing to weigh: the fast path of every new node a batch creates
            return fresh_write(subject, plan.properties, plan.identity, claim, new_id(), computed)
        default = self.policy.conflicts
        return guard_write(
            subject,
            current,
            plan.properties,
            plan.identity,
            claim,
            (lambda prop: entry.conflict_policy_of(prop, default)) if entry else (lambda _prop: default),
            weigher(entry.half_life_days if entry else None, self.policy.half_life_by_method, parse_at(claim.at)),
            change_id=new_id(),
            new_id=new_id,
            computed=computed,
        )

    async def current_node(self, label: str, key: str) -> dict[str, Any] | None:
        """What a write decides on: the node's stored properties (claims, revision, alias mark), None if absent."""
        rows = await read_to_write(self.backend, Statement(alias_target(label).text, {"key": key}))
        return rows[0]["props"] if rows else None

    async def write_node(
        self,
        request: WriteNodeRequest,
        agent: Agent,
        *,
        free_text: bool = False,
        also_declared: frozenset[str] = frozenset(),
    ) -> NodeWritten:
        """One statement that decides and writes (core/cypher/deciding_writes.py). Where it meets another writer's
        value it writes nothing and answers what the node holds: decided here under the conflict policies and
        written guarded by that revision; a node that moved in between (another writer, or a merge that made it
        an alias) is decided again. An alias is followed to its survivor. `free_text` and `also_declared` as
        plan_node_write takes them (an import of memory files)."""
        if not free_text:
            await self.learn_names([request.label])
        for attempt in range(MAX_ATTEMPTS):
            await backoff(attempt)
            plan = plan_node_write(
                request,
                self.registry,
                self.policy,
                self.provider,
                self.stamp(agent),
                free_text_label=free_text,
                also_declared=also_declared,
            )
            result = plan.result
            agent.grant.check_labels([result.label])
            values = planned_node_values(plan, new_id(), batch=False)
            statement = node_statement(result.label, values, self.backend.dialect)
            if self.embeddings is not None:
                embedded = [Embedded(result.label, values["key"], {**result.merge_keys, **plan.properties})]
                statement = await self.embeddings.lead(statement, self.registry, embedded)
            rows = await run_write(self.backend, statement)
            if not rows:  # an alias: write to its survivor
                redirected = await self._redirected(request, result.label, result.merge_keys, "label", "merge_keys")
                if redirected.label == result.label:  # under the label as written, so its remap is still answered
                    redirected = redirected.model_copy(update={"label": request.label})
                request = redirected
                continue
            if rows[0]["written"]:
                return result
            current = rows[0]["current"]  # it met another writer's value: decided here, written guarded
            guarded = self.guard(
                Subject.node(result.label, values["key"]),
                self.registry.get_entry(result.label),
                current,
                Planned(plan.properties, result.merge_keys, plan.provenance),
            )
            statement = write_node(
                result.label,
                result.merge_keys,
                guarded.write,
                plan.provenance,
                result.remapped_from,
                result.property_remaps,
                guarded.as_guard(False),
                dialect=self.backend.dialect,
            )
            if self.embeddings is not None:
                # The first statement embedded the write's texts; the node holds what the policies let through,
                # and what they kept for the values they did not: those texts' vectors, in the guarded statement.
                kept = {k: current[k] for k in plan.properties if k in current}
                held = {**result.merge_keys, **kept, **guarded.write}
                statement = await self.embeddings.lead(
                    statement, self.registry, [Embedded(result.label, values["key"], held)]
                )
            written = await run_write(self.backend, statement)
            if written and written[0]["written"]:
                return result.model_copy(update={"conflicts": guarded.met})
        raise contention()

    async def write_relationship(
        self, request: WriteRelationshipRequest, agent: Agent, *, free_text: bool = False
    ) -> RelationshipWritten:
        """As write_node: one statement that decides and writes; where it meets another writer's value, decided here
        and written guarded. No row: an endpoint is missing or an alias, which a read tells apart."""
        if not free_text:
            await self.learn_names([request.from_label, request.to_label], [request.type])
        for attempt in range(MAX_ATTEMPTS):
            await backoff(attempt)
            plan = plan_relationship_write(
                request, self.registry, self.policy, self.provider, self.stamp(agent), free_text_type=free_text
            )
            start, end, result = plan.start, plan.end, plan.result
            check_relationship_write(agent.grant, [result.type], [start.label, end.label], plan.merge_endpoints)
            values = relationship_values(
                start,
                end,
                plan.merge_endpoints,
                plan.properties,
                plan.provenance,
                request.weight,
                result.remapped_from,
                plan.property_remaps,
                new_id(),
                batch=False,
            )
            hierarchy = result.type == self.policy.hierarchy_type
            statement = relationship_statement(result.type, start, end, plan.merge_endpoints, values, hierarchy)
            rows = await run_write(self.backend, statement)
            if not rows:
                read = current_relationship(result.type, start.label, end.label)
                [found] = await read_to_write(
                    self.backend, Statement(read.text, {"from_key": start.key, "to_key": end.key})
                )
                if found["from_alias"] is not None or found["to_alias"] is not None:
                    for side, endpoint in (("from", start), ("to", end)):
                        request = await self._redirected(
                            request, endpoint.label, endpoint.keys, f"{side}_label", f"{side}_keys"
                        )
                    continue
                if not plan.merge_endpoints and not (found["from_found"] and found["to_found"]):
                    raise _missing_endpoint(start, end, found)
                reading = functools.partial(read_to_write, self.backend)
                if hierarchy and (refusal := await hierarchy_breach(reading, result.type, start, end)):
                    raise refusal
                continue  # both there now: written between the two statements
            row = rows[0]
            if row["written"]:
                return result.model_copy(update={"stub_endpoints": _stubs(row), "weight": row["weight"]})
            current = row["current"]  # it met another writer's value: decided here, written guarded
            guarded = self.guard(
                Subject.relationship(result.type, start.label, start.key, end.label, end.key),
                self.registry.get_relationship(result.type),
                current,
                Planned(plan.properties, {}, plan.provenance),
                weight=request.weight,
            )
            statement = write_relationship(
                result.type,
                start,
                end,
                guarded.write,
                plan.provenance,
                result.remapped_from,
                plan.merge_endpoints,
                request.weight,
                plan.property_remaps,
                guarded.as_guard(False),
            )
            written = await run_write(self.backend, statement)
            if written:
                update = {
                    "stub_endpoints": _stubs(written[0]),
                    "weight": written[0]["weight"],
                    "conflicts": guarded.met,
                }
                return result.model_copy(update=update)
        raise contention()

    async def _redirected(
        self, request: Any, label: str, keys: Mapping[str, Any], label_field: str, keys_field: str
    ) -> Any:
        """The request addressed to the survivor, when `label` and `keys` name an alias; else as it is."""
        survivor = await survivor_of(self.reader.read, self.registry, label, identity_key(keys))
        return request if survivor is None else addressed_to(request, survivor, label_field, keys_field)
