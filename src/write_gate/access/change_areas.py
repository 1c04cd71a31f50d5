"""Who may watch which change areas (`write-gate://changes`, `write-gate://changes/{label}`).

The rule, in one place so an area can also name a space later: an agent may watch an area, by subscription or
by reading its resource, when its grant offers `changes_since` (by name, through the read group or its
toolset). Grants restrict the labels an agent writes, never those it reads, so every area is open to such an agent.
"""

from write_gate.access.agents import Grant
from write_gate.core.toolsets import toolset_of

FEED_TOOL = "changes_since"


def may_watch(grant: Grant, label: str | None) -> bool:
    """`label`: the area's node label or relationship type, None for every change."""
    del label  # every label is readable to an agent that may read changes (see above)
    return grant.allows_tool(FEED_TOOL, "read", toolset_of(FEED_TOOL))
