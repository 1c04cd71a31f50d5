"""Where the test suite's time goes, by area, from a JUnit XML report of a run:

    uv run pytest --junitxml=run.xml
    uv run python bench/suite_areas.py run.xml [other.xml ...]

Areas: unit, integration, e2e per engine tier (embedded, falkordb, bolt; "no engine" where a test asks for none),
the clients tier, the official memory server's comparison, and the README and docs pages' tests. Seconds are test
seconds (setup, call and teardown summed over the area's tests): with several workers they add up to more than the
run's wall time, which the run itself prints. Given two reports, the table sets them side by side (before, after)."""

import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

TIERS = ("embedded", "falkordb", "bolt", "memgraph")
README = ("test_readme", "test_docs_site", "test_docs_figures", "test_toolsets_docs", "test_console_docs")


def area(classname: str, name: str) -> str:
    path = classname.replace(".", "/")
    if "/clients/" in f"/{path}/":
        return "clients"
    if "/official_memory/" in f"/{path}/":
        return "official memory"
    if any(module in path for module in README):
        return "README and docs"
    if path.startswith("tests/unit"):
        return "unit"
    params = re.search(r"\[(.*)\]$", name)
    tier = next((t for t in TIERS if params and re.search(rf"(^|-){t}(-|$)", params.group(1))), "no engine")
    layer = "integration" if path.startswith("tests/integration") else "e2e"
    return f"{layer}, {tier}"


def times(report: Path) -> tuple[Counter[str], Counter[str], list[tuple[float, str]]]:
    seconds: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    tests: list[tuple[float, str]] = []
    for case in ET.parse(report).iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        took = float(case.get("time", "0"))
        where = area(classname, name)
        seconds[where] += took
        counts[where] += 1
        tests.append((took, f"{classname.replace('.', '/')}.py::{name}"))
    return seconds, counts, sorted(tests, reverse=True)


def main(reports: list[Path]) -> None:
    runs = [times(report) for report in reports]
    areas = sorted(set().union(*(seconds for seconds, _, _ in runs)), key=lambda a: -runs[-1][0][a])
    header = " | ".join(f"{report.stem}: tests | s" for report in reports)
    print(f"| area | {header} |")
    print("|---|" + "---|---|" * len(runs))
    for where in [*areas, "total"]:
        cells = []
        for seconds, counts, _ in runs:
            total = sum(seconds.values()) if where == "total" else seconds[where]
            count = sum(counts.values()) if where == "total" else counts[where]
            cells.append(f"{count:,} | {total:,.0f}")
        print(f"| {where} | {' | '.join(cells)} |")
    print(f"\nslowest 30 of {reports[-1].stem}:")
    for took, test in runs[-1][2][:30]:
        print(f"{took:8.1f} s  {test}")


if __name__ == "__main__":
    main([Path(arg) for arg in sys.argv[1:]] or sys.exit(__doc__))
