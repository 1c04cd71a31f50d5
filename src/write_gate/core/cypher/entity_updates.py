"""Setting some properties of a node that exists (its tags, its importance): a change to it, not a new claim
about it, so only the change is stamped on the node (`last_updated`, `updated_by`) and each value gets the
writer's claim. Guarded by the revision the decision was made on, with its records, as the gate's writes are;
a node that is gone or became an alias since matches nothing (never re-created, unlike a MERGE)."""

import functools
from collections.abc import Mapping
from typing import Any

from write_gate.core.cypher.aliases import unless_alias
from write_gate.core.cypher.clauses import refresh_search_text, stamp, written_properties
from write_gate.core.cypher.dialect import Dialect
from write_gate.core.cypher.records import Guard, append_records, next_revision, revision_guard
from write_gate.core.cypher.statement import Provenance, Statement
from write_gate.core.identifiers import CHANGE_FIELDS, quote
from write_gate.core.identity import KEY_FIELD


@functools.lru_cache(maxsize=256)
def _text(label: str, dialect: Dialect) -> str:
    sets = ["n += $properties", stamp("n", fields=CHANGE_FIELDS), next_revision("n")]
    return "\n".join(
        [
            f"MATCH (n:{quote(label)} {{{KEY_FIELD}: $key}})",
            unless_alias("n"),
            revision_guard("n"),
            "SET " + ",\n    ".join(sets),
            *append_records(),
            refresh_search_text("n", dialect),
            "RETURN count(n) AS written",
        ]
    )


def update_node(
    label: str, key: str, properties: Mapping[str, Any], provenance: Provenance, guard: Guard, dialect: Dialect
) -> Statement:
    """Parameters: `key`, `properties` (with their claims and folded text), the change stamp, the guard's."""
    params: dict[str, Any] = {
        "key": key,
        "properties": written_properties(properties, provenance),
        "last_updated": provenance.last_updated,
        "updated_by": provenance.written_by,
        **guard.params(),
    }
    return Statement(_text(label, dialect), params)
