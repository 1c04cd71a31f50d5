"""The tier rule's check (tests/conftest.py): a module of the gate that sends statements sends them on every engine
tier in a whole run, or the run fails naming the module and the tiers it missed.

Each statement a test sends in process is attributed to every gate module on the stack at the moment it reaches the
backend (a service, a store, an import: the code that decided to send it), under the tier of the backend that runs
it. xdist workers hand their findings to the controller, which checks the union. A run of part of the suite (a file,
-k, -m, --lf) checks nothing: which tests ran decides which modules were reached."""

import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from write_gate.engines.embedded import EmbeddedBackend
from write_gate.engines.falkordb import FalkorDBBackend
from write_gate.engines.memgraph import MemgraphBackend

_SENT: defaultdict[str, set[str]] = defaultdict(set)  # tier -> modules that sent a statement on it
_KEY = "write_gate_tier_modules"
# The layers whose modules decide what to send; engines/ only carries it, core/ builds it without I/O.
_DECIDING = ("write_gate.services.", "write_gate.store.", "write_gate.interchange.", "write_gate.serving.")

tier_of: Callable[[Any], str] = lambda backend: "unknown"  # noqa: E731 - set by conftest (it knows the doubles)


def _deciding_modules() -> Iterator[str]:
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith(_DECIDING):
            yield module
        frame = frame.f_back


def _recording(method: Callable[..., Any]) -> Callable[..., Any]:
    async def recorded(self: Any, statement: Any) -> Any:
        _SENT[tier_of(self)].update(_deciding_modules())
        return await method(self, statement)

    recorded.__wrapped__ = method  # type: ignore[attr-defined]
    return recorded


def _install() -> None:
    opened = MemgraphBackend.__init__

    def remembering_its_url(self: Any, url: str, *args: Any, **kwargs: Any) -> None:
        opened(self, url, *args, **kwargs)
        self.tier_url = url  # the Bolt double's or real Memgraph's

    MemgraphBackend.__init__ = remembering_its_url  # type: ignore[method-assign]
    for backend in (FalkorDBBackend, MemgraphBackend):
        for name in ("read", "write"):
            setattr(backend, name, _recording(getattr(backend, name)))


def _whole_run(config: pytest.Config) -> bool:
    option = config.option
    narrowed = option.keyword or option.markexpr or getattr(option, "lf", False) or getattr(option, "deselect", None)
    return not narrowed and all(arg.rstrip("/") in ("tests", str(config.rootpath / "tests")) for arg in config.args)


def missing(sent: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each module that sent statements on some tier, with the tiers (of those that ran at all) where it sent none."""
    tiers = [tier for tier in sent if tier != "unknown"]
    modules = set().union(*(sent[tier] for tier in tiers)) if tiers else set()
    gaps = {module: sorted(tier for tier in tiers if module not in sent[tier]) for module in modules}
    return {module: gap for module, gap in sorted(gaps.items()) if gap}


def pytest_configure(config: pytest.Config) -> None:
    _install()
    config.stash[_RESULTS] = defaultdict(set)


_RESULTS = pytest.StashKey[defaultdict[str, set[str]]]()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist's controller: a worker's findings."""
    for tier, modules in node.workeroutput.get(_KEY, {}).items():
        node.config.stash[_RESULTS][tier].update(modules)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if hasattr(config, "workeroutput"):  # an xdist worker: hand over, the controller checks
        config.workeroutput[_KEY] = {tier: sorted(modules) for tier, modules in _SENT.items()}
        return
    results = config.stash[_RESULTS]
    for tier, modules in _SENT.items():
        results[tier].update(modules)
    if not _whole_run(config) or exitstatus not in (0, 1):
        return
    gaps = missing(results)
    if gaps:
        lines = [f"  {module}: never sent a statement on {', '.join(tiers)}" for module, tiers in gaps.items()]
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        text = "tier rule broken (tests/conftest.py): mark a test of each module every_tier\n" + "\n".join(lines)
        if reporter is not None:
            reporter.write_sep("=", "tier coverage", red=True)
            reporter.write_line(text)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def tier_of_backend(backend: Any, memgraph_urls: set[str]) -> str:
    """`memgraph_urls`: the real Memgraph's (testcontainers); any other Memgraph backend talks to a Bolt double.
    The embedded engine and an external FalkorDB are one engine behind one backend class (the embedded one adds
    only its restarts), so a module's statements count for FalkorDB on either: the end-to-end tests run on the
    embedded one, the integration tests on both (tests/conftest.py)."""
    if isinstance(backend, EmbeddedBackend | FalkorDBBackend):
        return "falkordb"
    if isinstance(backend, MemgraphBackend):
        return "memgraph" if getattr(backend, "tier_url", None) in memgraph_urls else "bolt"
    return "unknown"
