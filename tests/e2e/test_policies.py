"""Conflict policies, half-lives and the gate's defaults in the registry, and decay in reads (issue 12, items 3 and
8), through real MCP client sessions on every engine tier: an entry's `conflict_policy` and `half_life_days` and a
property's `conflict_policy` load from a schema file and get_schema shows them beside the gate's settings; a read
that shows claims gives each its effective confidence, halved after one half-life."""

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TESTS, ok, open_client, run_write_gate, settings_env
from write_gate.core.clock import as_utc_text
from write_gate.core.cypher.statement import Statement
from write_gate.core.decay import parse_at
from write_gate.core.registry import ConflictPolicy
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

POLICY_SCHEMAS = TESTS / "schemas" / "policies"
# Ledger again, naming no policy and no half-life.
PLAIN_LEDGER = TESTS / "schemas" / "policies_plain"
MANUAL = {"source": "ledger-api", "extraction_method": "manual", "reliability": 1.0}
LLM = {"source": "chat", "extraction_method": "llm", "reliability": 1.0}


@pytest.fixture
async def policies(settings: Settings, graph: GraphBackend) -> Settings:
    await load_into_graph(graph, read_sources([POLICY_SCHEMAS]))
    return settings.model_copy(
        update={
            "conflict_policy": ConflictPolicy.HIGHER_CONFIDENCE_WINS,
            "decay_half_life_days": {"llm": 30.0},
            "history_retention_days": 90.0,
        }
    )


