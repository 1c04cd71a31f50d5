"""The deployment files, read as Docker and Compose would read them (nothing can be built here): no Bolt port
published without Memgraph's auth, pinned images, a health check, a .dockerignore that keeps secrets and tests out
but lets the build's own files in, and CI that runs the Memgraph tier where Docker is."""

import fnmatch
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import MEMGRAPH_IMAGE

ROOT = Path(__file__).parents[2]
BASE = ROOT / "docker-compose.yml"
PUBLISH = ROOT / "docker-compose.publish-bolt.yml"
BOLT = 7687


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def merged(*paths: Path) -> dict[str, Any]:
    """Compose's merge of several files: maps merge, `ports` add up, anything else the later file replaces."""

    def merge(a: Any, b: Any, key: str = "") -> Any:
        if isinstance(a, dict) and isinstance(b, dict):
            return {k: merge(a[k], b[k], k) if k in a and k in b else b.get(k, a.get(k)) for k in {**a, **b}}
        if key in ("ports", "expose") and isinstance(a, list) and isinstance(b, list):
            return a + b
        return b

    result: dict[str, Any] = {}
    for path in paths:
        result = merge(result, load(path))
    return result


def published_bolt(service: dict[str, Any]) -> list[str]:
    """The `ports` entries that publish container port 7687 to the host."""
    found = []
    for entry in service.get("ports", []):
        target = entry.get("target") if isinstance(entry, dict) else str(entry).split("/")[0].rsplit(":", 1)[-1]
        if str(target) == str(BOLT):
            found.append(str(entry))
    return found


def credentials(service: dict[str, Any]) -> tuple[str | None, str | None]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return env.get("MEMGRAPH_USER"), env.get("MEMGRAPH_PASSWORD")


def required(expression: str | None) -> bool:
    """An interpolation compose refuses to leave empty: ${NAME:?message}."""
    return bool(expression) and re.fullmatch(r"\$\{MEMGRAPH_(USER|PASSWORD):\?[^}]+\}", expression) is not None


CONFIGURATIONS = {"default": (BASE,), "publish-bolt": (BASE, PUBLISH)}


@pytest.mark.parametrize("files", CONFIGURATIONS.values(), ids=CONFIGURATIONS.keys())
def test_no_bolt_port_is_published_without_memgraph_auth(files: tuple[Path, ...]) -> None:
    services = merged(*files)["services"]
    for name, service in services.items():
        if not published_bolt(service):
            continue
        user, password = credentials(service)
        assert required(user) and required(password), f"{name} publishes {BOLT} without Memgraph's auth"
        assert all(entry.startswith("127.0.0.1:") for entry in published_bolt(service)), "loopback only"
        # Every service that talks to Memgraph logs in with the same credentials.
        for other_name, other in services.items():
            if (other.get("environment") or {}).get("WRITE_GATE_BACKEND") == "memgraph":
                assert credentials(other) == (user, password), f"{other_name} lacks Memgraph's credentials"
        # The health check logs in too, or it would never pass once auth is on.
        assert "--username" in str(service["healthcheck"]["test"])


def test_the_default_compose_publishes_no_bolt_port_and_only_the_gate() -> None:
    services = load(BASE)["services"]
    assert not any(published_bolt(service) for service in services.values())
    assert [name for name, service in services.items() if service.get("ports")] == ["gate"]


def test_the_publish_override_is_where_the_bolt_port_is() -> None:
    assert published_bolt(merged(BASE, PUBLISH)["services"]["memgraph"]) == ["127.0.0.1:7687:7687"]


def test_images_are_pinned_and_the_memgraph_tier_runs_the_deployed_image() -> None:
    services = load(BASE)["services"].values()
    built = {service["image"] for service in services if "build" in service}  # the gate's own, never pulled
    images = [service["image"] for service in services if "image" in service and service["image"] not in built]
    assert images == [MEMGRAPH_IMAGE]
    assert re.fullmatch(r"memgraph/memgraph-mage:\d+\.\d+\.\d+", MEMGRAPH_IMAGE)
    dockerfile = (ROOT / "Dockerfile").read_text()
    python_image = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", dockerfile, re.MULTILINE)
    assert python_image and re.fullmatch(r"python:\d+\.\d+\.\d+-slim-(bookworm|trixie)", python_image[1])
    assert set(re.findall(r"^FROM (\S+)", dockerfile, re.MULTILINE)) == {"${PYTHON_IMAGE}"}


