"""`write-gate import` of an official memory server's file and `write-gate export` back, as a user runs them: the
round trip through the installed console script, the rest in process (tests/conftest.py's run_write_gate), each on
a fresh graph of the worker's engine."""

import json
import random
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import CommandRun, run_write_gate, settings_env, write_gate_argv
from write_gate.services.export_read import PAGE_SIZE as EXPORT_PAGE
from write_gate.serving.config import Settings

pytestmark = pytest.mark.anyio

CORE_TYPES = ["Person", "Organization", "Project", "Document", "Entity"]
CORE_RELATIONS = {  # type -> (from types, to types) the core registry allows
    "WORKS_FOR": (["Person"], ["Organization"]),
    "WORKS_ON": (["Person", "Organization"], ["Project"]),
    "AUTHORED": (["Person"], ["Document"]),
    "RELATED_TO": (CORE_TYPES, CORE_TYPES),
}


def run(settings: Settings, *args: str) -> CommandRun:
    return run_write_gate(*args, env=settings_env(settings))


def process(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script in a process of its own."""
    return subprocess.run(
        write_gate_argv(*args), env=settings_env(settings), capture_output=True, text=True, timeout=600
    )


def generate(path: Path, entities: int, relations: int, seed: int = 7) -> list[dict]:
    """A memory.jsonl as the official server writes it: entities (every other one a Person, the rest of the core
    types in turn), then relations, Unicode included."""
    rng = random.Random(seed)
    records = []
    by_type: dict[str, list[str]] = {t: [] for t in CORE_TYPES}
    for i in range(entities):
        kind = "Person" if i % 2 else CORE_TYPES[i // 2 % len(CORE_TYPES)]
        name = f"{kind.lower()}-{i:05d}" + (" ünïcødé 東京" if i % 97 == 0 else "")
        by_type[kind].append(name)
        observations = [f"observation {j} of {name}" for j in range(rng.randint(0, 3))]
        records.append({"type": "entity", "name": name, "entityType": kind, "observations": observations})
    seen = set()
    while len(seen) < relations:
        kind, (froms, tos) = rng.choice(list(CORE_RELATIONS.items()))
        a, b = rng.choice(by_type[rng.choice(froms)]), rng.choice(by_type[rng.choice(tos)])
        if (a, b, kind) not in seen:
            seen.add((a, b, kind))
            records.append({"type": "relation", "from": a, "to": b, "relationType": kind})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return records


async def test_an_import_of_2500_entities_exports_back_the_same(settings: Settings, tmp_path: Path) -> None:
    """The user's path: the installed console script, in processes of their own. Large enough to cross every
    boundary the sizes have: the import's batches (500 lines: five of entities, three of relations) and the
    export's pages (1,000 nodes of a label: 1,459 Persons; 1,000 nodes a relationship read: three). More lines
    repeat the same batches and pages."""
    source = tmp_path / "memory.jsonl"
    records = generate(source, entities=2_500, relations=1_200)
    assert sum(r.get("entityType") == "Person" for r in records) > EXPORT_PAGE
    started = time.perf_counter()
    imported = process(settings, "import", str(source), "--quiet")
    elapsed = time.perf_counter() - started
    assert imported.returncode == 0, imported.stderr
    assert "entities: 2500 were created" in imported.stderr and "relations: 1200 were created" in imported.stderr
    print(f"imported 2,500 entities and 1,200 relations in {elapsed:.1f} s")

    exported = process(settings, "export", "--format", "jsonl", "--output", str(tmp_path / "out.jsonl"))
    assert exported.returncode == 0, exported.stderr
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    canonical = sorted(json.dumps(r, ensure_ascii=False, sort_keys=True) for r in records)
    assert (
        sorted(json.dumps(official(json.loads(line)), ensure_ascii=False, sort_keys=True) for line in lines)
        == canonical
    )
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds == sorted(kinds)  # entities first, as the official server writes its file

    again = process(settings, "import", str(tmp_path / "out.jsonl"), "--quiet")  # the export round-trips
    assert again.returncode == 0, again.stderr
    assert "is the gate's export: imported as --format jsonl" in again.stderr  # told by its content
    report = " ".join(again.stderr.split())  # the console wraps its lines
    assert "entities: 0 were created, 0 updated, 2500 skipped; relations: 0 created, 0 updated, 1200 skipped" in report


# The official server's keys of an exported line (the gate adds its identity and more beside them).
OFFICIAL_KEYS = ("type", "name", "entityType", "observations", "from", "to", "relationType")


def official(line: dict) -> dict:
    return {k: v for k, v in line.items() if k in OFFICIAL_KEYS}


MIXED = [
    '{"type":"entity","name":"Alice","entityType":"person","observations":["Likes tea"]}',
    '{"type":"entity","name":"Acme","entityType":"Company","observations":[]}',
    "not json",
    '{"type":"entity","name":"Bad","entityType":"!!!","observations":[]}',
    '{"type":"relation","from":"Alice","to":"Acme","relationType":"works at"}',
    '{"type":"relation","from":"Alice","to":"Nobody","relationType":"RELATED_TO"}',
    '{"type":"relation","from":"Alice","to":"Acme","relationType":"DIRECTED"}',
    '{"type":"thing"}',
]


async def test_every_remap_and_rejection_is_reported_with_its_line(settings: Settings, tmp_path: Path) -> None:
    source = tmp_path / "memory.jsonl"
    source.write_text("\n".join(MIXED) + "\n")
    result = run(settings, "import", str(source), "--report", str(tmp_path / "report.json"), "--quiet")
    assert result.returncode == 1 and "imported partially: 4 line(s) rejected" in result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(r["line"], r["error_code"]) for r in report["rejected"]] == [
        (3, "INVALID_INPUT"),
        (6, "ENDPOINT_NOT_FOUND"),
        (7, "SCHEMA_UNKNOWN_LABEL"),
        (8, "INVALID_INPUT"),
    ]
    assert [(r["line"], r["from"], r["to"]) for r in report["remapped"]] == [
        (1, ":person", "Person"),
        (2, ":Company", "Organization"),
        (4, ":!!!", "Entity"),  # any type is accepted, as the official server does, and kept as written
        (5, ":works at", "WORKS_FOR"),
    ]
    assert report["counts"]["entity created"] == 3 and report["counts"]["relation created"] == 1
    exported = run(settings, "export")
    # Entities come label by label (in name order), each label in identity order.
    assert [json.loads(line)["name"] for line in exported.stdout.splitlines()[:3]] == ["Bad", "Acme", "Alice"]


async def test_dry_run_decides_everything_and_writes_nothing(settings: Settings, tmp_path: Path) -> None:
    source = tmp_path / "memory.jsonl"
    source.write_text("\n".join(MIXED) + "\n")
    result = run(settings, "import", str(source), "--dry-run", "--quiet")
    assert "entities: 3 would be created" in result.stderr and "relations: 1 would be created" in result.stderr
    assert run(settings, "export").stdout == ""
    # Nothing was written, so nothing was imported partially: the run says what an import would do, and exits
    # by whether the file would import whole.
    said = " ".join(result.stderr.split())
    assert "imported partially" not in said
    assert result.returncode == 1 and "dry run, nothing written: 4 line(s) would be rejected" in said
    whole = tmp_path / "whole.jsonl"
    whole.write_text("\n".join(MIXED[:2] + [MIXED[4]]) + "\n")
    valid = run(settings, "import", str(whole), "--dry-run", "--quiet")
    assert valid.returncode == 0 and "dry run, nothing written: every line would be imported" in valid.stderr
    assert run(settings, "export").stdout == ""


async def test_the_older_memory_json_document_imports_too(settings: Settings, tmp_path: Path) -> None:
    document = {
        "entities": [
            {"name": "A", "entityType": "Person", "observations": ["x"]},
            {"name": "B", "entityType": "Person", "observations": []},
        ],
        "relations": [{"from": "A", "to": "B", "relationType": "RELATED_TO"}],
    }
    (tmp_path / "memory.json").write_text(json.dumps(document, indent=2))
    assert run(settings, "import", str(tmp_path / "memory.json"), "--quiet").returncode == 0
    exported = [json.loads(line) for line in run(settings, "export").stdout.splitlines()]
    assert official(exported[-1]) == {"type": "relation", "from": "A", "to": "B", "relationType": "RELATED_TO"}


async def test_other_formats_and_label_filter(settings: Settings, tmp_path: Path) -> None:
    source = tmp_path / "memory.jsonl"
    source.write_text("\n".join(MIXED[:2] + [MIXED[4]]) + "\n")
    assert run(settings, "import", str(source), "--quiet").returncode == 0

    root = ET.fromstring(run(settings, "export", "--format", "graphml").stdout)
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    alice, acme = 'Person:{"name":"Alice"}', 'Organization:{"name":"Acme"}'
    assert sorted(n.get("id") for n in root.iterfind(".//g:node", ns)) == [acme, alice]
    [edge] = root.findall(".//g:edge", ns)
    assert (edge.get("source"), edge.get("target")) == (alice, acme)

    dot = run(settings, "export", "--format", "dot").stdout
    assert dot.startswith("digraph") and '"Person:{\\"name\\":\\"Alice\\"}" -> "Organization:' in dot
    mermaid = run(settings, "export", "--format", "mermaid").stdout
    assert mermaid.startswith("graph LR") and '-->|"WORKS_FOR"|' in mermaid

    document = json.loads(run(settings, "export", "--format", "json").stdout)
    assert {e["name"] for e in document["entities"]} == {"Alice", "Acme"}
    assert document["entities"][0]["provenance"]["source"] == "import:memory.jsonl"

    only = [json.loads(line) for line in run(settings, "export", "--labels", "Organization").stdout.splitlines()]
    assert [official(line) for line in only] == [
        {"type": "entity", "name": "Acme", "entityType": "Organization", "observations": []}
    ]


async def test_schema_suggest_drafts_a_registry_an_import_then_fits(settings: Settings, tmp_path: Path) -> None:
    """An official memory file with types the registry does not know: `schema suggest` drafts entries (one
    per type, every spelling absorbed), the operator loads the draft, and the import fits it exactly."""
    lines = [
        {"type": "entity", "name": "Earth", "entityType": "planet", "observations": []},
        {"type": "entity", "name": "Mars", "entityType": "Planet", "observations": []},
        {"type": "entity", "name": "Sol", "entityType": "star system", "observations": []},
        {"type": "entity", "name": "Ada", "entityType": "person", "observations": []},
        {"type": "entity", "name": "Paris", "entityType": "city", "observations": []},
        {"type": "relation", "from": "Earth", "to": "Sol", "relationType": "orbits around"},
        {"type": "relation", "from": "Mars", "to": "Sol", "relationType": "orbitsAround"},
        {"type": "relation", "from": "Ada", "to": "Paris", "relationType": "lives in"},
    ]
    source = tmp_path / "memory.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    draft = tmp_path / "draft.json"
    suggested = run(settings, "schema", "suggest", str(source), "-o", str(draft))
    assert suggested.returncode == 0, suggested.stderr
    assert "covered: 'city' -> Location" in suggested.stderr and "covered: 'lives in' -> LOCATED_IN" in suggested.stderr
    entries = {e["name"]: e for e in json.loads(draft.read_text())["entries"]}
    assert set(entries) == {"Planet", "StarSystem", "ORBITS_AROUND"}
    assert entries["Planet"]["absorbs"] == ["planet"] and entries["ORBITS_AROUND"]["absorbs"] == [
        "orbitsAround",
        "orbits_around",
    ]
    assert run(settings, "schema", "load", str(draft)).returncode == 0
    imported = run(settings, "import", str(source), "--report", str(tmp_path / "report.json"), "--quiet")
    assert imported.returncode == 0, imported.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["rejected"] == [] and report["counts"]["relation created"] == 3
    labels = {(r["line"], r["to"]) for r in report["remapped"]}
    assert {(1, "Planet"), (3, "StarSystem"), (6, "ORBITS_AROUND"), (7, "ORBITS_AROUND")} <= labels
