"""PROV-O export through a real MCP client on every engine tier, and through the CLI: two agents write, and the
export, in each serialisation, parses with rdflib (JSON-LD also with pyld, a second, independent parser) into the
same graph, which SPARQL then asks who wrote what, when, and by which write, value by value."""

import json
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from pyld import jsonld
from rdflib import Graph, Literal, URIRef
from rdflib import namespace as ns  # as a module: pytest's scan of the globals trips on a namespace
from rdflib.compare import isomorphic

from tests.conftest import TESTS, ok, open_client, rejected, run_write_gate, settings_env
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = [pytest.mark.anyio, pytest.mark.every_tier]

WG = "urn:write-gate:vocab#"
ADA_BOT = "ada-bot"
BOB_BOT = 'bob <b"ot> \u00e9'  # an agent id no IRI could hold unquoted
ODD = 'Q"uote\n<x> & \\ \u2603 {"name": 1}'  # a name and merge key that must not break the RDF
RDF_FORMATS = {"prov-turtle": "turtle", "prov-jsonld": "json-ld", "prov-ntriples": "nt"}
PREFIX = f"PREFIX rdfs: <{ns.RDFS}>\nPREFIX prov: <{ns.PROV}>\nPREFIX wg: <{WG}>\n"


def node(label: str, name: str, source: str, method: str, reliability: float = 0.9, **properties: Any) -> dict:
    return {
        "label": label,
        "merge_keys": {"name": name},
        "properties": properties,
        "source": source,
        "extraction_method": method,
        "reliability": reliability,
    }


async def write_as(settings: Settings, agent: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    async with open_client(settings.model_copy(update={"agent": agent}), "in_process") as client:
        for tool, args in calls:
            await ok(client, tool, args)


@pytest.fixture
async def written(settings: Settings, graph: GraphBackend) -> AsyncIterator[Settings]:
    """ada-bot writes Ada (age) and a low-confidence rumour; bob writes Ada again (born, from another source), a
    Project with an odd name, and Ada WORKS_ON it; a third Person is archived."""
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "exports"]))
    await write_as(
        settings,
        ADA_BOT,
        [
            ("write_node", node("Person", "Ada", "notes", "manual", age=36)),
            ("write_node", node("Entity", "Rumour", "gossip", "llm", reliability=0.1)),
            ("write_node", node("Person", "Gone", "notes", "manual")),
        ],
    )
    works = {"type": "WORKS_ON", "from_label": "Person", "to_label": "Project", "source": "web"}
    ends = {"from_keys": {"name": "Ada"}, "to_keys": {"name": ODD}, "extraction_method": "api"}
    await write_as(
        settings,
        BOB_BOT,
        [
            ("write_node", node("Person", "Ada", "web", "api", born=1815)),
            ("write_node", node("Project", ODD, "web", "api")),
            ("write_relationship", {**works, **ends}),
        ],
    )
    archive = "MATCH (n:Person {name: 'Gone'}) SET n._archived_at = '2026-01-01T00:00:00.000Z'"
    await graph.write(Statement(archive))
    yield settings


@pytest.fixture
async def client(written: Settings) -> AsyncIterator[Client]:
    async with open_client(written.model_copy(update={"agent": "auditor"}), "in_process") as client:
        yield client


async def export(client: Client, format_: str, **args: Any) -> Graph:
    answer = await ok(client, "export_graph", {"format": format_, **args})
    return Graph().parse(data=answer["content"], format=RDF_FORMATS[format_])


def agent(name: str) -> URIRef:
    """The agent's IRI, its id percent-encoded (UTF-8) but for RFC 3986's unreserved characters."""
    unreserved = (c if (c.isascii() and c.isalnum()) or c in "-._~" else _pct(c) for c in name)
    return URIRef("urn:write-gate:agent:" + "".join(unreserved))


def _pct(char: str) -> str:
    return "".join(f"%{b:02X}" for b in char.encode())


