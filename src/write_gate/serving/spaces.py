"""One server, several spaces: a gate per space, each on its own graph (FalkorDB) or database (Memgraph) of the one
engine, with the registry shared (kept in the default space's graph) or per space.

Every space's gate is opened at start, each with its own engine connection, migrations and registry keeper (on
the embedded engine each joins the folder's one engine, which the first starts). A server without spaces is the
same with one space, the default, on today's graph."""

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from write_gate.access.agents import Grant
from write_gate.core.spaces import granted_spaces
from write_gate.services.gate import Gate
from write_gate.serving.assembly import open_backend, open_gate
from write_gate.serving.config import ConfigurationError, Settings
from write_gate.serving.telemetry import Telemetry


class Spaces:
    """The gates of the served spaces, by name, and the space each call works in."""

    def __init__(self, settings: Settings, gates: dict[str, Gate]) -> None:
        self.settings = settings
        self.gates = gates
        self.served = tuple(settings.spaces)  # empty: spaces are off

    @property
    def enabled(self) -> bool:
        return bool(self.served)

    @property
    def default(self) -> Gate:
        return self.gates[self.settings.default_space]

    def granted(self, grant: Grant) -> list[str]:
        """The spaces a grant may work in, its default first (none with spaces off: there is no choice)."""
        return granted_spaces(grant.spaces, self.served, self.settings.default_space) if self.enabled else []

    def space_for(self, grant: Grant, requested: object | None = None) -> str:
        """The space a call works in; with spaces off, the one there is (a grant's spaces are ignored)."""
        if not self.enabled:
            return self.settings.default_space
        return grant.space_for(requested, self.served, self.settings.default_space)


def served_space(settings: Settings, space: str | None) -> str:
    """A space named on the command line (or the default one), or ConfigurationError."""
    if space is None or space == settings.default_space:
        return settings.default_space
    if space not in settings.spaces:
        served = ", ".join(settings.spaces) or "none (WRITE_GATE_SPACES is empty)"
        raise ConfigurationError(f"--space {space}: not a space this gate serves; served: {served}")
    return space


@asynccontextmanager
async def open_spaces(
    settings: Settings,
    *,
    auto_migrate: bool = True,
    keep_loading: bool = False,
    on_registry_change: Callable[[Gate], Awaitable[None]] | None = None,
    telemetry: Telemetry | None = None,
) -> AsyncIterator[Spaces]:
    """Every served space's gate (registry-holding spaces first, so the others can read it)."""
    names = settings.spaces or [settings.default_space]
    ordered = sorted(names, key=lambda name: settings.registry_space(name) != name)
    options: dict[str, Any] = dict(
        auto_migrate=auto_migrate, keep_loading=keep_loading, on_registry_change=on_registry_change, telemetry=telemetry
    )
    async with AsyncExitStack() as stack:
        gates: dict[str, Gate] = {}
        for name in ordered:
            home = settings.registry_space(name)
            registry = gates[home].backend if home != name else None
            gates[name] = await stack.enter_async_context(
                open_gate(settings.for_space(name), registry=registry, **options)
            )
        yield Spaces(settings, {name: gates[name] for name in names})


@asynccontextmanager
async def open_space_gate(settings: Settings, space: str | None = None, **options: Any) -> AsyncIterator[Gate]:
    """One space's gate, for a command: its graph, and the registry's graph where that is another space's."""
    space = served_space(settings, space)
    home = settings.registry_space(space)
    if home == space:
        async with open_gate(settings.for_space(space), **options) as gate:
            yield gate
        return
    registry = await open_backend(settings.for_space(home))
    try:
        async with open_gate(settings.for_space(space), registry=registry, **options) as gate:
            yield gate
    finally:
        await registry.close()
