"""Every setting the gate reads from the environment, in one place."""

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from platformdirs import user_data_dir
from pydantic import AfterValidator, AliasChoices, AnyHttpUrl, BeforeValidator, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from write_gate.core.decisions import UnknownLabelPolicy
from write_gate.core.identifiers import is_identifier
from write_gate.core.knowledge import DEFAULT_HIERARCHY_TYPE
from write_gate.core.registry import ConflictPolicy, UndeclaredPolicy
from write_gate.core.spaces import check_space_name, storage_name
from write_gate.serving.logs import LogLevel


class ConfigurationError(ValueError):
    """Settings the server cannot start with: said in one line, before anything starts."""


class BackendKind(StrEnum):
    EMBEDDED = "embedded"
    MEMGRAPH = "memgraph"
    FALKORDB = "falkordb"


class Fsync(StrEnum):
    ALWAYS = "always"
    EVERYSEC = "everysec"
    NO = "no"


def _comma_list(value: object) -> object:
    """`a,b , c` from the environment (a list passes through as it is)."""
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def _lower(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


CommaList = Annotated[list[str], NoDecode, BeforeValidator(_comma_list)]


def _positive_half_lives(value: dict[str, float]) -> dict[str, float]:
    bad = sorted(method for method, days in value.items() if not (days > 0 and days != float("inf")))
    if bad:
        raise ValueError(f"half-lives must be a positive number of days; not for {bad}")
    return value


# `{"llm": 30, "manual": 365}` from the environment (JSON, as pydantic-settings reads any map).
HalfLives = Annotated[dict[str, float], AfterValidator(_positive_half_lives)]


def _identifier(value: str) -> str:
    if not is_identifier(value):
        raise ValueError("must be an identifier (letters, digits and _, not starting with a digit)")
    return value


def _space_names(value: list[str]) -> list[str]:
    for name in value:
        check_space_name(name)
    return list(dict.fromkeys(value))


SpaceNames = Annotated[list[str], NoDecode, BeforeValidator(_comma_list), AfterValidator(_space_names)]


def _default_data_dir() -> Path:
    return Path(user_data_dir("write-gate", appauthor=False))


class Settings(BaseSettings):
    """Configuration; each field's env var is its `WRITE_GATE_` name unless an alias says otherwise."""

    model_config = SettingsConfigDict(env_prefix="WRITE_GATE_", extra="ignore", frozen=True)

    backend: BackendKind = BackendKind.EMBEDDED
    data_dir: Path = Field(default_factory=_default_data_dir)
    graph_name: str = "write_gate"
    # no (the default): the engine writes each write to its append-only file before it answers it and leaves the
    # syncing to the gates, whose recorder syncs the files every second while they grow (engines/acknowledged.py):
    # an acknowledged write survives a crash of the engine or the gate, and a power loss can take the last second.
    # everysec promises that second too, but while its background fsync still runs (a busy disk) redis holds the
    # file's writes back for up to 2 s and answers meanwhile, so a crash of the engine loses them: measured, a loaded
    # CI host lost about 48 acknowledged writes over five kills (tests/e2e/history_chains.py). always never answers
    # before the write is on disk (a power loss takes nothing), at about 0.25 ms a write here.
    embedded_fsync: Fsync = Fsync.NO
    # How long a gate waits for the folder's engine (started by another gate, or loading a large graph)
    # before it gives up with a one-line error.
    embedded_start_timeout_seconds: float = Field(default=60.0, gt=0)

    memgraph_url: str = Field(
        default="bolt://localhost:7687", validation_alias=AliasChoices("MEMGRAPH_URL", "WRITE_GATE_MEMGRAPH_URL")
    )
    memgraph_user: str = Field(default="", validation_alias=AliasChoices("MEMGRAPH_USER", "WRITE_GATE_MEMGRAPH_USER"))
    memgraph_password: SecretStr = Field(
        default=SecretStr(""), validation_alias=AliasChoices("MEMGRAPH_PASSWORD", "WRITE_GATE_MEMGRAPH_PASSWORD")
    )
    memgraph_database: str = Field(
        default="", validation_alias=AliasChoices("MEMGRAPH_DATABASE", "WRITE_GATE_MEMGRAPH_DATABASE")
    )
    falkordb_url: str = Field(
        default="redis://localhost:6379", validation_alias=AliasChoices("FALKORDB_URL", "WRITE_GATE_FALKORDB_URL")
    )

    # How long one statement may wait on the engine before the tool answers BACKEND_UNAVAILABLE.
    query_timeout_seconds: float = Field(default=10.0, gt=0)
    # The time limit the engine holds every read statement to (FalkorDB's per-query TIMEOUT, Memgraph's
    # transaction timeout): past it the tool answers QUERY_TIMEOUT, and the engine stops the read.
    read_timeout_seconds: float = Field(default=10.0, gt=0, allow_inf_nan=False)
    # The time limit a read tool's call is held to as a whole, all its statements and its answer's serialising
    # (surface/call_limit.py): its work is stopped at 95% of it and the call answers QUERY_TIMEOUT. 0: no limit.
    call_limit_seconds: float = Field(default=10.0, ge=0, allow_inf_nan=False)

    # How often a running gate checks the registry's version on the graph (a `schema load` through another
    # gate or the CLI reaches it within this plus one load); 0 turns polling off.
    registry_poll_seconds: float = Field(default=2.0, ge=0)
    # How often a running gate folds what the writes marked into the statistics' counters (core/stat_counts.py), so
    # a get_graph_stats folds only what came since; 0 leaves the folding to get_graph_stats alone.
    stats_fold_seconds: float = Field(default=2.0, ge=0, allow_inf_nan=False)
    # The share of the engine's time the folding may take (serving/paced_backend.py): after a bulk ingest it works
    # off its backlog at this share, not back to back, so the agents' calls are not queued behind it.
    stats_share: float = Field(default=0.5, gt=0, le=1, allow_inf_nan=False)
    # The change feed: how often a gate with subscribers polls the graph for changes (any gate's; its own are
    # noticed at once), 0 for its own only; and how far behind now changes_since answers, so a change that
    # commits late (a long batch, a gate whose clock lags) is never skipped by a poller's cursor.
    change_poll_seconds: float = Field(default=1.0, ge=0)
    change_settle_seconds: float = Field(default=1.0, ge=0, le=3600)

    # The policies' names in any letter case (REJECT, Reject), as environment variables are often written.
    unknown_label_policy: Annotated[UnknownLabelPolicy, BeforeValidator(_lower)] = UnknownLabelPolicy.REMAP
    # Property names an entry does not declare, for entries that name no policy of their own (allow: as before
    # the registry typed names; remap: drift to the declared name; reject: that, and refuse the rest).
    undeclared_property_policy: Annotated[UndeclaredPolicy, BeforeValidator(_lower)] = UndeclaredPolicy.ALLOW
    # What a write does to a value another writer claims, for entries and properties that name no policy.
    conflict_policy: Annotated[ConflictPolicy, BeforeValidator(_lower)] = ConflictPolicy.LAST_WRITER_WINS
    # Half-lives in days by extraction method, for entries with none of their own; empty: no decay.
    decay_half_life_days: HalfLives = Field(default_factory=dict)
    # How long the change history keeps a record (settled and resolved conflicts too); 0 keeps every record.
    history_retention_days: float = Field(default=365.0, ge=0, allow_inf_nan=False)
    # A leading ':' is dropped, as from every label a call names (`:Project` is Project).
    fallback_label: Annotated[str | None, AfterValidator(lambda v: v.lstrip(":") if v is not None else None)] = None
    formula_provider: str = "default"
    # Embeddings (docs/search/semantic.md): off; wordllama's shipped model ("local"); or an OpenAI-compatible
    # endpoint ("openai": the gate POSTs {embeddings_url}/embeddings with embeddings_model).
    embeddings: Literal["off", "local", "openai"] = "off"
    embeddings_url: str | None = None
    embeddings_model: str | None = None
    embeddings_api_key: SecretStr | None = None
    embeddings_timeout_seconds: float = Field(default=10.0, gt=0)

    # Provenance for the memory profile's writes, whose tools carry none: the source defaults to the
    # client's name from the MCP handshake.
    memory_source: str | None = None
    memory_extraction_method: str = "llm"
    memory_reliability: float = Field(default=0.5, ge=0.0, le=1.0)

    # Seed 004's hierarchy: the relationship type from a child to its parent (the registry must register it),
    # and how many steps the hierarchy reads walk (an answer cut there says depth_truncated).
    hierarchy_type: Annotated[str, AfterValidator(_identifier)] = DEFAULT_HIERARCHY_TYPE
    hierarchy_max_depth: int = Field(default=100, ge=1, le=10_000)

    # Agents: tokens (as hashes) and grants. Required for HTTP; over stdio WRITE_GATE_AGENT names the agent
    # (default: the client's name from the handshake), and its grant applies if the file lists it.
    agents_file: Path | None = None
    agent: str | None = None

    # Limits on what one call may carry (INVALID_INPUT with the limit in details beyond them).
    max_request_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    max_properties: int = Field(default=200, ge=1)
    max_string_length: int = Field(default=65_536, ge=1)
    max_list_length: int = Field(default=10_000, ge=1)
    max_batch_items: int = Field(default=10_000, ge=1)
    # A fair share per agent the agents file lists, in each gate process (docs/fleets/limits.md; a grant may set its
    # own): calls in flight at once (one more waits up to call_queue_seconds for a slot, then is RATE_LIMITED), and
    # read cost per window (a statement and each row the engine answers count one; writes are never charged).
    max_calls_in_flight: int = Field(default=16, ge=1)
    call_queue_seconds: float = Field(default=5.0, ge=0, allow_inf_nan=False)
    # 20,000 a 10 s window: 2,000 rows a second, read_graph's 1,000 entities about once a second. At 200,000 a reader
    # looping heavy reads was never held back, and another agent's write_node p50 doubled (BENCHMARKS.md, crowd).
    read_budget: int = Field(default=20_000, ge=1)
    read_budget_window_seconds: float = Field(default=10.0, gt=0, allow_inf_nan=False)

    # Safe retries (docs/fleets/safe-retries.md): how long a write's idempotency_key answers its first outcome;
    # how long a repeat waits for a call still running with its key; after how long a claim whose gate never
    # stored an outcome counts as stale (its repeats are told IDEMPOTENCY_OUTCOME_UNKNOWN, never run again).
    idempotency_retention_hours: float = Field(default=24.0, gt=0, allow_inf_nan=False)
    idempotency_wait_seconds: float = Field(default=10.0, ge=0, allow_inf_nan=False)
    idempotency_stale_seconds: float = Field(default=600.0, gt=0, allow_inf_nan=False)
    # Rejected write and admin calls kept for replay (list_quarantine, replay_quarantine); beyond this many the
    # oldest are dropped; 0 keeps none.
    quarantine_max_entries: int = Field(default=10_000, ge=0)

    # Which tools the server offers at all (names, groups read/write/admin/typed, typed:<Label>, -exclusions);
    # an agent's grant narrows it further. See tool_selection.py.
    tools: str = "*"
    # Which toolsets every agent is shown beside the profile's defaults (core.toolsets; `all`: every one), and the
    # discovery mode, where an agent also sees list_toolsets and enable_toolset (docs/tools/toolsets.md).
    toolsets: str = ""
    dynamic_toolsets: bool = False

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    # Host and Origin headers HTTP accepts besides the local names (DNS-rebinding protection): host names,
    # `name:port`, or `name:*`; origins like `https://app.example.com`. A name without a port allows any port.
    allowed_hosts: CommaList = Field(default_factory=list)
    allowed_origins: CommaList = Field(default_factory=list)
    # The address agents use to reach the gate (behind a proxy: https://gate.example.com); named in the
    # OAuth protected-resource metadata. Default: http://HOST:PORT (the first allowed host when bound to all).
    public_url: AnyHttpUrl | None = None
    # An HTTP session with no request in flight for this long is closed; its id then answers 404.
    session_idle_seconds: float = Field(default=1800.0, gt=0)
    max_sessions: int = Field(default=10_000, ge=1)
    # How a call's POST is answered: `sse`, an event stream (the call's progress and log messages on it, resumable
    # with Last-Event-ID); `json`, one application/json body (faster; those notifications go to the session's
    # GET stream instead, docs/fleets/running.md).
    http_response: Literal["sse", "json"] = "sse"
    # Each HTTP request served on its own, with no session (`serve --stateless`): any replica answers any call, so
    # replicas can sit behind a plain load balancer; there are no subscriptions, no notifications outside a call,
    # no resumption and no per-session state (docs/fleets/running.md).
    stateless: bool = False

    # Monitoring (docs/observability.md): Prometheus metrics at /metrics over HTTP (off: no counting at all); over
    # stdio, a port on 127.0.0.1 to serve them on beside the pipe (none: no metrics). Traces follow OpenTelemetry's
    # own variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_EXPORTER).
    metrics: bool = True
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    # The web console at /console over HTTP (docs/console.md); `write-gate console` serves it on its own.
    console: bool = True
    console_port: int = Field(default=8765, ge=1, le=65535)
    # How long a console login lasts without a request (its session cookie is then refused).
    console_session_idle_seconds: float = Field(default=8 * 3600.0, gt=0)
    # How often an open console page asks for new changes (the history page's live list); 0: it never asks.
    console_poll_seconds: float = Field(default=2.0, ge=0)

    # Spaces: isolated graphs in the one engine (one graph each on FalkorDB, one database each on Memgraph),
    # chosen per agent by its grant; empty: no spaces, the one graph as before. The default space is today's
    # graph (WRITE_GATE_GRAPH_NAME / MEMGRAPH_DATABASE); another is `<that name>__<space>`.
    spaces: SpaceNames = Field(default_factory=list)
    default_space: Annotated[str, AfterValidator(check_space_name)] = "main"
    # One registry for every space, kept in the default space's graph (true), or one per space (false).
    shared_registry: bool = True

    # Every logger's level (stderr, one JSON object per line); `serve -v` means DEBUG.
    log_level: Annotated[LogLevel, BeforeValidator(lambda v: v.upper() if isinstance(v, str) else v)] = "INFO"

    @model_validator(mode="after")
    def _default_space_served(self) -> "Settings":
        if self.spaces and self.default_space not in self.spaces:
            raise ValueError("WRITE_GATE_DEFAULT_SPACE must be one of WRITE_GATE_SPACES")
        return self

    def for_space(self, space: str) -> "Settings":
        """These settings aimed at one space's graph (FalkorDB) or database (Memgraph); the default space's are
        these very names."""
        if space == self.default_space:
            return self
        return self.model_copy(
            update={
                "graph_name": storage_name(self.graph_name, space, self.default_space),
                "memgraph_database": storage_name(self.memgraph_database or "memgraph", space, self.default_space),
            }
        )

    def registry_space(self, space: str) -> str:
        """The space whose graph holds the registry this space's writes are checked against."""
        return self.default_space if self.shared_registry else space
