"""Agent identity and grants: who is writing, and what they may see and write.

Over streamable HTTP an agent is known by its bearer token, checked against an agents file that
stores only the tokens' SHA-256 hashes; over stdio by `WRITE_GATE_AGENT` (default: the client's name
from the MCP handshake). Agents never name themselves in a tool call: `written_by` is stamped by the gate.
A running gate sees changes to the agents file at the next request (LiveAgents).
"""

import hashlib
import hmac
import json
import logging
import os
import secrets
import tempfile
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from write_gate.core.model import ErrorCode, GateRejection
from write_gate.core.spaces import ANY_SPACE, check_space_name, choose_space
from write_gate.core.toolsets import TOOLSETS

logger = logging.getLogger(__name__)


class Grant(BaseModel):
    """Which tools an agent may use (names, the groups read / write / admin / *, or toolsets, which it is then
    also shown: core.toolsets), and which labels and relationship types it may write ("*" for any)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tools: tuple[str, ...] = ("*",)
    labels: tuple[str, ...] = ("*",)
    relationship_types: tuple[str, ...] = ("*",)
    # Limits per agent (docs/fleets/limits.md); none by default. Write and admin calls a minute, counted in the
    # graph for every gate on it; items in one list argument of a write or admin call (WRITE_GATE_MAX_BATCH_ITEMS too).
    max_writes_per_minute: int | None = Field(default=None, ge=1)
    max_batch_items: int | None = Field(default=None, ge=1)
    # Its fair share in each gate process (core.fair_share), when not the server's WRITE_GATE_MAX_CALLS_IN_FLIGHT
    # and WRITE_GATE_READ_BUDGET: calls in flight at once, and read cost per window.
    max_calls_in_flight: int | None = Field(default=None, ge=1)
    read_budget: int | None = Field(default=None, ge=1)
    # The spaces it may use when the server serves several (WRITE_GATE_SPACES), its default first; empty: the
    # server's default space only, "*": every space. A server without spaces ignores it.
    spaces: tuple[str, ...] = ()

    @field_validator("spaces")
    @classmethod
    def _space_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(name if name == ANY_SPACE else check_space_name(name) for name in value)

    def space_for(self, requested: object | None, served: tuple[str, ...], default: str) -> str:
        """The space a call of this agent works in (SPACE_NOT_GRANTED for one it may not use)."""
        return choose_space(self.spaces, served, default, requested)

    def allows_tool(self, tool: str, group: str, toolset: str | None = None) -> bool:
        """`group`: the tool's (ToolSpec.group: read, write or admin); `toolset`: the set it is listed in."""
        return "*" in self.tools or tool in self.tools or group in self.tools or toolset in self.tools

    def named_toolsets(self) -> frozenset[str]:
        """The toolsets the grant names: listed to the agent beside the server's."""
        return frozenset(self.tools) & TOOLSETS.keys()

    def check_labels(self, labels: Iterable[str]) -> None:
        denied = sorted({label for label in labels if "*" not in self.labels and label not in self.labels})
        if denied:
            raise GateRejection(
                ErrorCode.PERMISSION_DENIED,
                f"this agent may not write :{', :'.join(denied)}",
                labels=denied,
                granted=list(self.labels),
            )

    def writable_types(self) -> list[str] | None:
        """The relationship types this agent may write, or None for any."""
        return None if "*" in self.relationship_types else list(self.relationship_types)

    def check_types(self, types: Iterable[str]) -> None:
        denied = sorted({t for t in types if "*" not in self.relationship_types and t not in self.relationship_types})
        if denied:
            raise GateRejection(
                ErrorCode.PERMISSION_DENIED,
                f"this agent may not write {', '.join(denied)}",
                relationship_types=denied,
                granted=list(self.relationship_types),
            )


FULL = Grant()
READER = Grant(tools=("read",), labels=(), relationship_types=())
PRESETS = {"full": FULL, "writer": Grant(tools=("read", "write")), "reader": READER}


@dataclass(frozen=True)
class Agent:
    id: str
    grant: Grant = field(default=FULL)


class AgentRecord(Grant):
    token_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _record(record: AgentRecord) -> dict:
    """As saved: a grant without spaces says nothing of them (files stay as they were before spaces), and a limit
    the agent does not have is left out (TOML has no null)."""
    return record.model_dump(mode="json", exclude=None if record.spaces else {"spaces"}, exclude_none=True)


