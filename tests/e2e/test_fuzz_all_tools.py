"""Every tool of every profile (typed tools included), fuzzed through a real MCP client session: any
argument shape, type, Unicode, control characters, huge and empty values, identifiers built to escape
quoting. The answer is always a result or a structured rejection, never INTERNAL_ERROR, valid against the
tool's outputSchema (TypeScript SDK v1 clients refuse it otherwise), and a rejected call changes nothing in
the graph."""

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import MATRIX_SCHEMAS, open_client
from tests.e2e.test_bad_input import ESCAPES
from write_gate.core.cypher.idempotency import IDEMPOTENCY_LABEL
from write_gate.core.cypher.statement import Statement
from write_gate.core.model import ErrorCode
from write_gate.core.quarantine import QUARANTINE_LABEL
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.bundled import bundled
from write_gate.store.schema_files import load_into_graph, read_sources

RPG = bundled("schemas") / "examples" / "rpg"

text = st.one_of(
    st.text(max_size=30),
    st.sampled_from(ESCAPES + ["", " ", "\x00", "\u202e", "𝄞" * 10, "a" * 70_000, "Gandalf", "Alice", "Person"]),
)
scalar = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(), text)
json_value = st.recursive(
    scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)),
    max_leaves=12,
)


class Fuzzer:
    def __init__(self, portal: BlockingPortal, clients: dict[str, Any], backend: Any) -> None:
        self.portal, self.clients, self.backend = portal, clients, backend
        self.tools = {
            profile: {t.name: t for t in portal.call(client.list_tools).tools} for profile, client in clients.items()
        }
        self.answers = {
            (profile, name): jsonschema.Draft202012Validator(tool.output_schema)
            for profile, tools in self.tools.items()
            for name, tool in tools.items()
        }

    def fingerprint(self) -> tuple[int, int, int]:
        read = lambda q: self.portal.call(self.backend.read, Statement(q))[0]["c"]  # noqa: E731
        # A rejection called with an idempotency_key is kept for its repeats (a :WriteGateIdempotency record), and
        # a rejected write is kept in the quarantine (a :WriteGateQuarantine entry): the gate's own bookkeeping,
        # outside the working graph, not a change to the graph's knowledge.
        nodes = f"MATCH (n) WHERE NOT n:{IDEMPOTENCY_LABEL} AND NOT n:{QUARANTINE_LABEL}"
        props = read(f"{nodes} UNWIND keys(n) AS k RETURN count(k) AS c")
        return read(f"{nodes} RETURN count(n) AS c"), read("MATCH ()-[r]->() RETURN count(r) AS c"), props


@pytest.fixture(scope="module")
def fuzzer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzer]:
    config = Settings(
        data_dir=tmp_path_factory.mktemp("fuzz-all"),
        embedded_fsync="everysec",
        max_string_length=50_000,
        # Every tool listed, so every one is fuzzed: every toolset, and discovery's two.
        toolsets="all",
        dynamic_toolsets=True,
        # No statistics keeper: its fold, between a call and the fingerprint after it, sets what the statistics
        # counted a subject as (`_s`) on subjects written earlier, which a rejected call's fingerprint would count.
        stats_fold_seconds=0,
    )
    with start_blocking_portal() as portal:
        backend = portal.call(open_backend, config)
        portal.call(load_into_graph, backend, read_sources([RPG, MATRIX_SCHEMAS]))
        with (
            portal.wrap_async_context_manager(open_client(config, "in_process")) as gate,
            portal.wrap_async_context_manager(open_client(config, "in_process", profile="memory")) as memory,
            portal.wrap_async_context_manager(open_client(config, "in_process", profile="mesh")) as mesh,
        ):
            yield Fuzzer(portal, {"gate": gate, "memory": memory, "mesh": mesh}, backend)
        portal.call(backend.close)


@st.composite
def calls(draw: st.DrawFn, fuzzer: Fuzzer) -> tuple[str, str, dict[str, Any]]:
    profile = draw(st.sampled_from(sorted(fuzzer.tools)))
    tool = fuzzer.tools[profile][draw(st.sampled_from(sorted(fuzzer.tools[profile])))]
    fields = list(tool.input_schema.get("properties", {}))
    keys = st.one_of(st.sampled_from(fields), text) if fields else text
    args = draw(st.dictionaries(keys, json_value, max_size=6))
    return profile, tool.name, args


FUZZ = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@FUZZ
@given(data=st.data())
def test_every_tool_answers_with_a_result_or_a_structured_rejection(fuzzer: Fuzzer, data: st.DataObject) -> None:
    profile, tool, args = data.draw(calls(fuzzer))
    before = fuzzer.fingerprint()
    result = fuzzer.portal.call(fuzzer.clients[profile].call_tool, tool, args)
    out = result.structured_content
    assert isinstance(out, dict), (tool, args)
    mismatches = [e.message for e in fuzzer.answers[profile, tool].iter_errors(out)]
    assert mismatches == [], (tool, args, out)
    if result.is_error:
        assert out["status"] == "rejected" and out["error_code"] in ErrorCode.__members__, out
        assert out["error_code"] != "INTERNAL_ERROR", (tool, args, out)
        assert fuzzer.fingerprint() == before, f"rejected {tool} changed the graph"


def test_oversized_calls_are_refused_with_the_limit(fuzzer: Fuzzer) -> None:
    huge = {
        "label": "Person",
        "merge_keys": {"name": "x"},
        "properties": {"bio": "a" * 60_000},
        "source": "s",
        "extraction_method": "api",
    }
    out = fuzzer.portal.call(fuzzer.clients["gate"].call_tool, "write_node", huge).structured_content
    assert out["error_code"] == "INVALID_INPUT" and out["details"]["limit"] == "max_string_length"
    assert out["details"]["max"] == 50_000
    many = {
        "label": "Person",
        "merge_keys": {"name": "x"},
        "properties": {f"p{i}": i for i in range(201)},
        "source": "s",
        "extraction_method": "api",
    }
    out = fuzzer.portal.call(fuzzer.clients["gate"].call_tool, "write_node", many).structured_content
    assert out["details"]["limit"] == "max_properties"
    long_list = {
        "label": "Person",
        "merge_keys": {"name": "x"},
        "properties": {"tags": ["t"] * 10_001},
        "source": "s",
        "extraction_method": "api",
    }
    out = fuzzer.portal.call(fuzzer.clients["gate"].call_tool, "write_node", long_list).structured_content
    assert out["details"]["limit"] == "max_list_length"
    batch = {"entityNames": [f"n{i}" for i in range(10_001)]}
    out = fuzzer.portal.call(fuzzer.clients["memory"].call_tool, "delete_entities", batch).structured_content
    assert out["details"]["limit"] == "max_batch_items"
    big = {"entities": [{"name": "x" * 1000, "entityType": "Person", "observations": ["o" * 40_000] * 120}]}
    out = fuzzer.portal.call(fuzzer.clients["memory"].call_tool, "create_entities", big).structured_content
    assert out["details"]["limit"] == "max_request_bytes"
