"""The shapes at the gate's edges: requests in, `Written`/`Rejected` out, and the error codes."""

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from write_gate.core.claims import ValueProvenance

# A merge-key value: a scalar, never a list or map (identity must be comparable on both engines).
KeyValue = StrictStr | StrictInt | StrictFloat | StrictBool


def _not_a_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a number, not true or false")
    return value


# A number a call gives: a JSON number, or its text ("0.8", as some clients send every argument); never a boolean,
# which pydantic reads as 1.0 or 0.0 (a reliability of `true` was written as full confidence). The same schema.
Number = Annotated[float, BeforeValidator(_not_a_boolean)]
# A weight in [0, 1], so: the bounds before the validator, where JSON Schema's minimum and maximum say them.
Weight = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False), BeforeValidator(_not_a_boolean)]


class ErrorCode(StrEnum):
    SCHEMA_UNKNOWN_LABEL = "SCHEMA_UNKNOWN_LABEL"
    SCHEMA_MISSING_REQUIRED_PROPERTY = "SCHEMA_MISSING_REQUIRED_PROPERTY"
    SCHEMA_PROTECTED_FIELD = "SCHEMA_PROTECTED_FIELD"
    SCHEMA_SOURCE_UNAVAILABLE = "SCHEMA_SOURCE_UNAVAILABLE"
    SCHEMA_TYPE_MISMATCH = "SCHEMA_TYPE_MISMATCH"
    # A property name the entry does not declare, under the `reject` policy for undeclared properties.
    SCHEMA_UNKNOWN_PROPERTY = "SCHEMA_UNKNOWN_PROPERTY"
    ENDPOINT_NOT_FOUND = "ENDPOINT_NOT_FOUND"
    INVALID_EXTRACTION_METHOD = "INVALID_EXTRACTION_METHOD"
    FORMULA_INVALID_OUTPUT = "FORMULA_INVALID_OUTPUT"
    INVALID_INPUT = "INVALID_INPUT"
    BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"
    # The engine stopped a read at WRITE_GATE_READ_TIMEOUT_SECONDS; details say the limit and how to narrow it.
    QUERY_TIMEOUT = "QUERY_TIMEOUT"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    # The memory profile's add_observations names an entity that does not exist (as the official server errs).
    ENTITY_NOT_FOUND = "ENTITY_NOT_FOUND"
    # MemoryMesh's add_nodes / add_edges name a node or an edge that exists (it refuses a duplicate; services.mesh).
    ALREADY_EXISTS = "ALREADY_EXISTS"
    # MemoryMesh's update_edges names an edge that does not exist.
    RELATION_NOT_FOUND = "RELATION_NOT_FOUND"
    # A write would change a value another writer claims, under a `reject` policy (core.conflicts).
    CONFLICT = "CONFLICT"
    # set_entity_parent: the parent is the entity itself or one of its descendants.
    HIERARCHY_CYCLE = "HIERARCHY_CYCLE"
    # save_search names a search that is saved already (update_saved_search changes one).
    SAVED_SEARCH_EXISTS = "SAVED_SEARCH_EXISTS"
    # A restore (`write-gate restore`, import_graph's backup format) into a graph that holds nodes already.
    RESTORE_TARGET_NOT_EMPTY = "RESTORE_TARGET_NOT_EMPTY"
    # import_graph's `fail` strategy met entities that exist: nothing was written.
    IMPORT_CONFLICT = "IMPORT_CONFLICT"
    # An agent over its grant's write rate; details say retry_after_seconds and the limit.
    RATE_LIMITED = "RATE_LIMITED"
    # The call's idempotency_key is held by a call still running; details say retry_after_seconds.
    IDEMPOTENCY_IN_PROGRESS = "IDEMPOTENCY_IN_PROGRESS"
    # The idempotency_key was used before for other arguments (or another tool).
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    # The gate that claimed the idempotency_key stopped before storing an outcome: the write may have landed.
    IDEMPOTENCY_OUTCOME_UNKNOWN = "IDEMPOTENCY_OUTCOME_UNKNOWN"
    # A call names a space its agent's grant does not list (or the server does not serve): core.spaces.
    SPACE_NOT_GRANTED = "SPACE_NOT_GRANTED"
    # A defect in the gate itself, reported instead of crashing; tests assert it never appears.
    INTERNAL_ERROR = "INTERNAL_ERROR"


def validation_problems(exc: ValidationError, whole: str = "") -> list[dict[str, str]]:
    """Field paths and reasons only: the offending values are never echoed back (or logged)."""
    return [{"field": ".".join(map(str, e["loc"])) or whole, "problem": e["msg"]} for e in exc.errors()]


