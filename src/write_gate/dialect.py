"""What differs between the engines' Cypher, each difference in one place."""

from dataclasses import dataclass
from typing import Protocol

from write_gate.identifiers import quote


@dataclass(frozen=True)
class Command:
    """A non-Cypher engine command (FalkorDB's constraints are `GRAPH.CONSTRAINT ...`)."""

    args: tuple[str, ...]


class Dialect(Protocol):
    name: str

    def create_index(self, label: str, prop: str) -> str | Command: ...

    def create_unique_constraint(self, label: str, prop: str) -> str | Command: ...


class MemgraphDialect:
    name = "memgraph"

    def create_index(self, label: str, prop: str) -> str:
        return f"CREATE INDEX ON :{quote(label)}({quote(prop)})"

    def create_unique_constraint(self, label: str, prop: str) -> str:
        # Memgraph's constraint creates no index; callers create the index as well.
        return f"CREATE CONSTRAINT ON (n:{quote(label)}) ASSERT n.{quote(prop)} IS UNIQUE"


@dataclass(frozen=True)
class FalkorDBDialect:
    graph: str
    name: str = "falkordb"

    def create_index(self, label: str, prop: str) -> str:
        return f"CREATE INDEX FOR (n:{quote(label)}) ON (n.{quote(prop)})"

    def create_unique_constraint(self, label: str, prop: str) -> Command:
        # Needs the index first; the server answers PENDING, then builds it in the background.
        return Command(("GRAPH.CONSTRAINT", "CREATE", self.graph, "UNIQUE", "NODE", label, "PROPERTIES", "1", prop))
