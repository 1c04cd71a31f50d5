"""The package's layers, held against its imports: each module imports only from its own layer or those below,
and only the MCP surface imports the MCP SDK or Starlette. docs/development/layout.md draws the same order."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "write_gate"

# Top to bottom; a module may import from its own layer and from any layer after it.
LAYERS = ["cli", "surface", "serving", "interchange", "services", "access", "store", "engines", "core"]
# Not layers: the package's face (its version) may be imported from anywhere.
ANYWHERE = {"write_gate"}
SDK = ("mcp", "mcp_types", "starlette", "sse_starlette", "uvicorn")
SDK_ALLOWED = {"surface": SDK, "cli": ("uvicorn",)}


def layer_of(module: str) -> str:
    parts = module.split(".")
    assert parts[0] == "write_gate", module
    if len(parts) == 1:
        return "write_gate"
    return parts[1].removesuffix(".py")


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(p for p in rel.parts if p != "__init__")
        out.append((name, path))
    return out


def imports(path: Path) -> list[tuple[str, int]]:
    """(module imported, line) for each import, relative ones resolved; `from write_gate import x` names x."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import"
            module = node.module or ""
            if module == "write_gate":
                names = [alias.name for alias in node.names if alias.name != "__version__"]
                found += [(f"write_gate.{name}", node.lineno) for name in names]
                found.append(("write_gate", node.lineno))
            else:
                found.append((module, node.lineno))
    return found


def test_every_module_is_in_a_layer() -> None:
    for name, _ in modules():
        assert layer_of(name) in [*LAYERS, *ANYWHERE], f"{name} is in no layer of {LAYERS}"


@pytest.mark.parametrize(("name", "path"), modules(), ids=[name for name, _ in modules()])
def test_imports_run_down_the_layers(name: str, path: Path) -> None:
    own = layer_of(name)
    if own in ANYWHERE:
        return
    allowed = set(LAYERS[LAYERS.index(own) :]) | ANYWHERE
    upward = [
        f"line {line}: {module}"
        for module, line in imports(path)
        if module.split(".")[0] == "write_gate" and layer_of(module) not in allowed
    ]
    assert not upward, f"{name} ({own}) imports from a layer above it: {upward}"


@pytest.mark.parametrize(("name", "path"), modules(), ids=[name for name, _ in modules()])
def test_only_the_surface_imports_the_sdk(name: str, path: Path) -> None:
    allowed = SDK_ALLOWED.get(layer_of(name), ())
    sdk = [
        f"line {line}: {module}"
        for module, line in imports(path)
        if module.split(".")[0] in SDK and module.split(".")[0] not in allowed
    ]
    assert not sdk, f"{name} imports the MCP SDK or the HTTP stack: {sdk}"


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The check itself can fail: a core module importing a service is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("from write_gate.services.gate import Gate\nimport mcp_types\n")
    found = imports(bad)
    assert ("write_gate.services.gate", 1) in found and ("mcp_types", 2) in found
    assert layer_of("write_gate.services.gate") not in set(LAYERS[LAYERS.index("core") :])
