"""The client tier's fixtures: the servers (stdio commands and HTTP processes, both profiles, on one data dir)
and the clients we did not write, installed into a cache: the Python SDK 1.x in a venv made with uv, the
TypeScript SDKs with `npm ci` from the lock files committed beside their drivers. Each skips, saying why in
one line, where it cannot be installed."""

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import settings_env, write_gate_argv
from write_gate.access.agents import FULL, AgentsFile
from write_gate.serving.config import BackendKind, Settings
from write_gate.store.bundled import bundled

HERE = Path(__file__).parent
CACHE = Path(os.environ.get("WRITE_GATE_TEST_CACHE", Path.home() / ".cache" / "write-gate-tests"))
PY1_REQUIREMENT = "mcp==1.30.0"  # the last 1.x release
PROFILES = ("gate", "memory", "mesh")


@dataclass(frozen=True)
class Served:
    """One profile: how to start it over stdio, and where it already serves over HTTP."""

    command: list[str]
    env: dict[str, str]
    url: str
    token: str

    def config(self, transport: str, calls: list[dict]) -> dict:
        if transport == "stdio":
            return {
                "transport": "stdio",
                "command": self.command[0],
                "args": self.command[1:],
                "env": self.env,
                "calls": calls,
            }
        return {"transport": "http", "url": self.url, "token": self.token, "calls": calls}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1) as response:
                if response.status == 200:
                    return
        except (OSError, urllib.error.HTTPError):
            time.sleep(0.1)
    raise RuntimeError(f"the gate did not become healthy: {log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Served]]:
    tmp = tmp_path_factory.mktemp("client-tier")
    agents = AgentsFile(tmp / "agents.toml", {})
    token = agents.add("client-tier", FULL)
    agents.save()
    processes: list[subprocess.Popen[bytes]] = []
    result: dict[str, Served] = {}
    for profile in PROFILES:
        settings = Settings(
            backend=BackendKind.EMBEDDED,
            data_dir=tmp / "data",
            graph_name=f"clients_{profile}",
            embedded_fsync="everysec",
            # The memory profile rejects unknown entity types here, so its rejection can be shown.
            unknown_label_policy="reject" if profile == "memory" else "remap",
        )
        # Every toolset listed (and in the gate profile discovery's two tools), so each client meets every schema.
        env = settings_env(settings) | {"WRITE_GATE_MAX_BATCH_ITEMS": "5", "WRITE_GATE_TOOLSETS": "all"}
        if profile == "gate":
            env["WRITE_GATE_DYNAMIC_TOOLSETS"] = "true"
        subprocess.run(write_gate_argv("migrate"), env=env, check=True, capture_output=True, timeout=120)
        if profile in ("gate", "mesh"):
            rpg = str(bundled("schemas") / "examples" / "rpg")
            subprocess.run(write_gate_argv("schema", "load", rpg), env=env, check=True, capture_output=True, timeout=60)
        # The gate profile also answering in JSON (`--http-response json`), whose calls take their own path
        # (surface/direct_calls.py): every client meets it there too.
        for name, answers in ((profile, "sse"), *((("gate-json", "json"),) if profile == "gate" else ())):
            port, log = _free_port(), tmp / f"{name}.log"
            http_env = env | {"WRITE_GATE_PORT": str(port), "WRITE_GATE_AGENTS_FILE": str(agents.path)}
            with log.open("wb") as log_file:
                process = subprocess.Popen(
                    write_gate_argv("serve", "--transport", "http", "--profile", profile, "--http-response", answers),
                    env=http_env,
                    stdout=subprocess.DEVNULL,
                    stderr=log_file,
                )
            processes.append(process)
            url = f"http://127.0.0.1:{port}"
            _wait_healthy(url, process, log)
            result[name] = Served(write_gate_argv("serve", "--profile", profile), env, f"{url}/mcp", token)
    yield result
    for process in processes:
        process.terminate()
        process.wait(timeout=30)


# --- clients we did not write ---------------------------------------------------------------------


def node_project(name: str, source: Path | None = None) -> Path:
    """tests/clients/<name> (or `source`) installed with `npm ci` into the cache (once per lock file), with
    the drivers copied beside its node_modules; skips where node or npm is missing or the install fails."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"node and npm are needed for {name} and are not installed here")
    source = source or HERE / name
    lock = (source / "package-lock.json").read_bytes()
    target = CACHE / f"{name}-{hashlib.sha256(lock).hexdigest()[:12]}"
    with installing(target):
        _npm_ci(name, source, target)
    for driver in [*source.glob("*.mjs"), HERE / "driver.mjs"]:
        shutil.copy(driver, target / driver.name)
    return target


@contextmanager
def installing(target: Path) -> Iterator[None]:
    """One installer of `target` at a time, across the test workers of a run and across runs."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _npm_ci(name: str, source: Path, target: Path) -> None:
    if not (target / "node_modules" / ".write-gate-installed").exists():
        target.mkdir(parents=True, exist_ok=True)
        for file in ("package.json", "package-lock.json"):
            shutil.copy(source / file, target / file)
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=target,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            pytest.skip(f"npm ci for {name} failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")
        (target / "node_modules" / ".write-gate-installed").touch()


def python_sdk_v1() -> Path:
    """A venv with the last Python SDK 1.x and jsonschema, made with uv; skips if it cannot be made."""
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        pytest.skip("uv is needed to install the Python SDK 1.x and is not on PATH")
    venv = CACHE / f"python-{PY1_REQUIREMENT.replace('==', '-')}"
    python = venv / "bin" / "python"
    with installing(venv):
        _make_venv(uv, venv, python)
    return python


def _make_venv(uv: str, venv: Path, python: Path) -> None:
    if not (venv / ".write-gate-installed").exists():
        steps = [
            [uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
            [uv, "pip", "install", "--quiet", "--python", str(python), PY1_REQUIREMENT, "jsonschema"],
        ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                pytest.skip(f"could not install {PY1_REQUIREMENT}: {done.stderr.strip().splitlines()[-1:]}")
        (venv / ".write-gate-installed").touch()


def run_driver(argv: list[str], config: dict, tmp_path: Path, cwd: Path | None = None) -> dict:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    done = subprocess.run([*argv, str(path)], capture_output=True, text=True, timeout=300, cwd=cwd)
    assert done.returncode == 0, f"the driver failed:\n{done.stderr[-4000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])