def describe_problems(exc: ValidationError, whole: str = "") -> str:
    return "; ".join(f"{p['field']}: {p['problem']}" for p in validation_problems(exc, whole))


class Rejected(BaseModel):
    status: Literal["rejected"] = "rejected"
    error_code: ErrorCode
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class GateRejection(Exception):
    """Raised anywhere in a decision; the server turns it into an `isError` result."""

    def __init__(self, code: ErrorCode, message: str, **details: Any) -> None:
        super().__init__(message)
        self.rejected = Rejected(error_code=code, message=message, details=details)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class WriteNodeRequest(_Request):
    label: Annotated[
        str, Field(description="Target node label, e.g. 'Person'. Unknown labels are remapped or rejected.")
    ]
    merge_keys: Annotated[
        dict[str, KeyValue], Field(description="Identity for MERGE: the entry's merge keys, scalar values only.")
    ]
    properties: Annotated[
        dict[str, Any],
        Field(
            default_factory=dict,
            description="Data to set: scalars or homogeneous lists of scalars. No gate-computed fields.",
        ),
    ]
    source: Annotated[str, Field(min_length=1, description="Provenance: where the claim came from.")]
    extraction_method: Annotated[
        str, Field(description="How the claim was obtained; one of the formula provider's methods.")
    ]
    reliability: Annotated[
        Number, Field(default=0.5, description="Agent's estimate of the source's reliability; clamped to [0, 1].")
    ]


EndpointPolicy = Literal["fail_if_missing", "merge_endpoints"]


class WriteRelationshipRequest(_Request):
    type: Annotated[str, Field(description="Registered relationship type, e.g. 'WORKS_FOR'.")]
    from_label: str
    from_keys: dict[str, KeyValue]
    to_label: str
    to_keys: dict[str, KeyValue]
    properties: dict[str, Any] = Field(default_factory=dict)
    source: Annotated[str, Field(min_length=1)]
    extraction_method: str
    reliability: Number = 0.5
    endpoint_policy: Annotated[
        EndpointPolicy,
        Field(
            description="fail_if_missing: reject when an endpoint is absent. "
            "merge_endpoints: create absent endpoints by their keys, flagged _stub=true."
        ),
    ] = "fail_if_missing"
    weight: Annotated[
        Weight | None,
        Field(
            description="Strength of the relationship in [0, 1]; 1.0 when new and not given. "
            "For an existing relationship the new weight is averaged with the old one.",
        ),
    ] = None


class ConflictMet(BaseModel):
    """A conflict a write met (core/conflicts.py): the value another writer claims, and what the policy did."""

    conflict_id: str  # resolve_conflict takes it while the conflict is open; list_conflicts shows it
    property: str
    policy: str
    outcome: Literal["overwritten", "kept", "open"]
    current_value: Any  # the value before this write
    current: ValueProvenance  # its claim


class MeetsConflicts(BaseModel):
    """A write's answer lists `conflicts` only when it met some, so a write that met none answers as before."""

    # Values another writer claims that this write met, and what each one's conflict policy did.
    conflicts: list[ConflictMet] = Field(default_factory=list, exclude_if=lambda conflicts: not conflicts)


class NodeWritten(MeetsConflicts):
    status: Literal["written"] = "written"
    label: str
    merge_keys: dict[str, Any]
    confidence: float
    write_gate_version: str
    remapped_from: str | None = None
    # Property names remapped to the ones the registry declares ("e_mail→email"); kept on the node too. Absent when
    # none were, so an answer without remaps is seed 003's object exactly.
    property_remaps: list[str] = Field(default_factory=list, exclude_if=lambda remaps: not remaps)


class RelationshipWritten(MeetsConflicts):
    status: Literal["written"] = "written"
    type: str
    from_label: str
    from_keys: dict[str, Any]
    to_label: str
    to_keys: dict[str, Any]
    confidence: float
    write_gate_version: str
    remapped_from: str | None = None
    # As NodeWritten's; an endpoint's key remapped reads `from_keys.Name→name`.
    property_remaps: list[str] = Field(default_factory=list, exclude_if=lambda remaps: not remaps)
    # Endpoints that are stubs (created by merge_endpoints and not yet written themselves); absent when none is.
    stub_endpoints: list[Literal["from", "to"]] = Field(default_factory=list, exclude_if=lambda stubs: not stubs)
    weight: float = 1.0


class SchemaRefreshed(BaseModel):
    status: Literal["refreshed"] = "refreshed"
    loaded: int
    node_labels: int
    relationship_types: int
    write_gate_version: str