def by_name(views: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {view["name"]: view for view in views}


@pytest.mark.every_transport
async def test_get_schema_shows_each_entrys_policy_and_half_life_and_the_gates_defaults(
    policies: Settings, graph: GraphBackend, transport: str
) -> None:
    """Over stdio the settings reach `write-gate serve` as WRITE_GATE_CONFLICT_POLICY and the others."""
    async with open_client(policies, transport) as client:
        schema = await ok(client, "get_schema", {})
        assert schema["conflict_policy"] == "higher_confidence_wins"
        assert schema["decay_half_life_days"] == {"llm": 30.0}
        assert schema["history_retention_days"] == 90.0
        labels, types = by_name(schema["node_labels"]), by_name(schema["relationship_types"])
        ledger = labels["Ledger"]
        assert ledger["conflict_policy"] == "keep_both" and ledger["half_life_days"] == 30.0
        assert ledger["property_types"]["balance"] == {"type": "number", "conflict_policy": "reject"}
        rumour = labels["Rumour"]  # names no policy of its own: the gate's; no half-life: by method
        assert rumour["conflict_policy"] == "higher_confidence_wins" and rumour["half_life_days"] is None
        assert rumour["property_types"]["claim"]["conflict_policy"] == "higher_confidence_wins"
        assert types["OWES"]["conflict_policy"] == "reject" and types["OWES"]["half_life_days"] == 10.0
        assert types["NEAR"]["conflict_policy"] == "higher_confidence_wins" and types["NEAR"]["half_life_days"] is None
        resource = await client.read_resource("write-gate://schema/Ledger")
        entry = json.loads(resource.contents[0].text)
        assert entry["conflict_policy"] == "keep_both" and entry["half_life_days"] == 30.0

        # A reload that names neither clears both: the gate's defaults apply again.
        await load_into_graph(graph, read_sources([PLAIN_LEDGER]))
        await ok(client, "refresh_schema_cache", {})
        ledger = by_name((await ok(client, "get_schema", {}))["node_labels"])["Ledger"]
        assert ledger["conflict_policy"] == "higher_confidence_wins" and ledger["half_life_days"] is None
        assert "conflict_policy" not in ledger["property_types"]["balance"]


@pytest.mark.one_tier
async def test_bad_values_are_refused_at_load_naming_the_file_and_the_field(settings: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    for entry, field in (
        ({"name": "Ledger", "half_life_days": 0}, "half_life_days: Input should be greater than 0"),
        ({"name": "Ledger", "conflict_policy": "loudest_wins"}, "conflict_policy: Input should be 'last_writer_wins'"),
        (
            {"name": "Ledger", "property_types": {"balance": {"type": "number", "conflict_policy": "first"}}},
            "conflict_policy must be one of",
        ),
    ):
        bad.write_text(json.dumps(entry))
        run = run_write_gate("schema", "load", str(bad), env=settings_env(settings))  # in process
        assert run.returncode == 1
        assert str(bad) in run.stderr and field in run.stderr and "nothing was loaded" in run.stderr


# --- decay in reads ---------------------------------------------------------------------------------


async def move_claim_back(graph: GraphBackend, match: str, variable: str, prop: str, days: float) -> None:
    """Set up time: the claim on `prop` now says it was written `days` earlier than it was (no tool takes a time)."""
    [row] = await graph.read(Statement(f"{match} RETURN {variable}._p_{prop} AS claim"))
    claim = row["claim"]
    claim[4] = as_utc_text(parse_at(claim[4]) - timedelta(days=days))
    await graph.write(Statement(f"{match} SET {variable}._p_{prop} = $claim", {"claim": claim}))


def halved(effective: float, stored: float, times: int) -> bool:
    """`effective` is `stored` halved `times` times, less the little decay of the seconds the test took."""
    expected = stored * 0.5**times
    return expected - 1e-4 < effective <= expected


async def test_a_claim_reads_at_half_its_confidence_after_one_half_life(
    policies: Settings, graph: GraphBackend
) -> None:
    async with open_client(policies, "in_process") as client:
        ledger = await ok(client, "write_node", {"label": "Ledger", "merge_keys": {"name": "L1"},
                                                "properties": {"balance": 10, "note": "fresh"}, **MANUAL})  # fmt: skip
        place = await ok(client, "write_node", {"label": "Place", "merge_keys": {"name": "Quay"}, **LLM})
        owes = await ok(client, "write_relationship", {"type": "OWES", "from_label": "Ledger",
                        "from_keys": {"name": "L1"}, "to_label": "Place", "to_keys": {"name": "Quay"},
                        "properties": {"amount": 5}, **MANUAL})  # fmt: skip
        # Ledger's own half-life is 30 days; Place has none, so its llm claims take the method's 30; OWES has 10.
        await move_claim_back(graph, "MATCH (n:Ledger) WHERE n.name = 'L1'", "n", "balance", 30)
        await move_claim_back(graph, "MATCH (n:Place) WHERE n.name = 'Quay'", "n", "name", 60)
        await move_claim_back(graph, "MATCH (:Ledger)-[r:OWES]->(:Place)", "r", "amount", 10)

        answer = await ok(client, "open_nodes", {"names": ["L1", "Quay"], "provenance": {}})
        entities = {e["name"]: e for e in answer["entities"]}
        balance = entities["L1"]["provenance"]["balance"]
        assert balance["confidence"] == ledger["confidence"] == 0.75  # the stored confidence is unchanged
        assert halved(balance["effective_confidence"], 0.75, 1)  # 0.75 -> 0.375 after one half-life
        note = entities["L1"]["provenance"]["note"]  # written just now: all but its stored confidence
        assert halved(note["effective_confidence"], note["confidence"], 0)
        quay = entities["Quay"]["provenance"]["name"]
        assert quay["confidence"] == place["confidence"] and halved(quay["effective_confidence"], quay["confidence"], 2)
        [relation] = answer["relations"]
        amount = relation["provenance"]["amount"]
        assert owes["confidence"] == amount["confidence"] and halved(amount["effective_confidence"], 0.75, 1)

        # min_confidence compares the stored confidence: Quay's decayed to a quarter, and still matches.
        # The filter picks the matches; in the gate profile their neighbours come along, weighed alike.
        stored = {"names": ["Quay"], "provenance": {"min_confidence": place["confidence"]}}
        quay, neighbour = (await ok(client, "open_nodes", stored))["entities"]
        assert (quay["name"], neighbour["name"]) == ("Quay", "L1")
        assert halved(neighbour["provenance"]["balance"]["effective_confidence"], 0.75, 1)
        # The other reads weigh alike.
        searched = await ok(client, "search_nodes", {"query": "L1", "provenance": {}})
        assert halved(searched["entities"][0]["provenance"]["balance"]["effective_confidence"], 0.75, 1)
        walked = await ok(client, "read_graph", {"labels": ["Ledger"], "provenance": {}})
        assert halved(walked["entities"][0]["provenance"]["balance"]["effective_confidence"], 0.75, 1)


async def test_without_a_half_life_the_effective_confidence_is_the_stored_one(
    settings: Settings, graph: GraphBackend
) -> None:
    await load_into_graph(graph, read_sources([POLICY_SCHEMAS]))  # the gate's decay setting left empty
    async with open_client(settings, "in_process") as client:
        await ok(client, "write_node", {"label": "Place", "merge_keys": {"name": "Quay"}, **LLM})
        await move_claim_back(graph, "MATCH (n:Place) WHERE n.name = 'Quay'", "n", "name", 3650)
        [entity] = (await ok(client, "open_nodes", {"names": ["Quay"], "provenance": {}}))["entities"]
        claim = entity["provenance"]["name"]
        assert claim["effective_confidence"] == claim["confidence"]
        [plain] = (await ok(client, "open_nodes", {"names": ["Quay"]}))["entities"]
        assert "provenance" not in plain  # not asked for: the answer is the one it always was


@pytest.mark.one_tier
async def test_stdio_reads_weigh_with_the_setting(policies: Settings, graph: GraphBackend) -> None:
    """WRITE_GATE_DECAY_HALF_LIFE_DAYS reaches `write-gate serve` as JSON."""
    async with open_client(policies, "stdio") as client:
        await ok(client, "write_node", {"label": "Place", "merge_keys": {"name": "Quay"}, **LLM})
        await move_claim_back(graph, "MATCH (n:Place) WHERE n.name = 'Quay'", "n", "name", 30)
        [entity] = (await ok(client, "open_nodes", {"names": ["Quay"], "provenance": {}}))["entities"]
        claim = entity["provenance"]["name"]
        assert halved(claim["effective_confidence"], claim["confidence"], 1)
