"""`write-gate serve` over stdio on both of its paths (surface/stdio_pipes): pipes read and written on the event
loop, as a client that starts the server has them, and anything else (here: regular files) through the SDK's
threads. Both read lines as the SDK's text reader does: `\\r\\n` or a lone `\\r` ends one, and a line has no
length bound of its own."""

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import settings_env, write_gate_argv
from tests.e2e.stdio_process import RawStdio
from write_gate.serving.config import BackendKind, Settings

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


def settings_in(folder: Path) -> Settings:
    return Settings(backend=BackendKind.EMBEDDED, data_dir=folder, embedded_fsync="everysec")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawStdio]:
    raw = RawStdio(settings_in(tmp_path_factory.mktemp("stdio-pipes")))
    raw.initialize()
    yield raw
    raw.close()


def ping(request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()


def test_a_line_ending_in_crlf_is_one_message(server: RawStdio) -> None:
    server.send(ping(31) + b"\r")  # with the "\n" send adds: "\r\n"
    assert server.answer() == {"jsonrpc": "2.0", "id": 31, "result": {}}


def test_a_lone_carriage_return_ends_a_line_too(server: RawStdio) -> None:
    server.send(ping(32) + b"\r" + ping(33))
    assert sorted(server.answer()["id"] for _ in range(2)) == [32, 33]


def test_a_line_far_longer_than_asyncios_default_limit_is_read_whole(server: RawStdio) -> None:
    query = "x" * 300_000  # asyncio's reader refuses lines past 64 KiB unless told otherwise
    call = {"name": "search_nodes", "arguments": {"query": query}}
    answer = server.request(34, "tools/call", call)
    assert answer["result"]["isError"] is False and answer["result"]["structuredContent"]["entities"] == []


def test_only_messages_reach_stdout_on_the_pipe_path(server: RawStdio) -> None:
    assert server.request(35, "ping") == {"jsonrpc": "2.0", "id": 35, "result": {}}
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in server.stdout)


def calls_then_eof(count: int) -> bytes:
    """A session's lines as a script writes them all at once: initialize, then `count` calls to the engine."""
    lines = [json.dumps(INITIALIZE).encode(), b'{"jsonrpc": "2.0", "method": "notifications/initialized"}']
    for request_id in range(1, count + 1):
        call = {"name": "read_graph", "arguments": {}}
        lines.append(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call}).encode())
    return b"\n".join(lines) + b"\n"


def test_a_server_started_with_stdin_from_dev_null_ends_at_once(tmp_path: Path) -> None:
    """/dev/null is a character device asyncio takes for a pipe, and epoll then refuses in a callback: the server
    waited forever for a line. Read as a file is, its end ends serving."""
    done = subprocess.run(
        write_gate_argv("serve"),
        env=settings_env(settings_in(tmp_path / "data")),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout == b"", done.stderr


@pytest.mark.parametrize("stdin_kind", ["pipe", "file"])
def test_every_request_read_before_eof_is_answered(tmp_path: Path, stdin_kind: str) -> None:
    """The SDK cancels what still runs when stdin ends; the gate holds the end back until all is answered."""
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(calls_then_eof(20))
    with requests.open("rb") as file:
        done = subprocess.run(
            write_gate_argv("serve"),
            env=settings_env(settings_in(tmp_path / "data")),
            stdin=file if stdin_kind == "file" else None,
            input=None if stdin_kind == "file" else requests.read_bytes(),
            capture_output=True,
            timeout=120,
            check=True,
        )
    got = {message["id"]: message for message in map(json.loads, done.stdout.splitlines())}
    assert sorted(got) == list(range(21))
    assert all(got[i]["result"]["isError"] is False for i in range(1, 21))


def test_regular_files_are_served_through_the_sdks_threads(tmp_path: Path) -> None:
    """stdin and stdout that the event loop cannot watch: every line still answered, then EOF ends serving."""
    requests = tmp_path / "in.jsonl"
    lines = [json.dumps(INITIALIZE).encode(), b'{"jsonrpc": "2.0", "method": "notifications/initialized"}']
    requests.write_bytes(b"\n".join([*lines, ping(1) + b"\r", b"hello", ping(2)]) + b"\n")
    answers = tmp_path / "out.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        subprocess.run(
            write_gate_argv("serve"),
            env=settings_env(settings_in(tmp_path / "data")),
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            timeout=120,
            check=True,
        )
    got = {message["id"]: message for message in map(json.loads, answers.read_bytes().splitlines())}
    assert "result" in got[0] and got[1]["result"] == {} and got[2]["result"] == {}
    assert got[None]["error"]["code"] == -32700  # "hello", answered and passed over
