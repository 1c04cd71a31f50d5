"""Read-only statements over the change and conflict records (`core.history`), newest first, keyset-paged.

Optional filters are parameters that may be null (no filter), so each tool has one statement text. A page
resumes strictly after the last record answered, by its sort key: (`at`, `change_id`, `property`) for changes
(unique for one subject: a change records each property once) and (`at`, `conflict_id`) for conflicts.
"""

from write_gate.core.cypher.statement import Statement
from write_gate.core.history import CHANGE_LABEL, CONFLICT_LABEL

_NODE = "h.subject = 'node' AND h.label = $label AND h.key = $key"
_RELATIONSHIP = (
    "h.subject = 'relationship' AND h.label = $label AND h.from_label = $from_label AND h.from_key = $from_key"
    " AND h.to_label = $to_label AND h.to_key = $to_key"
)


def changes_of(relationship: bool) -> Statement:
    """Parameters: `label` and `key` (a node) or `label` (the type), `from_label`, `from_key`, `to_label`,
    `to_key` (a relationship); `property`, `since` (ISO text), `after_at`, `after_id`, `after_property` (the
    cursor's), each null for none; `limit`."""
    return Statement(
        f"MATCH (h:{CHANGE_LABEL})\n"
        f"WHERE {_RELATIONSHIP if relationship else _NODE}\n"
        "  AND ($property IS NULL OR h.property = $property)\n"
        "  AND ($since IS NULL OR h.at >= $since)\n"
        "  AND ($after_at IS NULL OR h.at < $after_at OR (h.at = $after_at AND (h.change_id < $after_id"
        " OR (h.change_id = $after_id AND h.property < $after_property))))\n"
        "RETURN properties(h) AS change, h.at AS at, h.change_id AS change_id, h.property AS property\n"
        "ORDER BY at DESC, change_id DESC, property DESC\n"
        "LIMIT $limit"
    )


# Parameters: `status`, `label`, `property`, `after_at`, `after_id` (each null for none); `limit`.
CONFLICTS = Statement(
    f"MATCH (c:{CONFLICT_LABEL})\n"
    "WHERE ($status IS NULL OR c.status = $status)\n"
    "  AND ($label IS NULL OR c.label = $label)\n"
    "  AND ($property IS NULL OR c.property = $property)\n"
    "  AND ($after_at IS NULL OR c.at < $after_at OR (c.at = $after_at AND c.conflict_id < $after_id))\n"
    "RETURN properties(c) AS conflict, c.at AS at, c.conflict_id AS conflict_id\n"
    "ORDER BY at DESC, conflict_id DESC\n"
    "LIMIT $limit"
)
