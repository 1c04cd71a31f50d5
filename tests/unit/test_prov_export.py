"""The PROV-O mapping, pure: stored properties in, an rdflib graph out (interchange/exports/prov.py)."""

import json

from rdflib import Graph, Literal, URIRef
from rdflib import namespace as ns  # as a module: pytest's scan of the globals trips on a namespace

from write_gate.core.export_records import ExportedGraph, exported_node, exported_relation
from write_gate.interchange.exports import EXPORTERS, render
from write_gate.interchange.exports import prov as mapping  # a module, as rdflib's namespace above

AT = "2026-01-02T03:04:05.006Z"
EARLIER = "2026-01-01T00:00:00.000Z"
CLAIM = ["bot", "notes", "manual", 0.8, AT]


def stored(name: str, **extra: object) -> dict[str, object]:
    stamps = {"written_by": "bot", "updated_by": "bot", "source": "notes", "extraction_method": "manual"}
    return {
        "_key": json.dumps({"name": name}),
        "name": name,
        "_p_name": CLAIM,
        "confidence": 0.8,
        "last_updated": AT,
        "created_at": AT,
        **stamps,
        **extra,
    }


def test_a_node_is_an_entity_attributed_generated_and_derived_from_its_values() -> None:
    node = exported_node("Person", stored("Ada", age=3, _p_age=["other", "web", "llm", 0.4, EARLIER]), ["name"])
    prov = mapping.prov_graph(ExportedGraph([node], []))
    iri = mapping.node_iri(node)
    assert prov.value(iri, ns.PROV.wasAttributedTo) == mapping.agent_iri("bot")
    assert prov.value(iri, ns.PROV.generatedAtTime) == Literal(AT, datatype=ns.XSD.dateTime, normalize=False)
    activity = prov.value(iri, ns.PROV.wasGeneratedBy)
    assert (activity, ns.RDF.type, ns.PROV.Activity) in prov
    assert prov.value(activity, mapping.WG.confidence).toPython() == 0.8
    values = {str(prov.value(v, mapping.WG.property)): v for v in prov.objects(iri, ns.PROV.wasDerivedFrom)}
    assert set(values) == {"name", "age"}
    assert prov.value(values["age"], ns.PROV.wasAttributedTo) == mapping.agent_iri("other")
    # The name came with the node's last write (one activity); the age with an earlier one, by another agent.
    assert prov.value(values["name"], ns.PROV.wasGeneratedBy) == activity
    earlier = prov.value(values["age"], ns.PROV.wasGeneratedBy)
    assert earlier != activity
    assert list(prov.objects(earlier, ns.PROV.wasAssociatedWith)) == [mapping.agent_iri("other")]
    assert str(prov.value(prov.value(earlier, ns.PROV.used), ns.RDFS.label)) == "web"


def test_what_is_missing_or_damaged_is_left_out_not_invented() -> None:
    bare = exported_node("Person", {"_key": '{"name":"Old"}', "name": "Old", "_p_age": ["damaged"]}, ["name"])
    prov = mapping.prov_graph(ExportedGraph([bare], []))
    iri = mapping.node_iri(bare)
    assert (iri, ns.RDF.type, ns.PROV.Entity) in prov
    for missing in (ns.PROV.wasAttributedTo, ns.PROV.wasGeneratedBy, ns.PROV.generatedAtTime, ns.PROV.wasDerivedFrom):
        assert prov.value(iri, missing) is None


def test_iris_are_percent_quoted_and_every_serialisation_reads_back() -> None:
    odd = 'a<b>"c"\n{d} é'
    node = exported_node("Person", stored(odd), ["name"])
    relation = exported_relation(node.id, node.id, odd, odd, "KNOWS", {"written_by": odd, "last_updated": AT})
    graph = ExportedGraph([node], [relation])
    iri = str(mapping.node_iri(node))
    assert iri.startswith("urn:write-gate:node:Person:%7B%22name%22") and iri.isascii() and " " not in iri
    assert str(mapping.agent_iri(odd)) == "urn:write-gate:agent:a%3Cb%3E%22c%22%0A%7Bd%7D%20%C3%A9"
    expected = mapping.prov_graph(graph)
    for format_, parser in (("prov-turtle", "turtle"), ("prov-jsonld", "json-ld"), ("prov-ntriples", "nt")):
        assert format_ in EXPORTERS
        text = render(format_, graph)
        read = Graph().parse(data=text, format=parser)
        assert len(read) == len(expected) and read.value(URIRef(iri), ns.RDFS.label) == Literal(odd)
        if format_ == "prov-turtle":  # the bound prefixes abbreviate (and only they: no ns1, ns2, ...)
            assert "@prefix prov: <http://www.w3.org/ns/prov#> ." in text and " prov:wasAttributedTo " in text
            assert "@prefix ns" not in text
