"""LiveAgents on real files: which changes it sees, and when it reads the file again."""

import os
import time
from pathlib import Path

import pytest

from write_gate.access.agents import AgentsFile, AgentsFileError, Grant, LiveAgents


def saved(path: Path, *names: str) -> dict[str, str]:
    agents = AgentsFile.load(path)
    tokens = {name: agents.add(name, Grant()) for name in names}
    agents.save()
    return tokens


def test_an_edit_that_keeps_inode_size_and_mtime_is_seen_while_the_file_is_recent(tmp_path: Path) -> None:
    path = tmp_path / "agents.toml"
    saved(path, "ann")
    live = LiveAgents(path)
    assert live.by_id("ann") is not None
    before = os.stat(path)
    path.write_text(path.read_text().replace("ann", "bob"))  # same size, same inode
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same modification time
    assert (os.stat(path).st_ino, os.stat(path).st_size) == (before.st_ino, before.st_size)
    assert live.by_id("ann") is None and live.by_id("bob") is not None


def test_an_old_file_is_not_read_again_while_its_stat_stays_the_same(tmp_path: Path) -> None:
    path = tmp_path / "agents.toml"
    saved(path, "ann")
    old = time.time_ns() - 10 * 10**9
    os.utime(path, ns=(old, old))
    live = LiveAgents(path)
    assert live.by_id("ann") is not None  # the first look-up after start may re-read; it is old now
    path.write_text(path.read_text().replace("ann", "bob"))
    os.utime(path, ns=(old, old))  # an edit that hides itself from stat on an old file: the cost of not reading
    assert live.by_id("ann") is not None
    os.utime(path)  # any real edit moves the modification time
    assert live.by_id("bob") is not None


def test_a_deleted_file_means_no_agents_and_a_new_one_is_read(tmp_path: Path) -> None:
    path = tmp_path / "agents.toml"
    tokens = saved(path, "ann")
    live = LiveAgents(path)
    assert live.by_token(tokens["ann"]) is not None
    path.unlink()
    assert live.by_token(tokens["ann"]) is None
    assert live.by_token(saved(path, "cid")["cid"]) is not None


def test_a_json_agents_file_works_the_same(tmp_path: Path) -> None:
    path = tmp_path / "agents.json"
    tokens = saved(path, "ann")
    assert LiveAgents(path).by_token(tokens["ann"]).id == "ann"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[agents", "Expected ']'"),
        ('agents = "everyone"', "expected an `agents` table"),
        ('[agents.x]\ntoken_sha256 = "nope"', "agents.x.token_sha256: String should match pattern"),
    ],
)
def test_a_broken_file_at_start_raises_saying_where(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "agents.toml"
    path.write_text(text)
    with pytest.raises(AgentsFileError, match=why) as raised:
        LiveAgents(path)
    assert "nope" not in str(raised.value)


def test_a_token_once_verified_stops_working_when_its_agent_is_rekeyed_or_removed(tmp_path: Path) -> None:
    """Look-ups keep each agent and each verified token (every HTTP request looks its caller up): a change to the
    agents, in process or in the file, drops what was kept."""
    agents = AgentsFile(tmp_path / "agents.toml", {})
    old = agents.add("ann", Grant())
    assert agents.by_token(old) == agents.by_id("ann") is not None
    new = agents.add("ann", Grant(tools=("read",)))
    assert agents.by_token(old) is None
    assert agents.by_token(new) == agents.by_id("ann") and agents.by_token(new).grant.tools == ("read",)
    assert agents.remove("ann") and agents.by_token(new) is None and agents.by_id("ann") is None

    path = tmp_path / "live.toml"
    token = saved(path, "bob")["bob"]
    live = LiveAgents(path)
    assert live.by_token(token) is not None and live.by_token(token) is not None
    saved(path, "bob")  # re-keyed by another process
    assert live.by_token(token) is None
