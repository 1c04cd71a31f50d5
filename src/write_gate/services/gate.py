"""The gate: decide (pure, in `decisions`), then run the one statement on the engine."""

import logging
from collections.abc import Mapping
from typing import Any

from write_gate.access.agents import Agent
from write_gate.core.clock import utc_now
from write_gate.core.cypher.reads import label_count, relationship_count
from write_gate.core.cypher.statement import Endpoint, Statement
from write_gate.core.cypher.writes import endpoint_presence
from write_gate.core.decisions import Policy, Stamp, plan_node_write, plan_relationship_write
from write_gate.core.formula import FormulaProvider
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
from write_gate.core.registry import RegistrySnapshot, RegistrySource, SchemaRegistry
from write_gate.core.schema_view import SchemaView, label_view, relationship_view
from write_gate.engines import BackendError, BackendUnavailable, GraphBackend
from write_gate.engines.errors import engine_failure
from write_gate.services.aliases import addressed_to, survivor_of
from write_gate.services.reads import Reader

logger = logging.getLogger(__name__)

# A write addressed to an alias is redirected to its survivor; merges racing it may move it again, a few times.
MAX_REDIRECTS = 4


def _moving_target() -> GateRejection:
    return GateRejection(
        ErrorCode.INVALID_INPUT,
        "the node kept being merged while this write ran; try again",
        reason="merged_during_write",
    )


async def run_write(backend: GraphBackend, statement: Statement) -> list[dict]:
    try:
        return await backend.write(statement)
    except (BackendUnavailable, BackendError) as exc:
        raise engine_failure(exc, "write") from exc


class Gate:
    def __init__(
        self, backend: GraphBackend, source: RegistrySource, provider: FormulaProvider, policy: Policy, version: str
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
        self.reader = Reader(backend, lambda: self.registry)

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

    async def write_node(self, request: WriteNodeRequest, agent: Agent) -> NodeWritten:
        for _ in range(MAX_REDIRECTS):
            plan = plan_node_write(request, self.registry, self.policy, self.provider, self.stamp(agent))
            agent.grant.check_labels([plan.result.label])
            rows = await run_write(self.backend, plan.statement)
            if not rows or rows[0]["written"]:
                return plan.result
            # The key is an alias (the statement refused it): write to its survivor.
            request = await self._redirected(request, plan.result.label, plan.result.merge_keys, "label", "merge_keys")
        raise _moving_target()

    async def write_relationship(self, request: WriteRelationshipRequest, agent: Agent) -> RelationshipWritten:
        for _ in range(MAX_REDIRECTS):
            plan = plan_relationship_write(request, self.registry, self.policy, self.provider, self.stamp(agent))
            agent.grant.check_types([plan.result.type])
            if plan.merge_endpoints:  # it may create its endpoints
                agent.grant.check_labels([plan.start.label, plan.end.label])
            rows = await run_write(self.backend, plan.statement)
            if rows:
                break
            redirected = request
            for side, endpoint in (("from", plan.start), ("to", plan.end)):
                redirected = await self._redirected(
                    redirected, endpoint.label, endpoint.keys, f"{side}_label", f"{side}_keys"
                )
            if redirected is request:
                await self._explain_missing_endpoint(plan.start, plan.end)
            request = redirected
        else:
            raise _moving_target()
        stubs = [side for side, key in (("from", "from_stub"), ("to", "to_stub")) if rows[0].get(key)]
        return plan.result.model_copy(update={"stub_endpoints": stubs, "weight": rows[0]["weight"]})

    async def _redirected(
        self, request: Any, label: str, keys: Mapping[str, Any], label_field: str, keys_field: str
    ) -> Any:
        """The request addressed to the survivor, when `label` and `keys` name an alias; else as it is."""
        survivor = await survivor_of(self.reader.read, self.registry, label, identity_key(keys))
        return request if survivor is None else addressed_to(request, survivor, label_field, keys_field)

    async def _explain_missing_endpoint(self, start: Endpoint, end: Endpoint) -> None:
        try:
            found = (await self.backend.read(endpoint_presence(start, end)))[0]
        except (BackendUnavailable, BackendError):
            found = {"from_found": None, "to_found": None}
        missing = [side for side in ("from", "to") if not found.get(f"{side}_found")]
        raise GateRejection(
            ErrorCode.ENDPOINT_NOT_FOUND,
            "endpoint not found: write the node first, or pass endpoint_policy='merge_endpoints'",
            missing=missing or ["from", "to"],
            **{f"{side}_label": ep.label for side, ep in (("from", start), ("to", end))},
        )

    async def get_schema(self) -> SchemaView:
        registry = self.registry  # one snapshot for the whole answer

        async def count(statement: Statement) -> int:
            rows = await self.reader.read(statement)
            return rows[0]["count"] if rows else 0

        labels = [registry.get_entry(name) for name in registry.all_canonical_labels()]
        types = [registry.get_relationship(name) for name in registry.all_relationship_types()]
        default = self.policy.undeclared_properties
        return SchemaView(
            node_labels=[label_view(e, await count(label_count(e.label)), default) for e in labels if e],
            relationship_types=[
                relationship_view(e, await count(relationship_count(e.label)), default) for e in types if e
            ],
            fallback_label=self.policy.fallback_override or registry.fallback_label(),
            unknown_label_policy=self.policy.unknown_labels.value,
            undeclared_property_policy=default.value,
            extraction_methods=sorted(self.provider.allowed_extraction_methods()),
            write_gate_version=self.version,
        )