def rows(graph: Graph, query: str) -> list[tuple]:
    return [tuple(row) for row in graph.query(PREFIX + query)]


async def test_every_serialisation_parses_to_the_same_graph(client: Client) -> None:
    graphs = {format_: await export(client, format_) for format_ in RDF_FORMATS}
    turtle = graphs["prov-turtle"]
    assert len(turtle) > 40
    assert isomorphic(turtle, graphs["prov-jsonld"]) and isomorphic(turtle, graphs["prov-ntriples"])
    # A second, independent parser: pyld reads the JSON-LD into N-Quads, which rdflib reads back.
    document = json.loads((await ok(client, "export_graph", {"format": "prov-jsonld"}))["content"])
    quads = jsonld.to_rdf(document, {"format": "application/n-quads"})
    assert isomorphic(turtle, Graph().parse(data=quads, format="nt"))


async def test_sparql_answers_who_wrote_what_when_and_how(client: Client) -> None:
    turtle = (await ok(client, "export_graph", {"format": "prov-turtle"}))["content"]
    prov = Graph().parse(data=turtle, format="turtle")
    document = json.loads((await ok(client, "export_graph", {"format": "json"}))["content"])
    stored = {e["name"]: e["provenance"] for e in document["entities"]}

    # Who: each entity's current claim; Ada was last claimed by bob.
    who = rows(prov, "SELECT ?name ?agent WHERE { ?e wg:label ?l ; rdfs:label ?name ; prov:wasAttributedTo ?agent }")
    assert sorted(who) == sorted(
        [(Literal("Ada"), agent(BOB_BOT)), (Literal(ODD), agent(BOB_BOT)), (Literal("Rumour"), agent(ADA_BOT))]
    )
    # When: generatedAtTime typed xsd:dateTime, the stored time (its text as stored, in the serialisation).
    [(at,)] = rows(prov, 'SELECT ?at WHERE { ?e rdfs:label "Ada" ; prov:generatedAtTime ?at }')
    assert at.datatype == ns.XSD.dateTime and at.toPython() == datetime.fromisoformat(stored["Ada"]["last_updated"])
    assert f'"{stored["Ada"]["last_updated"]}"^^xsd:dateTime' in turtle
    # How: the write that left Ada so, made by bob from the web source by api, with the gate's confidence.
    how = "SELECT ?by ?src ?method ?conf ?start WHERE { ?e rdfs:label 'Ada' ; prov:wasGeneratedBy ?a .\n"
    how += "?a a prov:Activity ; prov:wasAssociatedWith ?by ; prov:used ?s ; wg:extractionMethod ?method ;\n"
    how += "wg:confidence ?conf ; prov:startedAtTime ?start . ?s rdfs:label ?src }"
    [(by, src, method, conf, start)] = rows(prov, how)
    assert (by, str(src), str(method), start) == (agent(BOB_BOT), "web", "api", at)
    assert conf.toPython() == stored["Ada"]["confidence"] and conf.datatype == ns.XSD.double
    # Value by value: ada-bot said Ada's age (from notes), bob her birth year (from the web).
    values = "SELECT ?p ?who ?src WHERE { ?e rdfs:label 'Ada' ; prov:wasDerivedFrom ?v .\n"
    values += "?v wg:property ?p ; prov:wasAttributedTo ?who ; prov:hadPrimarySource ?s .\n"
    values += "?v prov:wasGeneratedBy ?w . ?w prov:wasAssociatedWith ?who . ?s rdfs:label ?src }"
    said = {str(p): (who, str(src)) for p, who, src in rows(prov, values)}
    assert said["age"] == (agent(ADA_BOT), "notes") and said["born"] == (agent(BOB_BOT), "web")
    # Every agent is a prov:SoftwareAgent named by its id, quotes and all.
    agents = rows(prov, "SELECT ?a ?id WHERE { ?a a prov:Agent, prov:SoftwareAgent ; rdfs:label ?id }")
    assert {(a, str(i)) for a, i in agents} == {(agent(ADA_BOT), ADA_BOT), (agent(BOB_BOT), BOB_BOT)}


