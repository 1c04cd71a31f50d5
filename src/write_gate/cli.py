"""`write-gate serve | migrate | schema | import | export | backup | restore | agents | engine | history |
embeddings`: the command line, above every layer."""

import argparse
import asyncio
import json
import logging
import os
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from write_gate import __version__
from write_gate.access.agents import AgentsFileError
from write_gate.core.model import GateRejection
from write_gate.core.toolsets import TOOLSETS, parse_toolsets
from write_gate.engines import BackendError, BackendUnavailable
from write_gate.serving import logs
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import BackendKind, ConfigurationError, Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import SchemaFileError, load_into_graph, read_sources

if TYPE_CHECKING:
    from write_gate.access.agents import Agent
    from write_gate.services.memory import WriterContext

logger = logging.getLogger("write_gate")


async def _serve_stdio(settings: Settings, profile: str, auto_migrate: bool) -> None:
    from write_gate.surface.metrics_endpoint import serve_metrics
    from write_gate.surface.server import build_server, initialization_options, served_telemetry
    from write_gate.surface.stdio_transport import stdio_transport

    telemetry = served_telemetry(settings, metrics=settings.metrics_port is not None)
    server = build_server(settings, profile=profile, auto_migrate=auto_migrate, telemetry=telemetry)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_stop_on_signal, tasks.cancel_scope)
        if settings.metrics_port is not None:
            tasks.start_soon(serve_metrics, server.operations, settings.metrics_port)
        async with stdio_transport() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, initialization_options(server))
        tasks.cancel_scope.cancel()  # stdin closed: served to the end, nothing left to watch


_STOPPING = (signal.SIGTERM, signal.SIGHUP)


def _ignore_stop_signals() -> None:
    for number in _STOPPING:
        signal.signal(number, signal.SIG_IGN)


async def _stop_on_signal(serving: anyio.CancelScope) -> None:
    """SIGTERM or SIGHUP (a client that stops its server without closing stdin first, a closed terminal)
    stops serving the way a closed stdin does: the gate leaves its engine, and the last gate out stops it.
    Left to the default action, the signal ended the process and the embedded engine ran on.

    Once stopping, a repeated signal (`uv run` forwards the one its parent got, a shell may send more) must not
    cut the engine's shutdown short, so the first signal's handler turns both to ignored itself. The loop's own
    signal handlers (anyio's receiver) cannot: removing one restores the default action first, and a repeat in
    that moment ended the gate (CI: SIGHUP sent every 2 ms, exit -1). SIGKILL still ends it."""
    loop = asyncio.get_running_loop()
    heard: asyncio.Future[int] = loop.create_future()

    def hear(number: int) -> None:
        if not heard.done():
            heard.set_result(number)

    def on_signal(number: int, _frame: object) -> None:
        _ignore_stop_signals()
        loop.call_soon_threadsafe(hear, number)

    for number in _STOPPING:
        signal.signal(number, on_signal)
    try:
        received = await heard
        logger.info("received %s: stopping", signal.Signals(received).name)
        serving.cancel()
    finally:
        _ignore_stop_signals()  # stdin closed, or cancelled: stopping all the same


def _serve_http(settings: Settings, profile: str, auto_migrate: bool, require_auth: bool, workers: int = 1) -> int:
    import uvicorn

    from write_gate.surface.server import http_app

    if workers > 1:
        from write_gate.surface.http_workers import serve_workers

        return serve_workers(settings, workers, profile=profile, auto_migrate=auto_migrate, require_auth=require_auth)
    app = http_app(settings, profile=profile, auto_migrate=auto_migrate, require_auth=require_auth)
    # log_config=None: uvicorn's loggers go through the JSON handler like every other; the per-request access
    # lines are left out (each tool decision has its own line).
    uvicorn.run(app, host=settings.host, port=settings.port, log_config=None, log_level=None, access_log=False)
    return 0


