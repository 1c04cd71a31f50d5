"""What the records of one call share (`ChangeStamp`), and the records of a create that is new by its guard."""

import uuid
from collections.abc import Mapping
from typing import Any

from write_gate.core.claims import parse_claim
from write_gate.core.clock import utc_now
from write_gate.core.cypher.history_writes import ChangeStamp
from write_gate.core.cypher.statement import Provenance
from write_gate.core.history import Subject, WriteContext, set_changes


def change_stamp(agent_id: str, at: str | None = None) -> ChangeStamp:
    """A new change: its records share this id, time (`at`, else now) and agent."""
    return ChangeStamp(uuid.uuid4().hex, at or utc_now(), agent_id)


def created_changes(
    subject: Subject, written: Mapping[str, Any], change: ChangeStamp, provenance: Provenance
) -> list[dict[str, Any]]:
    """The records of a node or relationship a guarded create makes new (nothing before it; revision 1)."""
    claim = parse_claim(provenance.claim())
    assert claim is not None  # the gate's own claim always parses
    return set_changes(subject, None, written, WriteContext(change.change_id, change.at, 1, claim))
