"""Export-only formats for people and diagram tools: markdown, Graphviz DOT and Mermaid. Each names every node by
its identity (`label:_key`): DOT as the quoted node id, Mermaid in a comment beside its short id `n0`, markdown
in a code span under its name."""

from collections.abc import Iterator

from write_gate.core.export_records import ExportedGraph, ExportedNode

# --- markdown ------------------------------------------------------------------------------------------

# Only what would render as something else in running text after a list marker or heading: code, emphasis by
# `*`, HTML and links. Dots, hyphens, underscores inside words, parentheses and `#` show as they are, so names and
# observations stay verbatim in the text (a reader or a test finds "Node.js_v2-beta" as written; every one of
# them was escaped, found by a black-box audit).
_MARKDOWN_SPECIAL = set("\\`*<>[]")


def _md(text: str | None) -> str:
    """Text as markdown shows it literally, on one line."""
    text = " ".join((text or "").split())
    return "".join("\\" + ch if ch in _MARKDOWN_SPECIAL else ch for ch in text)


def _code(text: str) -> str:
    """A code span that holds any text: fenced by one backtick more than the longest run inside it."""
    run = longest = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _node_markdown(node: ExportedNode) -> Iterator[str]:
    yield f"\n### {_md(node.name)}\n\n"
    yield f"- id: {_code(node.id)}\n"
    if node.tags:
        yield f"- tags: {', '.join(_md(tag) for tag in node.tags)}\n"
    if node.importance is not None:
        yield f"- importance: {node.importance:g}\n"
    if node.parent is not None:
        yield f"- parent: {_md(node.parent)}\n"
    for name, value in sorted(node.properties.items()):
        yield f"- {_md(name)}: {_md(str(value))}\n"
    for name, value in node.provenance.items():
        yield f"- {name}: {_md(str(value))}\n"
    if node.observations:
        yield "- observations:\n"
        for observation in node.observations:
            yield f"  - {_md(observation)}\n"


def markdown(graph: ExportedGraph) -> Iterator[str]:
    yield f"# Knowledge graph\n\n{len(graph.nodes)} entities, {len(graph.relations)} relations.\n"
    label = None
    for node in graph.nodes:
        if node.label != label:
            label = node.label
            yield f"\n## {label}\n"
        yield from _node_markdown(node)
    if graph.relations:
        yield "\n## Relations\n\n"
        for r in graph.relations:
            yield f"- {_md(r.from_name)} ({_code(r.from_id)}) **{r.type}** {_md(r.to_name)} ({_code(r.to_id)})\n"


# --- DOT ---------------------------------------------------------------------------------------------------


def _dot_quote(text: str) -> str:
    """A quoted DOT string: backslashes and quotes escaped (so no quote inside ends it), line breaks as `\\n`."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "") + '"'


def dot(graph: ExportedGraph) -> Iterator[str]:
    yield "digraph write_gate {\n"
    for node in graph.nodes:
        yield f"  {_dot_quote(node.id)} [label={_dot_quote(f'{node.name}\n{node.label}')}];\n"
    for r in graph.relations:
        yield f"  {_dot_quote(r.from_id)} -> {_dot_quote(r.to_id)} [label={_dot_quote(r.type)}];\n"
    yield "}\n"


# --- Mermaid -------------------------------------------------------------------------------------------------


def _mermaid_text(text: str) -> str:
    # Mermaid labels are quoted strings; it spells quotes, angle brackets and # as entity codes.
    text = " ".join(text.split())
    return text.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def _comment(text: str) -> str:
    return " ".join(text.split())  # a comment runs to the end of its line


def mermaid(graph: ExportedGraph) -> Iterator[str]:
    yield "graph LR\n"
    ids: dict[str, str] = {}
    for i, node in enumerate(graph.nodes):
        ids[node.id] = f"n{i}"
        yield f"  %% n{i} = {_comment(node.id)}\n"
        yield f'  n{i}["{_mermaid_text(node.name or "")}<br/><i>{_mermaid_text(node.label)}</i>"]\n'
    for r in graph.relations:
        yield f'  {ids[r.from_id]} -->|"{_mermaid_text(r.type)}"| {ids[r.to_id]}\n'
