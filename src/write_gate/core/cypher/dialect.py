"""What differs between the engines' Cypher, each difference in one place."""

from typing import Protocol

from write_gate.core.identifiers import quote


class Dialect(Protocol):
    name: str

    def create_index(self, label: str, prop: str) -> str: ...

    def create_unique_constraint(self, label: str, prop: str) -> str | None:
        """The DDL, or None where the engine gets no constraint (and why is said there)."""
        ...

    def drop_index(self, label: str, prop: str) -> str | None:
        """The DDL that drops an index on a raw merge-key value, or None where it is kept."""
        ...


class MemgraphDialect:
    name = "memgraph"

    def create_index(self, label: str, prop: str) -> str:
        return f"CREATE INDEX ON :{quote(label)}({quote(prop)})"

    def create_unique_constraint(self, label: str, prop: str, *more: str) -> str:
        # Memgraph's constraint creates no index; callers create the index as well. Several properties make one
        # composite constraint: unique as a combination, as merge keys are.
        props = ", ".join(f"n.{quote(p)}" for p in (prop, *more))
        return f"CREATE CONSTRAINT ON (n:{quote(label)}) ASSERT {props} IS UNIQUE"

    def drop_index(self, label: str, prop: str) -> None:
        # Memgraph's indexes find every string: an old one on a merge key is harmless.
        return None


class FalkorDBDialect:
    name = "falkordb"

    def create_index(self, label: str, prop: str) -> str:
        return f"CREATE INDEX FOR (n:{quote(label)}) ON (n.{quote(prop)})"

    def create_unique_constraint(self, label: str, prop: str) -> None:
        # None on purpose. FalkorDB (the module falkordblite 0.11 ships) crashes the whole server in
        # EnforceUniqueEntity when a constrained string is empty or starts or ends with ASCII white
        # space, e.g. "Alice " (tests/integration/test_engine.py keeps the regression). It needs no
        # constraint for the gate's guarantee: it serialises writes, so two MERGEs of a new key
        # cannot both create it, and the gate never issues CREATE. The index keeps lookups fast.
        return None

    def drop_index(self, label: str, prop: str) -> str:
        # An index on a raw value misses strings edged with white space: identity lives in `_key` now.
        return f"DROP INDEX FOR (n:{quote(label)}) ON (n.{quote(prop)})"
