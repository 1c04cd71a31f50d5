"""The registry's version node is one node: migration 0005 folds duplicates (which two concurrent first loads could
make on Memgraph, whose MERGE is not serialised) into the newest and backs it with a unique constraint on Memgraph,
an index on FalkorDB; until then the version read takes the highest, so a load made anywhere is still noticed."""

import pytest

from tests.conftest import is_bolt_tier
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import BackendKind, Settings
from write_gate.store.graph_registry import GraphRegistrySource
from write_gate.store.migrations import migrate

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

VERSIONS = Statement("MATCH (v:WriteGateRegistry) RETURN v.name AS name, v.version AS version ORDER BY version")


async def test_duplicate_version_nodes_are_read_as_the_highest_then_folded_and_constrained(
    graph: GraphBackend, settings: Settings
) -> None:
    # What two concurrent first loads could leave on Memgraph before the constraint existed.
    await graph.write(Statement("CREATE (:WriteGateRegistry {name: 'registry', version: 3})"))
    await graph.write(Statement("CREATE (:WriteGateRegistry {name: 'registry', version: 5})"))
    assert await GraphRegistrySource(graph).version() == 5

    applied = await migrate(graph)

    assert "0005_registry_version_unique" in applied
    # 0002 and 0004 each loaded schemas, moving every duplicate on by one: 7 and 5; 0005 kept the newest, which
    # 0008 (the memory schema's CHILD_OF) and 0018 (its inverse types no longer absorbed) moved on to 9.
    assert await graph.read(VERSIONS) == [{"name": "registry", "version": 9}]
    assert (await GraphRegistrySource(graph).load()).version == 9
    if settings.backend is BackendKind.MEMGRAPH:
        constraints = await graph.read(Statement("SHOW CONSTRAINT INFO"))
        found = {(row["label"], tuple(row["properties"])) for row in constraints}
        assert ("WriteGateRegistry", ("name",)) in found
        if not is_bolt_tier(settings):  # only real Memgraph enforces it
            with pytest.raises(Exception, match="unique constraint"):
                await graph.write(Statement("CREATE (:WriteGateRegistry {name: 'registry'})"))
    else:
        indexes = await graph.read(Statement("CALL db.indexes() YIELD label, properties RETURN label, properties"))
        assert {"label": "WriteGateRegistry", "properties": ["name"]} in indexes


async def test_a_graph_no_load_has_touched_has_no_version(graph: GraphBackend) -> None:
    assert await GraphRegistrySource(graph).version() is None
    await migrate(graph)
    # The core and memory registries, then the memory registry's CHILD_OF (0008) and its inverse types (0018): one
    # load each.
    assert await GraphRegistrySource(graph).version() == 4
    assert len(await graph.read(VERSIONS)) == 1
