"""Saved searches (memory-mcp's): save, update, list, delete, and run one.

A saved search's arguments are checked by the search's own request model when saved, when updated and again
when run (the models may have changed in between: a stored search that no longer passes is refused, not run).
`basic` runs search_nodes, as the profile's search_nodes tool takes it (so with neighbours in the gate
profile); `ranked` and `boolean` run search_nodes_ranked (its query syntax is boolean; a `boolean` search's words
side by side are all required, as boolean_search reads them); `fuzzy` runs it with `fuzzy: true`. A run counts
itself on the node (`useCount`, `lastExecuted`).
"""

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

from write_gate.access.agents import Agent
from write_gate.core.clock import utc_now
from write_gate.core.cypher import saved_searches as cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.identifiers import normalize_identifier
from write_gate.core.model import ErrorCode, GateRejection, validation_problems
from write_gate.services.gate import MAX_ATTEMPTS, Gate, backoff, contention, new_id, run_write
from write_gate.services.reads import Entity, GraphResult, Relation, SearchNodesRequest, Text
from write_gate.services.search import RankedHit, RankedResult, RankedSearchRequest

MAX_NAME_LENGTH = 200
SearchType = Literal["basic", "ranked", "boolean", "fuzzy"]
Name = Annotated[Text, Field(min_length=1, max_length=MAX_NAME_LENGTH)]
# Optional fields, advertised as their type only (a null is "not given").
Tags = list[Text] | SkipJsonSchema[None]
Importance = Annotated[float, Field(ge=0, le=10)] | SkipJsonSchema[None]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


# The search's fields; in an update, the ones given replace the saved ones (a null removes one). (No docstring:
# it would be advertised.)
class SearchUpdates(_Request):
    query: Text | SkipJsonSchema[None] = None
    searchType: SearchType | SkipJsonSchema[None] = None  # noqa: N815 - memory-mcp's argument names
    tags: Tags = None
    minImportance: Importance = None  # noqa: N815
    maxImportance: Importance = None  # noqa: N815
    description: Text | SkipJsonSchema[None] = None
    labels: Tags = None
    limit: int | SkipJsonSchema[None] = None


class SaveSearchRequest(_Request):
    name: Name
    query: Text
    searchType: Annotated[  # noqa: N815
        SearchType, Field(description="basic: search_nodes; ranked, boolean: search_nodes_ranked; fuzzy: with typos.")
    ] = "basic"
    tags: Tags = None
    minImportance: Importance = None  # noqa: N815
    maxImportance: Importance = None  # noqa: N815
    description: Text | SkipJsonSchema[None] = None
    labels: Tags = None
    limit: int | SkipJsonSchema[None] = None


class UpdateSavedSearchRequest(_Request):
    name: Name
    updates: Annotated[SearchUpdates, Field(description="save_search's fields to change; a null removes one.")]


class SavedSearchName(_Request):
    name: Name


def _absent(v: Any) -> bool:
    return v is None


# A field the search does not have is left out of the answer, not shown as null.
Absent = Field(default=None, exclude_if=_absent)


# Every answer has each field but the optional ones; only `name` is required, so the output schema stays short.
class SavedSearch(BaseModel):
    name: str
    query: str = ""
    searchType: str = "basic"  # noqa: N815
    tags: list[str] | None = Absent
    minImportance: float | None = Absent  # noqa: N815
    maxImportance: float | None = Absent  # noqa: N815
    description: str | None = Absent
    labels: list[str] | None = Absent
    limit: int | None = Absent
    created_by: str = ""
    created_at: str = ""
    updated_by: str | None = Absent
    updated_at: str | None = Absent
    useCount: int = 0  # noqa: N815
    lastExecuted: str | None = Absent  # noqa: N815


class SavedSearches(BaseModel):
    searches: list[SavedSearch]


class SavedSearchDeleted(BaseModel):
    deleted: str


class SearchRun(BaseModel):
    """The saved search, then its search's answer as that search gives it: basic's entities, or ranked's results
    (and searched_by)."""

    savedSearch: SavedSearch  # noqa: N815
    entities: Annotated[list[Entity] | None, Field(exclude_if=_absent)] = None
    results: Annotated[list[RankedHit] | None, Field(exclude_if=_absent)] = None
    relations: list[Relation]
    next_cursor: str | None = None
    truncated: list[str] = Field(default_factory=list)
    searched_by: Annotated[Literal["index", "scan"] | None, Field(exclude_if=_absent)] = None


# --- pure: a saved search's arguments as its search takes them ------------------------------------------------

# The saved fields a search request takes, under the search's names (K's filters: tags and importance).
_PASSED = ("query", "labels", "limit", "tags", "minImportance", "maxImportance")


