"""`write-gate serve | migrate | schema load`."""

import argparse
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from write_gate import __version__
from write_gate.backends import BackendError, BackendUnavailable, open_backend
from write_gate.config import Settings
from write_gate.migrations import migrate
from write_gate.schema_files import SchemaFileError, load_into_graph, read_sources

logger = logging.getLogger("write_gate")


async def _serve_stdio(settings: Settings, profile: str, auto_migrate: bool) -> None:
    from mcp.server.stdio import stdio_server

    from write_gate.server import build_server

    server = build_server(settings, profile=profile, auto_migrate=auto_migrate)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _serve_http(settings: Settings, profile: str, auto_migrate: bool) -> None:
    import uvicorn

    from write_gate.server import build_server

    server = build_server(settings, profile=profile, auto_migrate=auto_migrate)
    app = server.streamable_http_app(host=settings.host)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning")


async def _with_backend(settings: Settings, work: Callable[..., Awaitable[int]]) -> int:
    backend = await open_backend(settings)
    try:
        return await work(backend)
    finally:
        await backend.close()


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    if args.transport == "http":
        _serve_http(settings, args.profile, not args.no_migrate)
    else:
        anyio.run(_serve_stdio, settings, args.profile, not args.no_migrate)
    return 0


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    async def work(backend) -> int:
        applied = await migrate(backend, args.migrations, args.schemas)
        print("applied: " + (", ".join(applied) if applied else "nothing (up to date)"))
        return 0

    return anyio.run(_with_backend, settings, work)


def cmd_schema_load(args: argparse.Namespace, settings: Settings) -> int:
    try:
        entries = read_sources(args.paths)
    except SchemaFileError as exc:
        print(f"error: {exc.path}: {exc.reason}\nnothing was loaded", file=sys.stderr)
        return 1

    async def work(backend) -> int:
        count = await load_into_graph(backend, entries)
        print(f"loaded {count} registry entries; call refresh_schema_cache (or restart) for running gates to see them")
        return 0

    return anyio.run(_with_backend, settings, work)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="write-gate", description="A schema-and-provenance gate for a shared graph.")
    top.add_argument("--version", action="version", version=f"write-gate {__version__}")
    top.add_argument("-v", "--verbose", action="store_true", help="log at debug level (to stderr)")
    sub = top.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the MCP tools (stdio by default)")
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    serve.add_argument(
        "--profile",
        choices=["gate", "memory"],
        default="gate",
        help="gate: the typed write tools and the read tools; memory: the official memory server's nine tools",
    )
    serve.add_argument("--no-migrate", action="store_true", help="do not apply pending migrations at start-up")
    serve.set_defaults(func=cmd_serve)

    mig = sub.add_parser("migrate", help="apply pending migrations, each once, recorded in the graph")
    mig.add_argument("--migrations", type=Path, default=None, help="folder of migrations (default: the bundled one)")
    mig.add_argument("--schemas", type=Path, default=None, help="schemas folder that migrations load from")
    mig.set_defaults(func=cmd_migrate)

    schema = sub.add_parser("schema", help="manage the schema registry")
    schema_sub = schema.add_subparsers(dest="schema_command", required=True)
    load = schema_sub.add_parser("load", help="create or update :Schema nodes from registry source files")
    load.add_argument("paths", nargs="+", type=Path, help="JSON files or folders of them")
    load.set_defaults(func=cmd_schema_load)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    # stdout carries the MCP stdio protocol: every log line goes to stderr.
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    try:
        settings = Settings()
    except ValueError as exc:
        print(f"error: configuration: {exc}", file=sys.stderr)
        return 2
    try:
        return args.func(args, settings)
    except (BackendUnavailable, BackendError) as exc:
        print(f"error: graph engine: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