def test_the_image_has_a_health_check_on_the_health_endpoint_and_runs_unprivileged() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    check = re.search(r"^HEALTHCHECK (.+?)(?<!\\)$", dockerfile, re.MULTILINE | re.DOTALL)
    assert check and "CMD" in check[1] and "/health" in check[1]
    users = re.findall(r"^USER (\S+)$", dockerfile, re.MULTILINE)
    assert users and users[-1] not in ("root", "0")


def _ignored(path: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path.split("/")[0], p) for p in patterns)


def test_dockerignore_keeps_secrets_and_tests_out_and_the_builds_files_in() -> None:
    patterns = [
        line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip()[:1] not in ("", "#")
    ]
    for kept_out in (".git", ".venv", "tests", "agents.toml", ".env"):
        assert _ignored(kept_out, patterns), kept_out
    copied = re.findall(r"^COPY (?!--from)(.+) \S+$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    for source in (s.rstrip("/") for line in copied for s in line.split()):
        assert not _ignored(source, patterns), f"the build copies {source}, which .dockerignore leaves out"
        assert (ROOT / source).exists()


def test_ci_runs_the_whole_suite_where_docker_is() -> None:
    workflow = load(ROOT / ".github" / "workflows" / "ci.yml")
    job = workflow["jobs"]["test"]
    assert job["runs-on"].startswith("ubuntu")  # GitHub's Ubuntu runners have a Docker engine: the Memgraph tier
    commands = " ".join(step.get("run", "") for step in job["steps"])
    assert "bash .ci/run" in commands
    ci_run = (ROOT / ".ci" / "run").read_text()
    assert "uv run pytest" in ci_run and "not memgraph" not in ci_run + commands


def test_the_image_ships_the_licence() -> None:
    """The MIT licence asks that its notice go with every copy: the image's venv is built from a wheel that
    names LICENSE in its metadata (pyproject's license-files), so the build copies it."""
    copied = re.findall(r"^COPY (?!--from)(.+) \S+$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert "LICENSE" in {source for line in copied for source in line.split()}


GATE_IMAGE = "write-gate:local"


def test_compose_builds_the_gate_image_once_and_every_service_runs_it() -> None:
    """`migrate` and `gate` (and the `agents` tool) run one image: one service builds it, the others name it and
    never pull it (there is no such image to pull)."""
    services = load(BASE)["services"]
    builders = [name for name, service in services.items() if "build" in service]
    assert builders == ["gate"] and services["gate"]["image"] == GATE_IMAGE
    for name in ("migrate", "agents"):
        assert services[name]["image"] == GATE_IMAGE and services[name]["pull_policy"] == "never", name


def test_a_missing_agents_file_stops_compose_instead_of_becoming_a_folder() -> None:
    """A short-syntax bind of a missing ./agents.toml makes an empty directory of that name on the host; the
    long syntax with create_host_path: false makes compose refuse to start the gate, naming the path."""
    [mount] = [v for v in load(BASE)["services"]["gate"]["volumes"] if isinstance(v, dict)]
    assert mount["type"] == "bind" and mount["source"] == "./agents.toml" and mount["read_only"] is True
    assert mount["bind"]["create_host_path"] is False


def test_tokens_are_made_with_docker_compose_run_alone() -> None:
    """A Docker-only user creates agents without uv on the host: `docker compose run --rm agents add NAME`
    writes ./agents.toml through a tool service that starts nothing else."""
    agents = load(BASE)["services"]["agents"]
    assert agents["profiles"] == ["tools"]  # not started by `docker compose up`
    assert agents["entrypoint"] == ["/app/.venv/bin/write-gate", "agents"]
    assert agents["environment"]["WRITE_GATE_AGENTS_FILE"] == "/work/agents.toml"
    assert ".:/work" in agents["volumes"] and "depends_on" not in agents
    running = (ROOT / "docs" / "fleets" / "running.md").read_text()
    assert 'docker compose run --rm --user "$(id -u)" agents add crawler' in running
