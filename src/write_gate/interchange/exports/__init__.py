"""The graph out: one exporter per format, each a function of the export read (`ExportedGraph`) to text chunks.

`EXPORTERS` is the one table the tool and the CLI offer; a format added here is offered by both."""

from collections.abc import Callable, Iterator

from write_gate.core.export_records import ExportedGraph
from write_gate.interchange.exports.csv_format import csv_sections
from write_gate.interchange.exports.diagrams import dot, markdown, mermaid
from write_gate.interchange.exports.json_formats import json_document, jsonl
from write_gate.interchange.exports.network_formats import gexf, graphml

Exporter = Callable[[ExportedGraph], Iterator[str]]


def _prov(format_: str) -> Exporter:
    def exporter(graph: ExportedGraph) -> Iterator[str]:
        from write_gate.interchange.exports.prov import SERIALISERS  # rdflib: loaded when asked, as networkx is

        yield from SERIALISERS[format_](graph)

    return exporter


EXPORTERS: dict[str, Exporter] = {
    "json": json_document,
    "jsonl": jsonl,
    "csv": csv_sections,
    "graphml": graphml,
    "gexf": gexf,
    "markdown": markdown,
    "dot": dot,
    "mermaid": mermaid,
    "prov-turtle": _prov("prov-turtle"),
    "prov-jsonld": _prov("prov-jsonld"),
    "prov-ntriples": _prov("prov-ntriples"),
}


def render(format_: str, graph: ExportedGraph) -> str:
    return "".join(EXPORTERS[format_](graph))
