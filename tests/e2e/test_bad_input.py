"""Hypothesis-generated arguments through a real MCP client session: the server never crashes, every
answer is `written` or a structured rejection, a rejected call changes nothing, and text built to break
out of a quoted identifier never reaches the graph as a label, type or key."""

from collections.abc import Iterator
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import MATRIX_SCHEMAS, open_client
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import RESERVED_LABELS
from write_gate.core.model import ErrorCode
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources

ESCAPES = [
    "Person`) DETACH DELETE n //",
    "Person` {name: 'x'}) MERGE (h:Hacked",
    "Person`:Hacked",
    "`",
    "``",
    "Person\u0060",
    "Person\\`) RETURN 1 //",
    "Person})-[:X]->(m:Hacked",
    "Person\nMATCH (n) DETACH DELETE n",
    "name`: 1}) SET n.pwned = true //",
    "WORKS_FOR]->(b) DELETE a //",
    "Person\x00Hacked",
    ":Person:Hacked",
]
REGISTERED = ["Person", ":person", "User", "Organization", "Entity", "Company", "ZZZ"]
RELATIONSHIP_TYPES = ["WORKS_FOR", "EMPLOYED_BY", "KNOWS", "DIRECTED"]
METHODS = ["api", "parsed", "manual", "llm"]

names = st.one_of(st.sampled_from(REGISTERED + ESCAPES), st.text(max_size=40))
keys = st.one_of(st.sampled_from(["name", "age", "confidence", "_stub", "source", *ESCAPES]), st.text(max_size=20))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(max_size=60),
    st.sampled_from(ESCAPES),
)
values = st.one_of(scalars, st.lists(scalars, max_size=4), st.dictionaries(st.text(max_size=5), scalars, max_size=2))
maps = st.dictionaries(keys, values, max_size=4)
reliabilities = st.one_of(st.floats(), st.integers(), st.text(max_size=5), st.none())
methods = st.one_of(st.sampled_from(METHODS), st.text(max_size=10))


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(strategy, st.just("<absent>"))


def arguments(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    # Any field may be missing or of the wrong type: the schema catches what it can, the gate the rest.
    return st.fixed_dictionaries({name: maybe(s) for name, s in fields.items()}).map(
        lambda d: {k: v for k, v in d.items() if v != "<absent>"}
    )


plain_keys = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True).filter(lambda k: k not in {"source", "confidence"})
plain_values = st.one_of(
    st.text(max_size=60).filter(lambda t: "\x00" not in t),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.lists(st.text(max_size=10).filter(lambda t: "\x00" not in t), max_size=3),
)
identity = st.fixed_dictionaries({"name": st.text(min_size=1, max_size=30).filter(lambda t: "\x00" not in t)})
# Mostly-valid calls, so that the write path (and values round-tripping through it) is fuzzed too.
valid_node_args = st.fixed_dictionaries(
    {
        "label": st.sampled_from(REGISTERED),
        "merge_keys": identity,
        "properties": st.dictionaries(plain_keys, plain_values, max_size=3).map(
            lambda d: {k: v for k, v in d.items() if k != "age"}
        ),
        "source": st.text(min_size=1, max_size=20),
        "extraction_method": st.sampled_from(METHODS),
        "reliability": st.floats(allow_nan=False, allow_infinity=False),
    }
)
valid_relationship_args = st.fixed_dictionaries(
    {
        "type": st.sampled_from(RELATIONSHIP_TYPES),
        "from_label": st.sampled_from(["Person", "person"]),
        "from_keys": identity,
        "to_label": st.sampled_from(["Person", "Organization", "Company"]),
        "to_keys": identity,
        "properties": st.dictionaries(plain_keys, plain_values, max_size=3),
        "source": st.text(min_size=1, max_size=20),
        "extraction_method": st.sampled_from(METHODS),
        "endpoint_policy": st.sampled_from(["fail_if_missing", "merge_endpoints"]),
    }
)

random_node_args = arguments(
    {
        "label": names,
        "merge_keys": st.one_of(maps, st.fixed_dictionaries({"name": scalars})),
        "properties": maps,
        "source": st.one_of(st.text(max_size=20), st.integers()),
        "extraction_method": methods,
        "reliability": reliabilities,
    }
)
random_relationship_args = arguments(
    {
        "type": st.one_of(st.sampled_from(RELATIONSHIP_TYPES + ESCAPES), st.text(max_size=20)),
        "from_label": names,
        "from_keys": st.one_of(maps, st.fixed_dictionaries({"name": scalars})),
        "to_label": names,
        "to_keys": st.one_of(maps, st.fixed_dictionaries({"name": scalars})),
        "properties": maps,
        "source": st.text(max_size=20),
        "extraction_method": methods,
        "reliability": reliabilities,
        "endpoint_policy": st.one_of(st.sampled_from(["fail_if_missing", "merge_endpoints"]), st.text(max_size=8)),
    }
)

node_args = st.one_of(valid_node_args, random_node_args)
relationship_args = st.one_of(valid_relationship_args, random_relationship_args)