def _output(path: Path) -> Path:
    """A file the command writes: its folder is made if missing (`-o schemas/mine/registry.json` in a fresh
    clone), so only a path that cannot be a file is refused (main's one line for an OSError)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


async def _with_backend(settings: Settings, work: Callable[..., Awaitable[int]]) -> int:
    backend = await open_backend(settings)
    try:
        return await work(backend)
    finally:
        await backend.close()


def memory_file_notice(path: str, folder: Path | None = None) -> str:
    """What a configuration carried over from the official memory server is told: its file is not this graph.
    `folder`: the data folder its path chose (no WRITE_GATE_DATA_DIR), which its contents came into at first; what
    they lacked is said each time (its import's report, kept in the folder)."""
    if folder is not None:
        notice = (
            f"note: MEMORY_FILE_PATH ({path}): Write Gate keeps this graph in {folder} (a data folder beside the "
            "file, one per file, as the official server keeps one graph per file); what the file held was "
            "imported when the folder was made, and the file is neither read nor written after that"
        )
        left = _lines_not_imported(folder / MEMORY_FILE_REPORT)
        if left:
            notice += (
                f"; {left} of its line(s) were not imported (a relation type the registry lacks, a relation to an "
                f"entity the file does not hold, a line of no known type): each is listed in "
                f"{folder / MEMORY_FILE_REPORT}, and `write-gate import {shlex.quote(path)}` brings them over once "
                "their types are registered (what is there already is skipped)"
            )
        return notice
    return (
        f"note: MEMORY_FILE_PATH ({path}) is the official memory server's file; Write Gate keeps the graph in its "
        f"data folder and neither reads nor writes that file. To bring its contents over once: write-gate import "
        f"{shlex.quote(path)}"
    )


def _lines_not_imported(report: Path) -> int:
    """How many lines the memory file's import left out, by its report (the official file's, or another
    format's): none where there is no report (a folder made before reports were kept)."""
    try:
        answer = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    return len(answer.get("rejected") or answer.get("errors") or [])


MEMORY_FILE_REPORT = "memory-file-import.json"  # in the folder: what the file's import did, line by line
_MEMORY_FILE_PENDING = "memory-file-import.pending"  # in the folder while its import has not finished


def memory_file_folder(path: str) -> Path:
    """The data folder MEMORY_FILE_PATH chooses where WRITE_GATE_DATA_DIR is not set: beside the file, named after
    it, so each file is its own graph (a client that starts the official server on a file of its own gets a graph
    of its own) and the same file is the same graph again."""
    file = Path(path).expanduser().absolute()
    return file.with_name(file.name + ".write-gate")


def memory_file_due(folder: Path) -> bool:
    """Whether the file is to be imported into its folder at this start: the folder is new, or an import into it
    did not finish (the engine failed meanwhile: it runs again, skipping what came in)."""
    return not folder.exists() or (folder / _MEMORY_FILE_PENDING).exists()


def _import_memory_file(path: str, settings: Settings, folder: Path) -> bool:
    """The official server's file, brought into the new data folder its path chose (as `write-gate import`), its
    report kept in the folder. False where the import stopped before its end (nothing to serve from yet): the
    next start tries again. Lines it refused (a type the registry lacks, a relation to a missing entity) do not
    stop it: the graph is served without them, and the start's notice says where they are listed."""
    folder.mkdir(parents=True, exist_ok=True)
    pending, report = folder / _MEMORY_FILE_PENDING, folder / MEMORY_FILE_REPORT
    pending.touch()
    report.unlink(missing_ok=True)
    if Path(path).is_file() and Path(path).stat().st_size > 0:
        args = parser().parse_args(["import", path, "--quiet", "--report", str(report)])
        if "space" in args:
            from write_gate.serving.spaces import served_space

            args.space = served_space(settings, args.space)
        cmd_import(args, settings)
        try:
            finished = json.loads(report.read_text(encoding="utf-8")).get("stopped") is None
        except (OSError, ValueError):  # no report: it stopped before writing one (the engine, a fail strategy)
            finished = False
        if not finished:
            return False
    pending.unlink()
    return True


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    given = ("host", "port", "metrics_port", "toolsets", "http_response", "embeddings")
    overrides = {name: getattr(args, name) for name in given if getattr(args, name) is not None}
    if args.dynamic_toolsets:
        overrides["dynamic_toolsets"] = True
    if args.stateless:
        overrides["stateless"] = True
    settings = settings.model_copy(update=overrides)
    try:  # a name that is no toolset: one line, before anything starts
        parse_toolsets(settings.toolsets)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from write_gate.surface.http_workers import refusal

    refused = refusal(args.workers, args.transport, settings.stateless)
    if refused is not None:
        print(f"error: {refused}", file=sys.stderr)
        return 2
    if args.profile == "memory" and (memory_file := os.environ.get("MEMORY_FILE_PATH")):
        chosen = getattr(args, "memory_folder", None)
        due = getattr(args, "memory_folder_due", False)
        if chosen is not None and due and not _import_memory_file(memory_file, settings, chosen):
            print(
                f"error: MEMORY_FILE_PATH ({memory_file}) could not be imported (see above); the next start tries "
                "again",
                file=sys.stderr,
            )
            return 1
        print(memory_file_notice(memory_file, chosen), file=sys.stderr)
    if args.transport == "http":
        try:
            return _serve_http(settings, args.profile, not args.no_migrate, not args.no_auth, args.workers)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        anyio.run(_serve_stdio, settings, args.profile, not args.no_migrate)
    return 0


def cmd_console(args: argparse.Namespace, settings: Settings) -> int:
    from write_gate.surface.console.standalone import serve

    if args.port is not None:
        settings = settings.model_copy(update={"console_port": args.port})
    serve(settings, auto_migrate=not args.no_migrate)
    return 0


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    for option, folder in (("--migrations", args.migrations), ("--schemas", args.schemas)):
        if folder is not None and not folder.is_dir():  # else a missing folder reads as one with nothing to apply
            print(f"error: {option} {folder}: not a folder", file=sys.stderr)
            return 2

    async def work(backend) -> int:
        applied = await migrate(backend, args.migrations, args.schemas)
        print("applied: " + (", ".join(applied) if applied else "nothing (up to date)"))
        return 0

    return anyio.run(_with_backend, settings.for_space(args.space), work)


def cmd_schema_load(args: argparse.Namespace, settings: Settings) -> int:
    try:
        entries = read_sources(args.paths)
    except SchemaFileError as exc:
        print(f"error: {exc.path}: {exc.reason}\nnothing was loaded", file=sys.stderr)
        return 1

    async def work(backend) -> int:
        # The bundled registry first, as a gate's start would apply it: loaded after these files (at the first
        # `serve` of a fresh folder), its entries would replace theirs (MemoryMesh's `location` by `Location`).
        applied = [] if args.no_migrate else await migrate(backend)
        loaded = await load_into_graph(backend, entries)
        kept = f"; kept the registered {', '.join(loaded.kept)}, which the files only imply" if loaded.kept else ""
        first = f"applied {len(applied)} pending migrations, then " if applied else ""
        print(
            f"{first}loaded {loaded.written} registry entries{kept}; running gates see them within "
            "WRITE_GATE_REGISTRY_POLL_SECONDS (or at once with refresh_schema_cache)"
        )
        return 0

    # A shared registry lives in the default space's graph, whichever space is named.
    return anyio.run(_with_backend, settings.for_space(settings.registry_space(args.space)), work)


def cmd_schema_suggest(args: argparse.Namespace, settings: Settings) -> int:
    from write_gate.interchange.formats import parse_memory_file
    from write_gate.interchange.schema_suggest import suggest
    from write_gate.serving.spaces import open_space_gate

    try:
        items = list(parse_memory_file(args.file.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 1

    async def work():
        # The registry an import of this file would meet: the graph's, with pending migrations applied.
        async with open_space_gate(settings, args.space, auto_migrate=not args.no_migrate) as gate:
            return suggest(items, gate.registry)

    suggestion = anyio.run(work)
    for written, canonical, uses in suggestion.covered:
        print(f"covered: {written!r} -> {canonical} ({uses} uses)", file=sys.stderr)
    text = json.dumps(suggestion.document(), indent=2, ensure_ascii=False) + "\n"
    if args.output:
        _output(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(
        f"suggested {len(suggestion.entries)} entries; review them, then `write-gate schema load "
        f"{args.output or 'FILE'}` before `write-gate import {args.file}`",
        file=sys.stderr,
    )
    return 0


def import_text(path: Path, fmt: str) -> str:
    """The file's text; a csv import may be a directory of nodes.csv and edges.csv, read as one sectioned text."""
    if fmt == "csv" and path.is_dir():
        nodes, edges = (path / name for name in ("nodes.csv", "edges.csv"))
        text = "# ENTITIES\n" + nodes.read_text(encoding="utf-8")
        return text + ("\n# RELATIONS\n" + edges.read_text(encoding="utf-8") if edges.exists() else "")
    return path.read_text(encoding="utf-8")


def cmd_import_formats(args: argparse.Namespace, settings: Settings, writer: "WriterContext", agent: "Agent") -> int:
    """`--format` / `--strategy`: the import_graph tool's path (interchange/importer.py)."""
    from rich.console import Console

    from write_gate.interchange.import_parsers import PARSERS
    from write_gate.interchange.import_sniffing import sniff
    from write_gate.interchange.importer import import_records
    from write_gate.serving.spaces import open_space_gate

    fmt = args.format or ("csv" if args.file.is_dir() else None)
    try:
        text = import_text(args.file, fmt or "jsonl")
        fmt = fmt or sniff(text).format  # --strategy alone: the format its content tells
        items = PARSERS[fmt](text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 1
    console = Console(stderr=True)

    async def work():
        async with open_space_gate(settings, args.space, auto_migrate=not args.no_migrate) as gate:
            return await import_records(
                gate,
                items,
                writer,
                agent,
                strategy=args.strategy or "skip",
                dry_run=args.dry_run,
                hierarchy_type=settings.hierarchy_type,
            )

    try:
        answer = anyio.run(work)
    except GateRejection as exc:  # fail: entities exist, nothing written
        print(f"error: {exc.rejected.error_code}: {exc.rejected.message}", file=sys.stderr)
        print(json.dumps(exc.rejected.details, ensure_ascii=False), file=sys.stderr)
        return 1
    if args.report:
        _output(args.report).write_text(answer.model_dump_json(indent=2) + "\n", encoding="utf-8")
    verb = "would be" if args.dry_run else "were"
    console.print(
        f"entities: {answer.entitiesCreated} {verb} created, {answer.entitiesUpdated} updated, "
        f"{answer.entitiesSkipped} skipped; relations: {answer.relationsCreated} created, "
        f"{answer.relationsUpdated} updated, {answer.relationsSkipped} skipped; errors: {len(answer.errors)}"
    )
    for problem in answer.errors[: args.show]:
        place = f"line {problem.line}" if problem.line is not None else f"item {problem.index}"
        console.print(f"  {place} ({problem.kind}): {problem.error_code}: {problem.message}")
    return 1 if answer.errors else 0


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from write_gate.access.agents import Agent
    from write_gate.interchange.formats import parse_memory_file
    from write_gate.interchange.import_sniffing import sniff
    from write_gate.interchange.transfer import import_lines
    from write_gate.services.memory import MemoryService, WriterContext
    from write_gate.serving.assembly import MEMORY_METHOD_SETTING, formula_provider
    from write_gate.serving.spaces import open_space_gate

    writer = WriterContext(
        source=args.source or f"import:{args.file.name}",
        extraction_method=args.extraction_method or settings.memory_extraction_method,
        reliability=settings.memory_reliability if args.reliability is None else args.reliability,
    )
    # Every line would be stamped with this method: one the provider refuses stops here, not at each line.
    named = "--extraction-method" if args.extraction_method else MEMORY_METHOD_SETTING
    formula_provider(settings, stamps=writer.extraction_method, stamps_setting=named)
    agent = Agent(settings.agent or f"import:{args.file.name}")
    if args.format or args.strategy:
        return cmd_import_formats(args, settings, writer, agent)
    if args.file.is_dir():  # nodes.csv and edges.csv
        return cmd_import_formats(args, settings, writer, agent)
    try:
        text = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 1
    sniffed = sniff(text)
    if not sniffed.official:  # the gate's own export, memory-mcp's, a GraphML or CSV file: read it all
        print(f"{args.file} is {sniffed.whose}: imported as --format {sniffed.format}", file=sys.stderr)
        return cmd_import_formats(
            argparse.Namespace(**{**vars(args), "format": sniffed.format}), settings, writer, agent
        )
    items = list(parse_memory_file(text))
    console = Console(stderr=True)

    async def work():
        async with open_space_gate(settings, args.space, auto_migrate=not args.no_migrate) as gate:
            with Progress(console=console, transient=True, disable=args.quiet) as progress:
                task = progress.add_task("dry run" if args.dry_run else "importing", total=len(items))
                return await import_lines(
                    MemoryService(gate),
                    items,
                    writer,
                    agent,
                    batch_size=args.batch_size,
                    dry_run=args.dry_run,
                    advance=lambda n: progress.advance(task, n),
                )

    report = anyio.run(work)
    if args.report:
        text = json.dumps(report.as_dict(), indent=2, ensure_ascii=False) + "\n"
        _output(args.report).write_text(text, encoding="utf-8")
    verb = "would be" if args.dry_run else "were"
    counts = report.counts
    for kind, plural in (("entity", "entities"), ("relation", "relations")):
        console.print(
            f"{plural}: {counts[f'{kind} created']} {verb} created, {counts[f'{kind} skipped']} skipped "
            f"(already there), {counts[f'{kind} rejected']} rejected"
        )
    if counts["line rejected"]:
        console.print(f"unreadable lines: {counts['line rejected']}")
    console.print(f"remapped: {len(report.remapped)} (the original label is kept in _schema_remap_from)")
    for item in report.remapped[: args.show]:
        console.print(f"  line {item['line']}: {item['from']} -> {item['to']}")
    for item in report.rejected[: args.show]:
        console.print(f"  line {item['line']}: rejected {item['error_code']}: {item['message']}")
    hidden = len(report.rejected) + len(report.remapped) - 2 * args.show
    if hidden > 0 and not args.report:
        console.print("  ... more: pass --report FILE for every line")
    if report.stopped:
        done = "nothing was written" if args.dry_run else "the lines before it were imported"
        console.print(f"[red]stopped early[/red]: {report.stopped}; {done}")
        return 1
    if args.dry_run:  # nothing was written: say what an import would do, and exit by whether it would be whole
        if report.rejected:
            console.print(f"dry run, nothing written: {len(report.rejected)} line(s) would be rejected")
            return 1
        console.print("dry run, nothing written: every line would be imported")
        return 0
    if report.rejected:
        console.print(f"[yellow]imported partially[/yellow]: {len(report.rejected)} line(s) rejected")
        return 1
    return 0


def _export_filter(args: argparse.Namespace):
    """The tool's filter from the command line's options, validated by the same model."""
    from write_gate.services.export_read import ExportFilter

    given = {
        "labels": args.labels,
        "entityType": args.entity_type,
        "tags": args.tags,
        "startDate": args.start_date,
        "endDate": args.end_date,
        "minConfidence": args.min_confidence,
    }
    return ExportFilter.model_validate({k: v for k, v in given.items() if v is not None})


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    from pydantic import ValidationError

    from write_gate.core.model import GateRejection, describe_problems
    from write_gate.interchange.exports import EXPORTERS
    from write_gate.interchange.exports.csv_format import write_directory
    from write_gate.services.export_read import read_export
    from write_gate.serving.spaces import open_space_gate

    if args.format == "backup":
        if args.output is None or args.out is not None:
            print(
                "error: --format backup writes one file: give -o FILE (or run `write-gate backup FILE`)",
                file=sys.stderr,
            )
            return 2
        return cmd_backup(argparse.Namespace(file=args.output, space=args.space), settings)
    if args.out is not None and args.format != "csv":
        print("error: --out DIR is for --format csv (nodes.csv and edges.csv); use -o FILE", file=sys.stderr)
        return 2
    try:
        filters = _export_filter(args)
    except ValidationError as exc:
        print(f"error: filter: {describe_problems(exc)}", file=sys.stderr)
        return 2

    async def work():
        async with open_space_gate(settings, args.space, auto_migrate=False) as gate:
            return await read_export(
                gate, filters, include_archived=args.include_archived, hierarchy_type=settings.hierarchy_type
            )

    try:
        graph = anyio.run(work)
    except GateRejection as exc:
        print(f"error: {exc.rejected.error_code}: {exc.rejected.message}", file=sys.stderr)
        return 1
    if args.out is not None:
        for path in write_directory(graph, args.out):
            print(f"wrote {path}", file=sys.stderr)
    else:
        out = _output(args.output).open("w", encoding="utf-8", newline="") if args.output else sys.stdout
        try:
            for chunk in EXPORTERS[args.format](graph):
                out.write(chunk)
        finally:
            if args.output:
                out.close()
    print(f"exported {len(graph.nodes)} entities and {len(graph.relations)} relations", file=sys.stderr)
    return 0


def cmd_backup(args: argparse.Namespace, settings: Settings) -> int:
    from write_gate.interchange.backup import dump

    async def work(backend) -> int:
        count = 0
        with _output(args.file).open("w", encoding="utf-8") as out:
            try:
                async for line in dump(backend):
                    out.write(line)
                    count += 1
            except GateRejection as exc:  # the engine failed: the file is not a backup
                print(f"error: {exc.rejected.error_code}: {exc.rejected.message}", file=sys.stderr)
                return 1
        print(f"backed up the graph to {args.file}: {count - 2} lines of nodes and relationships", file=sys.stderr)
        return 0

    return anyio.run(_with_backend, settings.for_space(args.space), work)


def cmd_restore(args: argparse.Namespace, settings: Settings) -> int:
    from write_gate.core.backup_file import check_backup
    from write_gate.interchange.backup import restore

    try:
        with args.file.open(encoding="utf-8") as lines:
            contents = check_backup(lines)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 1
    except GateRejection as exc:
        print(f"error: {args.file}: {exc.rejected.error_code}: {exc.rejected.message}", file=sys.stderr)
        return 1

    async def work(backend) -> int:
        try:
            restored = await restore(backend, contents, batch_size=args.batch_size)
        except GateRejection as exc:
            print(f"error: {exc.rejected.error_code}: {exc.rejected.message}", file=sys.stderr)
            return 1
        print(
            f"restored {restored.nodes} nodes and {restored.relationships} relationships from {args.file}; "
            f"{len(restored.indexes)} indexes and constraints in place",
            file=sys.stderr,
        )
        return 0

    return anyio.run(_with_backend, settings.for_space(args.space), work)


def cmd_history_prune(args: argparse.Namespace, settings: Settings) -> int:
    from write_gate.core.clock import utc_now
    from write_gate.core.decay import parse_at
    from write_gate.core.retention import retention_cutoff
    from write_gate.store.history_pruning import prune_history

    days = settings.history_retention_days if args.days is None else args.days
    cutoff = retention_cutoff(parse_at(utc_now()), days)
    if cutoff is None:
        given = "WRITE_GATE_HISTORY_RETENTION_DAYS=0" if args.days is None else "--days 0"
        print(f"nothing pruned: {given} keeps every record")
        return 0

    async def work(backend) -> int:
        pruned = await prune_history(backend, cutoff)
        print(
            f"pruned {pruned.total} history records written before {cutoff}: {pruned.changes} changes, "
            f"{pruned.conflicts} settled or resolved conflicts (open conflicts are kept)"
        )
        return 0

    return anyio.run(_with_backend, settings.for_space(args.space), work)


def cmd_embeddings_reembed(args: argparse.Namespace, settings: Settings) -> int:
    from write_gate.services.reembedding import reembed
    from write_gate.serving.spaces import open_space_gate

    if settings.embeddings == "off":
        print("error: embeddings are off: set WRITE_GATE_EMBEDDINGS to local or openai", file=sys.stderr)
        return 2

    def progress(label: str, seen: int, total: int) -> None:
        print(f"{label}: {seen}/{total}", file=sys.stderr, flush=True)

    async def work() -> int:
        async with open_space_gate(settings, args.space) as gate:
            assert gate.embeddings is not None
            done = await reembed(gate, args.chunk, progress)
            model = gate.embeddings.provider.model
        print(f"re-embedded {done.entities} entities with {model}; {done.current} were already embedded by it")
        return 0

    return anyio.run(work)


def cmd_engine_check(args: argparse.Namespace, settings: Settings) -> int:
    from write_gate.engines.engine_check import check_folder

    result = check_folder(settings.data_dir)
    if args.report and result.details:
        print(result.details.rstrip())
    print(
        result.summary if result.whole else f"error: {result.summary}", file=sys.stdout if result.whole else sys.stderr
    )
    return 0 if result.whole else 1


def _positive_int(text: str) -> int:
    value = int(text) if text.strip().isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive whole number")
    return value


def cmd_agents_add(args: argparse.Namespace, settings: Settings) -> int:
    from write_gate.access.agents import PRESETS, AgentsFile, Grant

    path = args.file or settings.agents_file
    if path is None:
        print("error: give --file or set WRITE_GATE_AGENTS_FILE", file=sys.stderr)
        return 2
    preset = PRESETS[args.grant]
    grant = Grant(
        tools=tuple(args.tools) if args.tools else preset.tools,
        labels=tuple(args.labels) if args.labels else preset.labels,
        relationship_types=tuple(args.types) if args.types else preset.relationship_types,
        max_writes_per_minute=args.max_writes_per_minute,
        max_batch_items=args.max_batch_items,
        spaces=tuple(args.spaces or ()),
    )
    agents = AgentsFile.load(path)
    token = agents.add(args.name, grant)
    agents.save()
    print(token)  # shown once: only its hash is stored
    print(
        f"agent {args.name!r} saved in {path} with {grant.model_dump(exclude_none=True)}; keep the token above, it is "
        "not stored; "
        "running gates use it (and drop the agent's old token) from their next request",
        file=sys.stderr,
    )
    return 0


def cmd_agents_remove(args: argparse.Namespace, settings: Settings) -> int:
    from write_gate.access.agents import AgentsFile

    path = args.file or settings.agents_file
    if path is None:
        print("error: give --file or set WRITE_GATE_AGENTS_FILE", file=sys.stderr)
        return 2
    agents = AgentsFile.load(path)
    if not agents.remove(args.name):
        print(f"error: {path} lists no agent {args.name!r}", file=sys.stderr)
        return 1
    agents.save()
    print(f"agent {args.name!r} removed from {path}; running gates refuse its token from their next request")
    return 0


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 0 to 1")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1 to 65535)")
    return int(text)


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = -1.0
    if not (0 <= days < float("inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days (0 or more)")
    return days


def _space(text: str) -> str:
    from write_gate.core.spaces import check_space_name

    try:
        return check_space_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _in_space(command: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """`--space NAME`: the command works on that space's graph (default: WRITE_GATE_DEFAULT_SPACE)."""
    command.add_argument("--space", type=_space, help="a space of WRITE_GATE_SPACES (default: the default space)")
    return command


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="write-gate", description="A schema-and-provenance gate for a shared graph.")
    top.add_argument("--version", action="version", version=f"write-gate {__version__}")
    top.add_argument("-v", "--verbose", action="store_true", help="log at debug level (to stderr)")
    sub = top.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the MCP tools (stdio by default)")
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    serve.add_argument("--host", help="HTTP: address to bind (default: WRITE_GATE_HOST, else 127.0.0.1)")
    serve.add_argument("--port", type=_port, help="HTTP: port (default: WRITE_GATE_PORT, else 8000)")
    serve.add_argument(
        "--profile",
        choices=["gate", "memory", "mesh"],
        default="gate",
        help="gate: the writes, the reads and the schema; memory: the official memory server's nine tools; mesh: "
        "MemoryMesh's eleven and the typed tools (more with --toolsets)",
    )
    serve.add_argument(
        "--toolsets",
        help=f"toolsets listed beside the profile's defaults ({', '.join(TOOLSETS)}; all: every one); "
        "default: WRITE_GATE_TOOLSETS",
    )
    serve.add_argument(
        "--embeddings",
        choices=["off", "local", "openai"],
        help="embed what is written, for search_nodes_ranked's semantic and hybrid modes (default: "
        "WRITE_GATE_EMBEDDINGS, else off; docs/tools/semantic-search.md)",
    )
    serve.add_argument(
        "--dynamic-toolsets",
        action="store_true",
        help="discovery mode: agents also see list_toolsets and enable_toolset (default: WRITE_GATE_DYNAMIC_TOOLSETS)",
    )
    serve.add_argument(
        "--no-auth",
        action="store_true",
        help="HTTP without bearer tokens (development only; refused with WRITE_GATE_AGENTS_FILE set)",
    )
    serve.add_argument(
        "--http-response",
        choices=["sse", "json"],
        help="HTTP: answer a call as an event stream (progress on it, resumable) or as one JSON body (faster); "
        "default: WRITE_GATE_HTTP_RESPONSE, else sse",
    )
    serve.add_argument(
        "--stateless",
        action="store_true",
        help="HTTP: no sessions, so any replica behind a load balancer answers any call (no subscriptions, "
        "list_changed or resumption; follow changes with changes_since); default: WRITE_GATE_STATELESS",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="HTTP with --stateless: N gate processes on one port (SO_REUSEPORT), for up to N cores; SIGTERM stops "
        "them all, and a worker that ends on its own stops the serve with exit code 1 (default: 1)",
    )
    serve.add_argument("--no-migrate", action="store_true", help="do not apply pending migrations at start-up")
    serve.add_argument(
        "--metrics-port",
        type=_port,
        help="stdio: serve Prometheus metrics at http://127.0.0.1:PORT/metrics (default: WRITE_GATE_METRICS_PORT)",
    )
    serve.set_defaults(func=cmd_serve)

    console = sub.add_parser(
        "console",
        help="the web console on 127.0.0.1, opened by the one-time link it prints (docs/operations/console.md)",
    )
    console.add_argument("--port", type=_port, help="default: WRITE_GATE_CONSOLE_PORT, else 8765")
    console.add_argument("--no-migrate", action="store_true", help="do not apply pending migrations at start-up")
    console.set_defaults(func=cmd_console)

    mig = sub.add_parser("migrate", help="apply pending migrations, each once, recorded in the graph")
    mig.add_argument("--migrations", type=Path, default=None, help="folder of migrations (default: the bundled one)")
    mig.add_argument("--schemas", type=Path, default=None, help="schemas folder that migrations load from")
    _in_space(mig).set_defaults(func=cmd_migrate)

    schema = sub.add_parser("schema", help="manage the schema registry")
    schema_sub = schema.add_subparsers(dest="schema_command", required=True)
    load = schema_sub.add_parser("load", help="create or update :Schema nodes from registry source files")
    load.add_argument("paths", nargs="+", type=Path, help="JSON files or folders of them")
    load.add_argument("--no-migrate", action="store_true", help="do not apply pending migrations first")
    _in_space(load).set_defaults(func=cmd_schema_load)
    suggest = schema_sub.add_parser(
        "suggest", help="draft registry entries for the types an official memory file uses that are not covered"
    )
    suggest.add_argument("file", type=Path, help="memory.jsonl (or memory.json)")
    suggest.add_argument("--output", "-o", type=Path, help="write the draft here (default: standard output)")
    suggest.add_argument("--no-migrate", action="store_true", help="do not apply pending migrations first")
    _in_space(suggest).set_defaults(func=cmd_schema_suggest)
    imp = sub.add_parser(
        "import",
        help="import a file, its kind told by its content: the official memory server's memory.jsonl (or "
        "memory.json) as that server would write it; the gate's own export, memory-mcp's file, GraphML or CSV as "
        "with --format; --format or --strategy choose json, jsonl, csv or graphml under a merge strategy",
    )
    imp.add_argument("file", type=Path, help="the file (csv: also a directory of nodes.csv and edges.csv)")
    imp.add_argument(
        "--format", choices=["json", "jsonl", "csv", "graphml"], help="default: told by the file's content"
    )
    imp.add_argument(
        "--strategy",
        choices=["skip", "update", "replace", "merge", "fail"],
        help="for entities that exist (default skip); fail writes nothing if any does",
    )
    imp.add_argument("--dry-run", action="store_true", help="decide every line, write nothing")
    imp.add_argument("--batch-size", type=_positive_int, default=500)
    imp.add_argument("--report", type=Path, help="write every line's rejection and remap to this JSON file")
    imp.add_argument("--source", help="provenance source (default: import:<file name>)")
    imp.add_argument("--extraction-method", help="default: WRITE_GATE_MEMORY_EXTRACTION_METHOD (llm)")
    imp.add_argument("--reliability", type=_fraction, help="the source's reliability, 0 to 1")
    imp.add_argument("--show", type=int, default=20, help="how many rejections and remaps to print")
    imp.add_argument("--quiet", action="store_true", help="no progress bar")
    imp.add_argument("--no-migrate", action="store_true")
    _in_space(imp).set_defaults(func=cmd_import)

    agents = sub.add_parser("agents", help="manage the agents file (tokens and grants)")
    agents_sub = agents.add_subparsers(dest="agents_command", required=True)
    add = agents_sub.add_parser("add", help="add an agent (or give it a new token); prints the token once")
    add.add_argument("name")
    add.add_argument(
        "--grant",
        choices=["full", "writer", "reader"],
        default="writer",
        help="full: every tool; writer: read and write tools; reader: read tools only",
    )
    add.add_argument(
        "--tools", nargs="+", help="tool names, groups (read, write, admin, *) or toolsets (also listed to it) instead"
    )
    add.add_argument("--labels", nargs="+", help='labels it may write (default: "*", any)')
    add.add_argument("--types", nargs="+", help='relationship types it may write (default: "*")')
    add.add_argument("--max-writes-per-minute", type=_positive_int, help="write and admin calls a minute, per gate")
    add.add_argument("--max-batch-items", type=_positive_int, help="items in one list argument of a write")
    add.add_argument("--spaces", nargs="+", type=_space, help="spaces it may use, its own default first")
    add.add_argument("--file", type=Path, help="default: WRITE_GATE_AGENTS_FILE")
    add.set_defaults(func=cmd_agents_add)
    remove = agents_sub.add_parser("remove", help="remove an agent: its token stops working")
    remove.add_argument("name")
    remove.add_argument("--file", type=Path, help="default: WRITE_GATE_AGENTS_FILE")
    remove.set_defaults(func=cmd_agents_remove)

    engine = sub.add_parser("engine", help="the embedded engine's data folder")
    engine_sub = engine.add_subparsers(dest="engine_command", required=True)
    check = engine_sub.add_parser("check", help="check that the data folder's append-only files are whole (read-only)")
    check.add_argument("--report", action="store_true", help="print the checker's full report")
    check.set_defaults(func=cmd_engine_check)

    history = sub.add_parser("history", help="the change history and conflict records")
    history_sub = history.add_subparsers(dest="history_command", required=True)
    prune = history_sub.add_parser(
        "prune", help="delete change records and decided conflicts older than the retention (open ones stay)"
    )
    prune.add_argument(
        "--days", type=_days, help="keep this many days instead of WRITE_GATE_HISTORY_RETENTION_DAYS (0: keep all)"
    )
    _in_space(prune).set_defaults(func=cmd_history_prune)

    embeddings = sub.add_parser("embeddings", help="the vectors semantic search reads (WRITE_GATE_EMBEDDINGS)")
    embeddings_sub = embeddings.add_subparsers(dest="embeddings_command", required=True)
    reembed = embeddings_sub.add_parser(
        "reembed", help="embed every entity again with the configured model (after a change); resumable"
    )
    reembed.add_argument("--chunk", type=_positive_int, default=500, help="entities a provider call (default 500)")
    _in_space(reembed).set_defaults(func=cmd_embeddings_reembed)

    backup = sub.add_parser("backup", help="write every node and relationship, as stored, to a JSON-lines file")
    backup.add_argument("file", type=Path)
    _in_space(backup).set_defaults(func=cmd_backup)
    restore = sub.add_parser("restore", help="restore a `write-gate backup` file into an empty graph")
    restore.add_argument("file", type=Path)
    restore.add_argument("--batch-size", type=_positive_int, default=1000)
    _in_space(restore).set_defaults(func=cmd_restore)

    from write_gate.interchange.exporting import FORMATS

    exp = sub.add_parser("export", help=f"write the graph as {', '.join(FORMATS)} (each node named label:_key)")
    exp.add_argument("--format", choices=FORMATS, default="jsonl")
    exp.add_argument("--labels", nargs="+", help="only these labels (and relations among them)")
    exp.add_argument("--entity-type", help="only this label (memory-mcp's entityType)")
    exp.add_argument("--tags", nargs="+", help="only entities with any of these tags")
    exp.add_argument("--start-date", help="only entities last updated at or after this day or time")
    exp.add_argument("--end-date", help="only entities last updated at or before this day (all of it) or time")
    exp.add_argument("--min-confidence", type=float, help="only entities of at least this confidence")
    exp.add_argument("--include-archived", action="store_true", help="archived entities too")
    exp.add_argument("--output", "-o", type=Path, help="default: standard output")
    exp.add_argument("--out", type=Path, help="with --format csv: a directory for nodes.csv and edges.csv")
    _in_space(exp).set_defaults(func=cmd_export)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        settings = Settings()
    except ValueError as exc:
        print(f"error: configuration: {exc}", file=sys.stderr)
        return 2
    # stdout carries the MCP stdio protocol: every log line goes to stderr, as one JSON object.
    logs.configure("DEBUG" if args.verbose else settings.log_level)
    memory_file = os.environ.get("MEMORY_FILE_PATH")
    if (
        args.command == "serve"
        and args.profile == "memory"
        and memory_file
        and "data_dir" not in settings.model_fields_set
        and settings.backend is BackendKind.EMBEDDED
    ):
        args.memory_folder = memory_file_folder(memory_file)
        args.memory_folder_due = memory_file_due(args.memory_folder)  # before anything makes the folder
        settings = settings.model_copy(update={"data_dir": args.memory_folder})
    try:
        if settings.backend is BackendKind.EMBEDDED and args.command != "agents":
            from write_gate.engines.embedded import check_data_folder

            check_data_folder(settings.data_dir)  # a refused data folder: one line, before any server starts
        if "space" in args:  # a command on the graph: the space it names must be served
            from write_gate.serving.spaces import served_space

            args.space = served_space(settings, args.space)
        return args.func(args, settings)
    except (BackendUnavailable, BackendError) as exc:
        print(f"error: graph engine: {exc}", file=sys.stderr)
        return 1
    except AgentsFileError as exc:
        print(f"error: agents file: {exc}", file=sys.stderr)
        return 2
    except ConfigurationError as exc:  # a setting the server cannot start with: the same line on every transport
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BaseExceptionGroup as group:  # serve opens the engine inside the MCP server's task group
        engine_failures = group.subgroup((BackendUnavailable, BackendError))
        if engine_failures is None:
            raise
        first: BaseException = engine_failures
        while isinstance(first, BaseExceptionGroup):  # the first engine failure, however deeply nested
            first = first.exceptions[0]
        print(f"error: graph engine: {first}", file=sys.stderr)
        return 1
    except OSError as exc:  # a bad path (missing folder, a folder where a file belongs): one line, no traceback
        named = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {named}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
