"""Seed 004's knowledge tools (memory-mcp's names and arguments), offered in both profiles: tags and
importance, the hierarchy, the archive. Their writes take provenance from the call's `WriterContext`."""

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
from write_gate.surface.tool_spec import ToolSpec, lean_hints

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

KNOWLEDGE_TOOLS = TAG_TOOLS
