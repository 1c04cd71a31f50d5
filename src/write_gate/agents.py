"""Agent identity and grants: who is writing, and what they may see and write.

Over streamable HTTP an agent is known by its bearer token, checked against an agents file that
stores only the tokens' SHA-256 hashes; over stdio by `WRITE_GATE_AGENT` (default: the client's name
from the MCP handshake). Agents never name themselves in a tool call: `written_by` is stamped by the gate.
"""

import hashlib
import hmac
import json
import secrets
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w
from mcp.server.auth.provider import AccessToken
from pydantic import BaseModel, ConfigDict, Field

from write_gate.model import ErrorCode, GateRejection

READ_TOOLS = frozenset({"search_nodes", "open_nodes", "read_graph", "get_schema"})
ADMIN_TOOLS = frozenset({"refresh_schema_cache"})
GROUPS = ("read", "write", "admin", "*")


def tool_group(tool: str) -> str:
    return "read" if tool in READ_TOOLS else "admin" if tool in ADMIN_TOOLS else "write"


class Grant(BaseModel):
    """Which tools an agent sees (names, or the groups read / write / admin / *), and which labels and
    relationship types it may write ("*" for any)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tools: tuple[str, ...] = ("*",)
    labels: tuple[str, ...] = ("*",)
    relationship_types: tuple[str, ...] = ("*",)

    def allows_tool(self, tool: str) -> bool:
        return "*" in self.tools or tool in self.tools or tool_group(tool) in self.tools

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


class AgentsFile:
    """`[agents.<id>]` tables (TOML) or an `{"agents": {id: {...}}}` object (JSON)."""

    def __init__(self, path: Path, agents: dict[str, AgentRecord]) -> None:
        self.path = path
        self.agents = agents
        self._by_hash = {record.token_sha256: agent_id for agent_id, record in agents.items()}

    @classmethod
    def load(cls, path: Path) -> "AgentsFile":
        if not path.exists():
            return cls(path, {})
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
        agents = {agent_id: AgentRecord.model_validate(record) for agent_id, record in data.get("agents", {}).items()}
        return cls(path, agents)

    def save(self) -> None:
        data = {"agents": {agent_id: r.model_dump(mode="json") for agent_id, r in sorted(self.agents.items())}}
        text = json.dumps(data, indent=2) + "\n" if self.path.suffix == ".json" else tomli_w.dumps(data)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(text, encoding="utf-8")
        self.path.chmod(0o600)

    def add(self, agent_id: str, grant: Grant) -> str:
        """Create (or re-key) an agent; return its new token, which is stored only as a hash."""
        token = "wg_" + secrets.token_urlsafe(32)
        self.agents[agent_id] = AgentRecord(token_sha256=hash_token(token), **grant.model_dump())
        self._by_hash = {record.token_sha256: a for a, record in self.agents.items()}
        return token

    def by_token(self, token: str) -> Agent | None:
        digest = hash_token(token)
        for known, agent_id in self._by_hash.items():
            if hmac.compare_digest(known, digest):
                return Agent(agent_id, Grant(**self.agents[agent_id].model_dump(exclude={"token_sha256"})))
        return None

    def by_id(self, agent_id: str) -> Agent | None:
        record = self.agents.get(agent_id)
        return Agent(agent_id, Grant(**record.model_dump(exclude={"token_sha256"}))) if record else None


class AgentsTokenVerifier:
    """The MCP SDK's token-verifier hook: a bearer token is an agent of the agents file, or nobody (401)."""

    def __init__(self, agents: AgentsFile) -> None:
        self._agents = agents

    async def verify_token(self, token: str) -> AccessToken | None:
        agent = self._agents.by_token(token)
        if agent is None:
            return None
        return AccessToken(token=token, client_id=agent.id, scopes=[], claims={"grant": agent.grant.model_dump()})