class Session:
    """One gate and one client session for the whole fuzz run, driven from Hypothesis' sync tests."""

    def __init__(self, portal: BlockingPortal, client: Any, backend: Any) -> None:
        self.portal, self.client, self.backend = portal, client, backend
        self.fuzzed = 0  # fuzzed calls (check_answer), not the escape tests' calls, which are all refused

    def call(self, tool: str, args: dict[str, Any]) -> Any:
        return self.portal.call(self.client.call_tool, tool, args)

    def read(self, text: str) -> list[dict[str, Any]]:
        return self.portal.call(self.backend.read, Statement(text))

    def fingerprint(self) -> tuple[Any, ...]:
        # A rejected write is kept in the quarantine (outside the working graph): only the graph itself counts.
        nodes = self.read("MATCH (n) WHERE NOT n:WriteGateQuarantine RETURN count(n) AS c")[0]["c"]
        rels = self.read("MATCH ()-[r]->() RETURN count(r) AS c")[0]["c"]
        return nodes, rels


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    # The statistics' keeper off: a rejected call must change nothing, and the keeper's folds change the graph.
    config = Settings(data_dir=tmp_path_factory.mktemp("fuzz"), embedded_fsync="everysec", stats_fold_seconds=0)
    with start_blocking_portal() as portal:
        backend = portal.call(open_backend, config)
        portal.call(load_into_graph, backend, read_sources([MATRIX_SCHEMAS]))
        with portal.wrap_async_context_manager(open_client(config, "in_process")) as client:
            fuzzed = Session(portal, client, backend)
            yield fuzzed
            assert_vocabulary_intact(fuzzed)
        portal.call(backend.close)


def check_answer(session: Session, tool: str, args: dict[str, Any]) -> None:
    before = session.fingerprint()
    session.fuzzed += 1
    result = session.call(tool, args)
    out = result.structured_content
    assert isinstance(out, dict), "every answer carries structured content"
    if result.is_error:
        assert out["status"] == "rejected"
        assert out["error_code"] in ErrorCode.__members__ and out["error_code"] != "INTERNAL_ERROR", out
        assert isinstance(out["message"], str) and isinstance(out["details"], dict)
        assert session.fingerprint() == before, "a rejected call changed the graph"
    else:
        assert out["status"] == "written"
        assert 0.0 <= out["confidence"] <= 1.0


FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(args=node_args)
def test_write_node_answers_written_or_a_structured_rejection(session: Session, args: dict[str, Any]) -> None:
    check_answer(session, "write_node", args)


@FUZZ
@given(args=relationship_args)
def test_write_relationship_answers_written_or_a_structured_rejection(session: Session, args: dict[str, Any]) -> None:
    check_answer(session, "write_relationship", args)


@pytest.mark.parametrize("escape", ESCAPES)
def test_escape_attempts_change_nothing(session: Session, escape: str) -> None:
    base = {"merge_keys": {"name": "Mallory"}, "source": "fuzz", "extraction_method": "llm"}
    before = session.fingerprint()
    for args in (
        {**base, "label": escape},
        {**base, "label": "Person", "merge_keys": {escape: "x"}},
        {**base, "label": "Person", "properties": {escape: "x"}},
    ):
        result = session.call("write_node", args)
        assert result.is_error and result.structured_content["error_code"] == "INVALID_INPUT"
    rel = {
        "type": escape,
        "from_label": "Person",
        "from_keys": {"name": "a"},
        "to_label": "Person",
        "to_keys": {"name": "b"},
        "source": "fuzz",
        "extraction_method": "llm",
        "endpoint_policy": "merge_endpoints",
    }
    assert session.call("write_relationship", rel).structured_content["error_code"] == "INVALID_INPUT"
    assert session.fingerprint() == before


def assert_vocabulary_intact(session: Session) -> None:
    """After every fuzz test of the module (the session fixture's teardown calls this, whatever order the
    tests ran in): nothing escaped into the graph's vocabulary."""
    labels = {label for row in session.read("MATCH (n) RETURN DISTINCT labels(n) AS l") for label in row["l"]}
    assert labels <= {"Person", "Organization", "Entity"} | RESERVED_LABELS
    types = {row["t"] for row in session.read("MATCH ()-[r]->() RETURN DISTINCT type(r) AS t")}
    assert types <= {"WORKS_FOR", "KNOWS"}
    keys = {k for row in session.read("MATCH (n) UNWIND keys(n) AS k RETURN DISTINCT k") for k in row.values()}
    assert all(k.isidentifier() and k.isascii() for k in keys), keys
    assert not session.read("MATCH (n) WHERE n.pwned = true RETURN n")
    # The fuzzer did reach the write path, not only the rejections (when a fuzz test ran at all).
    written = session.read(
        "MATCH (n) WHERE NOT n:Schema AND NOT n:WriteGateRegistry AND NOT n:WriteGateQuarantine RETURN count(n) AS c"
    )
    assert session.fuzzed == 0 or written[0]["c"] > 0
