"""The Bolt test tier: a Bolt server that answers the real neo4j driver as Memgraph does and executes each
statement on a real FalkorDB (see server.py for what it proves and what it does not)."""

from tests.bolt_double.faults import Action
from tests.bolt_double.server import BoltDouble
from tests.bolt_double.thread import DoubleThread

__all__ = ["Action", "BoltDouble", "DoubleThread"]