async def test_every_write_has_exactly_one_attribution_time_and_activity(client: Client) -> None:
    prov = await export(client, "prov-ntriples")
    generated = set(prov.subjects(ns.PROV.wasGeneratedBy, None))
    assert len(generated) > 5  # three nodes, one relationship, and their values
    for entity in generated:
        assert len(list(prov.objects(entity, ns.PROV.wasAttributedTo))) == 1, entity
        assert len(list(prov.objects(entity, ns.PROV.wasGeneratedBy))) == 1, entity
        [at] = prov.objects(entity, ns.PROV.generatedAtTime)
        assert at.datatype == ns.XSD.dateTime, entity
    for activity in prov.subjects(None, ns.PROV.Activity):
        [start], [end] = prov.objects(activity, ns.PROV.startedAtTime), prov.objects(activity, ns.PROV.endedAtTime)
        assert start == end and len(list(prov.objects(activity, ns.PROV.wasAssociatedWith))) == 1, activity


async def test_odd_names_and_keys_survive_every_serialisation(client: Client) -> None:
    for format_ in RDF_FORMATS:
        prov = await export(client, format_)
        [(project,)] = rows(prov, 'SELECT ?e WHERE { ?e wg:label "Project" }')
        assert prov.value(project, ns.RDFS.label) == Literal(ODD)
        assert json.loads(str(prov.value(project, URIRef(WG + "key")))) == {"name": ODD}
        assert str(project).isascii() and not set(str(project)) & set('<>"{}\\ \n')
        [(relation, ada)] = rows(prov, 'SELECT ?r ?from WHERE { ?r wg:type "WORKS_ON" ; wg:from ?from ; wg:to ?to }')
        assert prov.value(relation, URIRef(WG + "to")) == project and prov.value(ada, ns.RDFS.label) == Literal("Ada")
        assert prov.value(relation, ns.PROV.wasAttributedTo) == agent(BOB_BOT)


async def test_filters_and_archived_as_in_every_export(client: Client) -> None:
    def names(prov: Graph) -> set[str]:
        return {str(n) for (n,) in rows(prov, "SELECT ?n WHERE { ?e wg:label ?l ; rdfs:label ?n }")}

    assert names(await export(client, "prov-turtle")) == {"Ada", ODD, "Rumour"}  # Gone is archived
    assert names(await export(client, "prov-turtle", includeArchived=True)) == {"Ada", ODD, "Rumour", "Gone"}
    assert names(await export(client, "prov-turtle", filter={"minConfidence": 0.5})) == {"Ada", ODD}
    people = await export(client, "prov-turtle", filter={"labels": ["Person"]})
    assert names(people) == {"Ada"} and not rows(people, "SELECT ?r WHERE { ?r wg:type ?t }")  # one end only
    unknown = await rejected(client, "export_graph", {"format": "prov-turtle", "filter": {"labels": ["Schema"]}})
    assert unknown["error_code"] == "SCHEMA_UNKNOWN_LABEL"
    assert (await rejected(client, "export_graph", {"format": "prov-xml"}))["error_code"] == "INVALID_INPUT"


@pytest.mark.one_tier
async def test_the_cli_exports_prov_with_the_same_filters(written: Settings, tmp_path: Path) -> None:
    out = tmp_path / "people.ttl"
    args = ("export", "--format", "prov-turtle", "--labels", "Person", "-o", str(out))
    done = run_write_gate(*args, env=settings_env(written))  # in process
    assert done.returncode == 0, done.stderr
    assert "exported 1 entities and 0 relations" in done.stderr
    prov = Graph().parse(out, format="turtle")
    assert rows(prov, 'SELECT ?who WHERE { ?e rdfs:label "Ada" ; prov:wasAttributedTo ?who }') == [(agent(BOB_BOT),)]
