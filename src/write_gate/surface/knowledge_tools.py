"""Seed 004's knowledge tools (memory-mcp's names and arguments), offered in both profiles: tags and
importance, the hierarchy, the archive. Their writes take provenance from the call's `WriterContext`."""

from write_gate.services.archive import (
    Archived,
    ArchiveRequest,
    Restored,
    RestoreRequest,
    archive_entities,
    restore_entities,
)
from write_gate.services.hierarchy import (
    Ancestors,
    Children,
    Descendants,
    HierarchyRequest,
    Parent,
    ParentSet,
    SetParentRequest,
    Subtree,
    get_ancestors,
    get_children,
    get_descendants,
    get_parent,
    get_subtree,
    set_entity_parent,
)
from write_gate.services.tags import (
    EntityImportance,
    EntityTags,
    ImportanceRequest,
    MultipleTags,
    MultipleTagsRequest,
    TagsRequest,
    add_tags,
    add_tags_to_multiple,
    remove_tags,
    set_importance,
)
from write_gate.surface.tool_spec import READ, ToolSpec, lean_hints

ADD_TAGS = ToolSpec(
    name="add_tags",
    title="Add tags",
    description="Tag an entity (tags are lowercased); answers its tags.",
    input_model=TagsRequest,
    output_model=EntityTags,
    annotations=lean_hints(),
    handler=lambda s, req, call: add_tags(s.gate, req, call.writer, call.agent),
)


REMOVE_TAGS = ToolSpec(
    name="remove_tags",
    title="Remove tags",
    description="Remove tags from an entity; answers its tags.",
    input_model=TagsRequest,
    output_model=EntityTags,
    annotations=lean_hints(destructive=True),
    handler=lambda s, req, call: remove_tags(s.gate, req, call.writer, call.agent),
)


SET_IMPORTANCE = ToolSpec(
    name="set_importance",
    title="Set importance",
    description="Set an entity's importance, 0 to 10.",
    input_model=ImportanceRequest,
    output_model=EntityImportance,
    annotations=lean_hints(),
    handler=lambda s, req, call: set_importance(s.gate, req, call.writer, call.agent),
)


ADD_TAGS_TO_MULTIPLE_ENTITIES = ToolSpec(
    name="add_tags_to_multiple_entities",
    title="Tag entities",
    description="Add the same tags to several entities; answers each one's tags.",
    input_model=MultipleTagsRequest,
    output_model=MultipleTags,
    annotations=lean_hints(),
    handler=lambda s, req, call: add_tags_to_multiple(s.gate, req, call.writer, call.agent),
)


TAG_TOOLS = (ADD_TAGS, REMOVE_TAGS, SET_IMPORTANCE, ADD_TAGS_TO_MULTIPLE_ENTITIES)

SET_ENTITY_PARENT = ToolSpec(
    name="set_entity_parent",
    title="Set entity parent",
    description="Put an entity under a parent (replacing its parent; null removes it). No cycles.",
    input_model=SetParentRequest,
    output_model=ParentSet,
    annotations=lean_hints(destructive=True),
    handler=lambda s, req, call: set_entity_parent(s.gate, s.hierarchy, req, call.writer, call.agent),
)


GET_PARENT = ToolSpec(
    name="get_parent",
    title="Get parent",
    description="An entity's parent, or null.",
    input_model=HierarchyRequest,
    output_model=Parent,
    annotations=READ,
    handler=lambda s, req, _call: get_parent(s.gate, s.hierarchy, req),
)


GET_CHILDREN = ToolSpec(
    name="get_children",
    title="Get children",
    description="An entity's children.",
    input_model=HierarchyRequest,
    output_model=Children,
    annotations=READ,
    handler=lambda s, req, _call: get_children(s.gate, s.hierarchy, req),
)


GET_ANCESTORS = ToolSpec(
    name="get_ancestors",
    title="Get ancestors",
    description="An entity's parent, its parent's parent and so on, nearest first.",
    input_model=HierarchyRequest,
    output_model=Ancestors,
    annotations=READ,
    handler=lambda s, req, _call: get_ancestors(s.gate, s.hierarchy, req),
)


GET_DESCENDANTS = ToolSpec(
    name="get_descendants",
    title="Get descendants",
    description="Every entity under an entity, depth first.",
    input_model=HierarchyRequest,
    output_model=Descendants,
    annotations=READ,
    handler=lambda s, req, _call: get_descendants(s.gate, s.hierarchy, req),
)


GET_SUBTREE = ToolSpec(
    name="get_subtree",
    title="Get subtree",
    description="An entity and every entity under it, with the relations touching them; answers like open_nodes.",
    input_model=HierarchyRequest,
    output_model=Subtree,
    annotations=READ,
    handler=lambda s, req, _call: get_subtree(s.gate, s.hierarchy, req),
)


HIERARCHY_TOOLS = (SET_ENTITY_PARENT, GET_PARENT, GET_CHILDREN, GET_ANCESTORS, GET_DESCENDANTS, GET_SUBTREE)
ARCHIVE_ENTITIES = ToolSpec(
    name="archive_entities",
    title="Archive entities",
    description="Archive the entities matching any criterion given (reads then skip them); dryRun only lists them.",
    input_model=ArchiveRequest,
    output_model=Archived,
    annotations=lean_hints(destructive=True),
    handler=lambda s, req, call: archive_entities(s.gate, req, call.agent),
    admin=True,
)


RESTORE_ENTITIES = ToolSpec(
    name="restore_entities",
    title="Restore entities",
    description="Take archived entities back.",
    input_model=RestoreRequest,
    output_model=Restored,
    annotations=lean_hints(),
    handler=lambda s, req, call: restore_entities(s.gate, req, call.agent),
    admin=True,
)


ARCHIVE_TOOLS = (ARCHIVE_ENTITIES, RESTORE_ENTITIES)
KNOWLEDGE_TOOLS = (*TAG_TOOLS, *HIERARCHY_TOOLS, *ARCHIVE_TOOLS)
