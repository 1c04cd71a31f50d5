"""The change feed's read tool, offered in both profiles: `changes_since`."""

from write_gate.services.change_feed import ChangesFeed, ChangesSinceRequest, changes_since
from write_gate.surface.tool_spec import READ, ToolSpec

CHANGES_SINCE = ToolSpec(
    name="changes_since",
    title="Changes since",
    description="Every accepted change since cursor (none: the oldest kept), oldest first, whole changes with "
    "before/after; labels filters. Poll again with next_cursor.",
    input_model=ChangesSinceRequest,
    output_model=ChangesFeed,
    annotations=READ,
    handler=lambda s, req, _call: changes_since(s.gate, req, s.change_settle_seconds),
)
