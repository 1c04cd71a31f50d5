"""Memory of `write-gate serve --transport http` when clients open sessions and never close them.

Opens N sessions (initialize + notifications/initialized, never DELETE) and prints the server's resident
memory before and after; then, with a short WRITE_GATE_SESSION_IDLE_SECONDS, three waves of N sessions each
left to expire: memory after each wave and after its expiry, and how many sessions still answer.

    uv run python bench/http_sessions.py [--sessions 1000] [--idle 10] [--settle 2]
"""

import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from write_gate.access.agents import AgentsFile, Grant

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def post(port: int, token: str, message: dict, session: str = "") -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
    }
    if session:
        headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"}
    try:
        connection.request("POST", "/mcp", json.dumps(message), headers)
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("mcp-session-id") or ""
    finally:
        connection.close()


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 1e6


def measure(sessions: int, idle: float | None, data: Path, settle: float) -> dict[str, float | int]:
    agents = AgentsFile(data / "agents.toml", {})
    token = agents.add("bench", Grant())
    agents.save()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = shutil.which("write-gate", path=str(Path(sys.executable).parent))
    env = {
        **os.environ,
        "WRITE_GATE_DATA_DIR": str(data / "graph"),
        "WRITE_GATE_AGENTS_FILE": str(data / "agents.toml"),
        "WRITE_GATE_LOG_LEVEL": "WARNING",
        **({"WRITE_GATE_SESSION_IDLE_SECONDS": str(idle)} if idle else {}),
    }
    server = subprocess.Popen([exe, "serve", "--transport", "http", "--port", str(port)], env=env)
    try:
        for _ in range(600):
            try:
                if post(port, token, PING)[0] in (200, 400):  # answering: a ping outside a session is a 400
                    break
            except OSError:
                time.sleep(0.1)
        for _ in range(20):  # warm up the code paths a session uses, then let them go
            status, sid = post(port, token, INITIALIZE)
            post(port, token, INITIALIZED, sid)
        time.sleep(settle)
        row: dict[str, float | int] = {"before_mb": rss_mb(server.pid)}
        waves = 3 if idle else 1  # with expiry: does the memory of expired sessions serve the next ones?
        for wave in range(1, waves + 1):
            ids = []
            for _ in range(sessions):
                status, sid = post(port, token, INITIALIZE)
                assert status == 200, status
                assert post(port, token, INITIALIZED, sid)[0] == 202
                ids.append(sid)
            last_opened = time.perf_counter()
            time.sleep(settle)
            row[f"wave{wave}_open_mb"] = rss_mb(server.pid)
            if idle:
                time.sleep(max(0.0, last_opened + idle + settle + 1 - time.perf_counter()))  # the last one idle too
                row[f"wave{wave}_expired_mb"] = rss_mb(server.pid)
                sample = ids[:: max(1, len(ids) // 50)]
                row["sampled_still_open"] = sum(post(port, token, PING, sid)[0] == 200 for sid in sample)
                row["sampled"] = len(sample)
        return row
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--idle", type=float, default=10.0, help="WRITE_GATE_SESSION_IDLE_SECONDS for the second run")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds memory settles before a reading")
    args = parser.parse_args()
    print(f"{args.sessions} sessions opened and never closed; resident memory of the gate process (MB)\n")
    data = Path(tempfile.mkdtemp(prefix="wg-sessions-"))
    try:
        row = measure(args.sessions, None, data, args.settle)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    print(f"sessions never expire (the default 1800 s is not reached): {row['before_mb']:.1f} before, ", end="")
    print(f"{row['wave1_open_mb']:.1f} after opening {args.sessions}\n")
    data = Path(tempfile.mkdtemp(prefix="wg-sessions-"))
    try:
        row = measure(args.sessions, args.idle, data, args.settle)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    print(f"WRITE_GATE_SESSION_IDLE_SECONDS={args.idle:g}: three waves of {args.sessions} sessions left to expire")
    print(f"before: {row['before_mb']:.1f}")
    print("| wave | after opening | after expiry |\n|---|---|---|")
    for wave in (1, 2, 3):
        print(f"| {wave} | {row[f'wave{wave}_open_mb']:.1f} | {row[f'wave{wave}_expired_mb']:.1f} |")
    still = f"{row['sampled_still_open']} of {row['sampled']}"
    print(f"sessions of the last wave still answering after expiry: {still} sampled")


if __name__ == "__main__":
    main()
