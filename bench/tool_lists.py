"""What tools/list costs an agent, per profile and toolsets: tools and bytes (compact JSON of the tools, UTF-8), as
a real client lists them over stdio from `write-gate serve` on a fresh data folder (migrated, as a first start
leaves it). Prints the Markdown table docs/tools/toolsets.md holds (tests/e2e/test_toolsets_table.py recomputes it).

    uv run python bench/tool_lists.py
    uv run python bench/tool_lists.py --write-gate "python -m write_gate.cli" --pythonpath OTHER/src  # another build

The rpg rows load the bundled example schemas (schemas/examples/rpg), whose typed tools the gate generates.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import anyio
from mcp import Client, Implementation, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
RPG = ROOT / "schemas" / "examples" / "rpg"


@dataclass(frozen=True)
class Case:
    name: str  # as the table's first column says it
    profile: str
    toolsets: str = ""  # --toolsets
    dynamic: bool = False  # --dynamic-toolsets
    rpg: bool = False

    @property
    def options(self) -> list[str]:
        return [
            *(["--toolsets", self.toolsets] if self.toolsets else []),
            *(["--dynamic-toolsets"] if self.dynamic else []),
        ]


CASES = (
    Case("memory profile", "memory"),
    Case("memory profile, `--toolsets all`", "memory", "all"),
    Case("gate profile", "gate"),
    Case("gate profile, `--toolsets all`", "gate", "all"),
    Case("gate profile + rpg schemas", "gate", rpg=True),
    Case("gate profile + rpg schemas, `--toolsets all`", "gate", "all", rpg=True),
    Case("gate profile, `--dynamic-toolsets`", "gate", dynamic=True),
    Case("mesh profile", "mesh"),
    Case("mesh profile + rpg schemas", "mesh", rpg=True),
)


def tools_bytes(tools: list[dict]) -> int:
    return len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode())


def default_command() -> list[str]:
    exe = shutil.which("write-gate", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "write_gate.cli"]


def clean_env(data_dir: Path, pythonpath: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WRITE_GATE_", "MEMGRAPH_", "FALKORDB_"))}
    env |= {"WRITE_GATE_DATA_DIR": str(data_dir), "WRITE_GATE_LOG_LEVEL": "WARNING"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


async def measure(case: Case, command: list[str], pythonpath: str | None = None) -> tuple[int, int]:
    """(tools, bytes) of the case's tools/list, from a server of `command` on a fresh data folder."""
    with tempfile.TemporaryDirectory(prefix="wg-tool-lists-") as folder:
        env = clean_env(Path(folder), pythonpath)
        if case.rpg:
            for step in (["migrate"], ["schema", "load", str(RPG)]):
                subprocess.run([*command, *step], env=env, check=True, capture_output=True, timeout=300)
        argv = [*command, "serve", "--profile", case.profile, *case.options]
        server = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
        info = Implementation(name="tool-lists", version="1")
        async with Client(server, mode="legacy", read_timeout_seconds=120, client_info=info) as client:
            tools = [
                t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await client.list_tools()).tools
            ]
    return len(tools), tools_bytes(tools)


def table(after: dict[str, tuple[int, int]], before: dict[str, tuple[int, int]] | None = None) -> list[str]:
    head = "| configuration | tools | bytes |"
    rule = "|---|---|---|"
    if before is not None:
        head, rule = "| configuration | before: tools | before: bytes | tools | bytes |", "|---|---|---|---|---|"
    lines = [head, rule]
    for case in [case for case in CASES if case.name in after]:
        was = ""
        if before is not None:
            tools, size = before.get(case.name, (None, None))
            was = f" {tools if tools is not None else 'n/a'} | {f'{size:,}' if size is not None else 'n/a'} |"
        lines.append(f"| {case.name} |{was} {after[case.name][0]} | {after[case.name][1]:,} |")
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-gate", help="the server command to measure (default: this environment's)")
    parser.add_argument("--pythonpath", help="PYTHONPATH for that command (another checkout's src)")
    parser.add_argument("--json", action="store_true", help="print {case: [tools, bytes]} instead of the table")
    parser.add_argument("--only", help="measure this configuration only (as the table's first column names it)")
    args = parser.parse_args()
    command = shlex.split(args.write_gate) if args.write_gate else default_command()
    figures = {}
    for case in [case for case in CASES if args.only in (None, case.name)]:
        try:
            figures[case.name] = await measure(case, command, args.pythonpath)
        except Exception as exc:  # an older build without the case's options: the table says n/a
            print(f"{case.name}: not measured ({type(exc).__name__})", file=sys.stderr)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print("\n".join(table(figures)))


if __name__ == "__main__":
    anyio.run(main)
