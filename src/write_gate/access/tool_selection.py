"""`WRITE_GATE_TOOLS`: which tools a server offers at all, before any agent's grant narrows them further.

A comma- or space-separated list of items, each a tool name (`write_node`), a group (`read`, `write`,
`admin`, `typed` for every generated tool), `typed:<Label>` (one label's add/update/delete), or `*`.
An item starting with `-` takes tools away: `*,-typed` offers everything but the generated tools,
`read,typed:Npc` the reads and Npc's three. Only exclusions means "everything but". Pure.

It decides what a server offers at all (what may be called); the toolsets (core.toolsets) what is listed among
that. A tool named outright (its name, `typed`, `typed:<Label>`) is listed whatever its set.
"""

import re
from dataclasses import dataclass

_ITEM = re.compile(r"^-?(\*|[A-Za-z_][A-Za-z0-9_]*|typed:[A-Za-z_][A-Za-z0-9_]*)$")
GROUPS = ("read", "write", "admin", "typed")


@dataclass(frozen=True)
class ToolSelection:
    include: frozenset[str]
    exclude: frozenset[str]

    @classmethod
    def parse(cls, text: str) -> "ToolSelection":
        items = [item for item in re.split(r"[,\s]+", text.strip()) if item]
        bad = [item for item in items if not _ITEM.match(item)]
        if bad:
            raise ValueError(
                f"WRITE_GATE_TOOLS: {', '.join(bad)} is not a tool name, a group ({', '.join(GROUPS)}), "
                "typed:<Label> or *"
            )
        include = frozenset(item for item in items if not item.startswith("-"))
        exclude = frozenset(item[1:] for item in items if item.startswith("-"))
        return cls(include or frozenset({"*"}), exclude)

    def offers(self, name: str, group: str, label: str | None = None) -> bool:
        """`group`: the tool's (ToolSpec.group); `label`: the registry label a generated (typed) tool writes,
        None for the fixed tools."""
        keys = {"*", name, group} | ({"typed", f"typed:{label}"} if label is not None else set())
        return not keys.isdisjoint(self.include) and keys.isdisjoint(self.exclude)

    def names(self, name: str, group: str, label: str | None = None) -> bool:
        """Whether the tool is named outright (by its name, or a generated one by `typed` or `typed:<Label>`), not
        only through `*` or a group: it is then listed even outside the listed toolsets."""
        keys = {name} | ({"typed", f"typed:{label}"} if label is not None else set())
        return not keys.isdisjoint(self.include) and self.offers(name, group, label)


EVERYTHING = ToolSelection(frozenset({"*"}), frozenset())