class AgentsFileError(Exception):
    """The agents file cannot be read or does not hold valid agents; the message says where (never a value)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")


def _why(exc: Exception, where: tuple[str, ...] = ()) -> str:
    if isinstance(exc, ValidationError):  # its text would quote the values; say where and what instead
        return "; ".join(
            f"{'.'.join(map(str, (*where, *e['loc'])))}: {e['msg']}" for e in exc.errors(include_input=False)
        )
    return str(exc)


class AgentsFile:
    """`[agents.<id>]` tables (TOML) or an `{"agents": {id: {...}}}` object (JSON)."""

    def __init__(self, path: Path, agents: dict[str, AgentRecord]) -> None:
        self.path = path
        self.agents = agents
        self._indexed()

    def _indexed(self) -> None:
        """The look-ups' indexes, rebuilt whenever `agents` changes. Every HTTP request looks its caller up
        (by token, then by id): each agent's Agent is built once, and a token once verified is not hashed again."""
        self._by_hash = {record.token_sha256: agent_id for agent_id, record in self.agents.items()}
        self._built: dict[str, Agent] = {}
        self._verified: dict[str, str] = {}  # token -> agent id; only verified tokens, so one per agent at most

    @classmethod
    def load(cls, path: Path) -> "AgentsFile":
        """The file's agents (none if it does not exist); AgentsFileError if it cannot be used."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(path, {})
        except UnicodeDecodeError as exc:
            raise AgentsFileError(path, str(exc)) from None
        return cls.parse(path, text)

    @classmethod
    def parse(cls, path: Path, text: str) -> "AgentsFile":
        try:
            data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
            listed = data.get("agents", {}) if isinstance(data, dict) else None
            if not isinstance(listed, dict):
                raise ValueError("expected an `agents` table of agent names")
        except ValueError as exc:  # JSON and TOML errors are ValueErrors
            raise AgentsFileError(path, str(exc)) from None
        agents = {}
        for agent_id, record in listed.items():
            try:
                agents[agent_id] = AgentRecord.model_validate(record)
            except ValidationError as exc:
                raise AgentsFileError(path, _why(exc, ("agents", agent_id))) from None
        return cls(path, agents)

    def save(self) -> None:
        """Replace the file in one step, so a running gate never reads half of it."""
        data = {"agents": {agent_id: _record(r) for agent_id, r in sorted(self.agents.items())}}
        text = json.dumps(data, indent=2) + "\n" if self.path.suffix == ".json" else tomli_w.dumps(data)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def add(self, agent_id: str, grant: Grant) -> str:
        """Create (or re-key) an agent; return its new token, which is stored only as a hash."""
        token = "wg_" + secrets.token_urlsafe(32)
        self.agents[agent_id] = AgentRecord(token_sha256=hash_token(token), **grant.model_dump())
        self._indexed()
        return token

    def remove(self, agent_id: str) -> bool:
        """Forget an agent (and so its token); False if the file did not list it."""
        if self.agents.pop(agent_id, None) is None:
            return False
        self._indexed()
        return True

    def by_token(self, token: str) -> Agent | None:
        known_id = self._verified.get(token)
        if known_id is not None:
            return self.by_id(known_id)
        digest = hash_token(token)
        for known, agent_id in self._by_hash.items():
            if hmac.compare_digest(known, digest):
                self._verified[token] = agent_id
                return self.by_id(agent_id)
        return None

    def by_id(self, agent_id: str) -> Agent | None:
        built = self._built.get(agent_id)
        if built is None:
            record = self.agents.get(agent_id)
            if record is None:
                return None
            built = self._built[agent_id] = Agent(agent_id, Grant(**record.model_dump(exclude={"token_sha256"})))
        return built


class LiveAgents:
    """The agents file as it is now, so a new token, a removed agent or a changed grant applies to the next
    request without a restart. Each look-up stats the file and reads it again when its inode, size or
    modification time changed; a file modified within the last two seconds is read again at every look-up
    until it is older, since a second edit within one timestamp tick would not change the stat (git calls
    this "racy"). A file that fails to parse leaves the last good agents in force, and the log says why;
    at start there is no last good one, so it raises AgentsFileError."""

    RACY_NS = 2_000_000_000

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int, int] | None = None
        self._text: str | None = None
        self._racy = False
        self._agents = AgentsFile(path, {})
        self._reload(strict=True)

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def _reload(self, strict: bool = False) -> None:
        stamp = self._stat()  # taken before the read: a change during the read is seen at the next look-up
        if stamp == self._stamp and not self._racy:
            return
        self._stamp = stamp
        self._racy = stamp is not None and time.time_ns() - stamp[2] < self.RACY_NS
        try:
            text = self.path.read_text(encoding="utf-8") if stamp is not None else ""
            if text == self._text:
                return  # unchanged, or the same broken text already reported
            self._text = text
            agents = AgentsFile.parse(self.path, text) if stamp is not None else AgentsFile(self.path, {})
        except (AgentsFileError, OSError, UnicodeDecodeError) as exc:
            if strict:
                raise exc if isinstance(exc, AgentsFileError) else AgentsFileError(self.path, str(exc)) from None
            logger.error(
                "agents file not reloaded, the last good one stays in force: %s",
                exc,
                extra={"event": "agents_file_invalid", "path": str(self.path)},
            )
            return
        self._agents = agents
        if not strict:
            logger.info(
                "agents file reloaded",
                extra={"event": "agents_file_reloaded", "path": str(self.path), "agents": len(agents.agents)},
            )

    def current(self) -> AgentsFile:
        self._reload()
        return self._agents

    def by_token(self, token: str) -> Agent | None:
        return self.current().by_token(token)

    def by_id(self, agent_id: str) -> Agent | None:
        return self.current().by_id(agent_id)