def search_request(
    fields: Mapping[str, Any], *, stored: bool = False, basic: type[SearchNodesRequest] = SearchNodesRequest
) -> SearchNodesRequest | RankedSearchRequest:
    """The request its search type runs, checked by that search's model (`basic`: the profile's search_nodes
    model, whose defaults, neighbours or not, the run then has); INVALID_INPUT (its problems, no values) when it
    does not pass."""
    args = {name: fields[name] for name in _PASSED if fields.get(name) is not None}
    search_type = fields.get("searchType") or "basic"
    for label in args.get("labels") or []:  # names, as the search will read them (a non-string: the model's)
        if isinstance(label, str):
            normalize_identifier(label, "labels")
    try:
        if search_type == "basic":
            return basic.model_validate(args)
        return RankedSearchRequest.model_validate({**args, "fuzzy": search_type == "fuzzy"})
    except ValidationError as exc:
        what = "the saved search no longer passes its search's checks" if stored else "the search does not pass"
        raise GateRejection(
            ErrorCode.INVALID_INPUT,
            f"{what} ({'search_nodes' if search_type == 'basic' else 'search_nodes_ranked'})",
            problems=validation_problems(exc),
        ) from exc


def view(props: Mapping[str, Any]) -> SavedSearch:
    return SavedSearch.model_validate({k: v for k, v in props.items() if not k.startswith("_")})


def _not_saved() -> GateRejection:
    return GateRejection(
        ErrorCode.INVALID_INPUT, "no search is saved under this name", field="name", reason="not_saved"
    )


# --- the tools ----------------------------------------------------------------------------------------------------


async def _read_one(gate: Gate, name: str) -> dict[str, Any]:
    rows = await gate.reader.read(Statement(cypher.READ_ONE.text, {"name": name}))
    if not rows:
        raise _not_saved()
    return rows[0]["search"]


async def save_search(gate: Gate, request: SaveSearchRequest, agent: Agent) -> SavedSearch:
    fields = request.model_dump(include=set(cypher.FIELDS), exclude_none=True)
    search_request(fields)
    save_id = new_id()
    params = {"name": request.name, "fields": fields, "agent": agent.id, "at": utc_now(), "save_id": save_id}
    [row] = await run_write(gate.backend, Statement(cypher.SAVE.text, params))
    if not row["created"]:
        raise GateRejection(
            ErrorCode.SAVED_SEARCH_EXISTS,
            "a search is saved under this name already: update_saved_search changes it",
            field="name",
        )
    return view(row["search"])


async def update_saved_search(gate: Gate, request: UpdateSavedSearchRequest, agent: Agent) -> SavedSearch:
    """Read, merge the updates, check, write guarded by the revision read; again if another update came first."""
    given = request.updates.model_dump(include=request.updates.model_fields_set)
    if given.get("query", "") is None or given.get("searchType", "") is None:
        raise GateRejection(ErrorCode.INVALID_INPUT, "query and searchType cannot be removed", field="updates")
    for attempt in range(MAX_ATTEMPTS):
        await backoff(attempt)
        current = await _read_one(gate, request.name)
        merged = {name: current.get(name) for name in cypher.FIELDS} | given
        search_request(merged)
        params = {"name": request.name, "rev": current.get(cypher.REVISION), "agent": agent.id, "at": utc_now()}
        rows = await run_write(gate.backend, Statement(cypher.UPDATE.text, params | merged))
        if rows:
            return view(rows[0]["search"])
    raise contention()


async def list_saved_searches(gate: Gate) -> SavedSearches:
    rows = await gate.reader.read(cypher.READ_ALL)
    return SavedSearches(searches=[view(row["search"]) for row in rows])


async def delete_saved_search(gate: Gate, request: SavedSearchName) -> SavedSearchDeleted:
    rows = await run_write(gate.backend, Statement(cypher.DELETE.text, {"name": request.name}))
    if not rows:
        raise _not_saved()
    return SavedSearchDeleted(deleted=request.name)


async def execute_saved_search(
    gate: Gate, request: SavedSearchName, basic: type[SearchNodesRequest] = SearchNodesRequest
) -> SearchRun:
    """Run it as saved, then count the run (a run whose search is refused is not counted). A basic search runs
    as the profile's search_nodes (`basic`, its model) runs those arguments: the same request, the same read."""
    saved = await _read_one(gate, request.name)
    search = search_request(saved, stored=True, basic=basic)
    answer: GraphResult | RankedResult
    if isinstance(search, SearchNodesRequest):
        answer = await gate.reader.search_nodes(search)
    else:  # a boolean search's words side by side are all required, as boolean_search reads them
        boolean = saved.get("searchType") == "boolean"  # as boolean_search reads it
        answer = await gate.searcher.search(search, words="all" if boolean else "any", starts=boolean)
    rows = await run_write(gate.backend, Statement(cypher.COUNT_RUN.text, {"name": request.name, "at": utc_now()}))
    if not rows:  # deleted while it ran
        raise _not_saved()
    shown: dict[str, Any] = (
        {"results": answer.results, "searched_by": answer.searched_by}
        if isinstance(answer, RankedResult)
        else {"entities": answer.entities}
    )
    return SearchRun(
        savedSearch=view(rows[0]["search"]),
        relations=answer.relations,
        next_cursor=answer.next_cursor,
        truncated=answer.truncated,
        **shown,
    )
