"""The web console as a person uses it: a real browser (Playwright for Python driving Debian's chromium) against
`write-gate serve --transport http`, on the embedded engine and on the Bolt tier. It logs in, replays a quarantined
write, resolves a conflict, watches a change arrive, explores a neighbourhood, and is refused without the admin
grant, without a CSRF token and from another origin; each page's screenshot is taken (to docs/console/ with
WRITE_GATE_CONSOLE_SCREENSHOTS=docs/console, on the embedded run).
The same gate's /metrics is scraped and parsed. One browser serves the whole module (docs/operations/console.md)."""

import json
import os
import re
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import TESTS, ok, rejected, settings_env, write_gate_argv
from tests.e2e.http_process import free_port, http_gate, mcp_client, request
from write_gate.access.agents import FULL, PRESETS, READER, AgentsFile, Grant
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources

pytestmark = pytest.mark.anyio

CHROMIUM = "/usr/bin/chromium"
# Flags that keep chromium from reaching for a network this machine does not have (it stalls otherwise).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The documentation's screenshots are written where this names (`WRITE_GATE_CONSOLE_SCREENSHOTS=docs/console`, on the
# embedded run); otherwise to the test's own folder, so a test run leaves the repository as it was.
SCREENSHOTS = os.environ.get("WRITE_GATE_CONSOLE_SCREENSHOTS")
CONFLICT_SCHEMAS = TESTS / "schemas" / "conflicts"
WAIT_MS = 60_000  # how long the page may take to show what the test waits for (a loaded machine), never a sleep


# Where each node of the drawn neighbourhood lies, to the pixel.
PLACES = """() => window.writeGateGraph.nodes().map(
  (n) => [n.id(), Math.round(n.position("x")), Math.round(n.position("y"))])"""

# In the drawn neighbourhood, the pairs of things that overlap: a node's label and another node's or an edge's label,
# or a node's label and an edge's line (sampled along it, ends and their nodes left out).
LABEL_CLASHES = """() => {
  const cy = window.writeGateGraph, clashes = [];
  const box = (e) => e.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true });
  const meets = (a, b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
  const inside = (p, b) => p.x > b.x1 && p.x < b.x2 && p.y > b.y1 && p.y < b.y2;
  const labels = cy.elements().filter((e) => e.data("label")).map((e) => [e.id(), box(e), e]);
  cy.nodes().forEach((n) => {
    const mine = box(n);
    labels.forEach(([id, other]) => { if (id !== n.id() && meets(mine, other)) { clashes.push([n.id(), id]); } });
    cy.edges().forEach((e) => {
      if (e.source().same(n) || e.target().same(n)) { return; }
      const a = e.sourceEndpoint(), b = e.targetEndpoint();
      for (let i = 1; i < 50; i++) {
        const t = i / 50, p = { x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t };
        if (inside(p, mine)) { clashes.push([n.id(), e.id() + " line"]); break; }
      }
    });
  });
  return clashes;
}"""


@pytest.fixture(scope="module")
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed here (.ci/run installs it with apt-get)")
    from playwright.async_api import async_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True
        )
        yield context.browser or context
        await context.close()


def person(name: str, source: str = "crm", **props: Any) -> dict[str, Any]:
    keys = {"name": name}
    return {"label": "Person", "merge_keys": keys, "properties": props, "source": source, "extraction_method": "api"}


def knows(start: str, end: str) -> dict[str, Any]:
    return {
        "type": "KNOWS",
        "from_label": "Person",
        "from_keys": {"name": start},
        "to_label": "Person",
        "to_keys": {"name": end},
        "source": "crm",
        "extraction_method": "api",
    }


def agents_file(path: Path) -> dict[str, str]:
    agents = AgentsFile.load(path)
    tokens = {
        "operator": agents.add("operator", FULL),
        "writer": agents.add("writer", PRESETS["writer"]),
        "importer": agents.add("importer", PRESETS["writer"]),
        "reader": agents.add("reader", READER),
        "prometheus": agents.add("prometheus", Grant(tools=("metrics",), labels=(), relationship_types=())),
    }
    agents.save()
    return tokens


def scrape(url: str, token: str | None) -> tuple[int, str]:
    status, _, body = request(url, "GET", "/metrics", headers={"Authorization": f"Bearer {token}"} if token else {})
    return status, body


def sample(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return 0.0


@pytest.mark.parametrize("engine", ["embedded", "bolt"], indirect=True)
async def test_an_operator_works_through_the_console(
    browser: Any, settings: Settings, graph, tmp_path: Path, engine
) -> None:  # noqa: E501
    from playwright.async_api import expect

    shots = engine.backend.value == "embedded"  # the documentation's screenshots, from one run
    shots_dir = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path / "screenshots"
    shots_dir.mkdir(parents=True, exist_ok=True)
    await migrate(graph)  # the shipped registry first, so the test's Person (city: keep_both) is the one in force
    await load_into_graph(graph, read_sources([CONFLICT_SCHEMAS]))
    tokens = agents_file(tmp_path / "agents.toml")
    settings = settings.model_copy(update={"agents_file": tmp_path / "agents.toml"})
    live = {"WRITE_GATE_CHANGE_SETTLE_SECONDS": "0", "WRITE_GATE_CONSOLE_POLL_SECONDS": "0.25"}
    with http_gate(settings, tmp_path / "gate.log", **live) as gate:
        async with mcp_client(gate.url, tokens["writer"]) as writer:
            await ok(writer, "write_node", person("Alice", source="crm", city="Paris"))
            async with mcp_client(gate.url, tokens["importer"]) as importer:  # another agent claims her city
                held = await ok(importer, "write_node", person("Alice", source="hr-import", city="Berlin"))
            assert [c["outcome"] for c in held["conflicts"]] == ["open"], held  # keep_both: Berlin held beside Paris
            await ok(writer, "write_node", person("Bob"))
            await ok(writer, "write_relationship", knows("Alice", "Bob"))
            refused = await rejected(writer, "write_relationship", knows("Alice", "Carol"))
            assert refused["error_code"] == "ENDPOINT_NOT_FOUND"  # kept in the quarantine
            await ok(writer, "write_node", person("Carol"))
            drift = {**person("Enterprise"), "label": "Starship"}  # remapped onto the fallback label
            assert (await ok(writer, "write_node", drift))["remapped_from"] == ":Starship"

            context = await browser.new_context(base_url=gate.url, viewport={"width": 1280, "height": 900})
            page = await context.new_page()
            page.set_default_timeout(WAIT_MS)
            # Every error the browser reports (console messages, uncaught exceptions) fails the test.
            errors: list[str] = []
            page.on("console", lambda m: errors.append(f"{m.text} at {m.location}") if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))

            async def shot(name: str) -> None:
                if shots:
                    await page.screenshot(path=str(shots_dir / f"{name}.png"), full_page=True)

            # Not logged in: the login page. A reader's token is refused: the console needs the admin grant.
            await page.goto("/console/")
            assert page.url.endswith("/console/login")
            await shot("login")
            await page.fill("input[name=token]", tokens["reader"])
            async with page.expect_response(lambda r: r.url.endswith("/console/login")) as answered:
                await page.click("#login button")
            assert (await answered.value).status == 403
            await expect(page.locator(".refusal")).to_have_attribute("data-error-code", "PERMISSION_DENIED")
            # The refusal's status is the one error the browser reports here.
            assert [e.split(" at ")[0] for e in errors] == [
                "Failed to load resource: the server responded with a status of 403 (Forbidden)"
            ], errors
            errors.clear()

            # The operator logs in: an HttpOnly, SameSite=Strict cookie; pages forbid inline scripts.
            await page.goto("/console/login")
            await page.fill("input[name=token]", tokens["operator"])
            await page.click("#login button")
            await page.wait_for_url("**/console/")
            [cookie] = [c for c in await context.cookies() if c["name"] == "write_gate_console"]
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/console"
            overview = await page.request.get("/console/")
            csp = overview.headers["content-security-policy"]
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
            await expect(page.locator("#total-entities")).to_have_text("4")  # Alice, Bob, Carol, Enterprise
            await expect(page.locator("#open-conflicts")).to_have_text("1")
            await expect(page.locator("#writes figcaption").first).to_contain_text("all")
            await expect(page.locator("#rejections")).to_contain_text("ENDPOINT_NOT_FOUND")
            plot = page.locator("#writes svg").first  # drawn at the size the page gives it
            assert (await plot.get_attribute("viewBox"), await plot.get_attribute("width")) == ("0 0 600 120", "600")
            assert errors == [], "\n".join(errors)
            await shot("overview")

            # The registry, and the drift `schema suggest` finds: Starship, with the entry it would draft.
            await page.goto("/console/registry")
            await expect(page.locator("#labels")).to_contain_text("Person")
            await expect(page.locator("#drift")).to_contain_text("Starship")
            await expect(page.locator("#draft-document")).to_contain_text('"name": "Starship"')
            await shot("registry")

            # The quarantine: the write that found no Carol, inspected, then replayed now that she exists.
            await page.goto("/console/quarantine")
            row = page.locator("#entries tr", has_text="ENDPOINT_NOT_FOUND")
            await expect(row).to_have_count(1)
            await row.locator("summary").click()
            await expect(row.locator("pre")).to_contain_text('"Carol"')
            await shot("quarantine")
            await row.locator("input[type=checkbox]").check()
            await page.click("#replay")
            await expect(page.locator("#outcome li")).to_have_attribute("data-status", "written")
            await expect(page.locator("#entries")).to_contain_text("holds no matching write")
            opened = await ok(writer, "open_nodes", {"names": ["Alice"]})
            assert {(r["from"], r["to"]) for r in opened["relations"]} == {("Alice", "Bob"), ("Alice", "Carol")}

            # The conflict, claim beside claim; the operator keeps the incoming value.
            await page.goto("/console/conflicts")
            conflict = page.locator("article.conflict")
            await expect(conflict).to_have_count(1)
            await expect(conflict.locator("tr.side.current")).to_contain_text("crm")
            await expect(conflict.locator("tr.side.incoming")).to_contain_text("hr-import")
            await shot("conflicts")
            await conflict.locator("button.pick-incoming").click()
            await expect(page.locator("#outcome")).to_contain_text("incoming")
            await expect(page.locator("#no-conflicts")).to_be_visible()
            resolved = (await ok(writer, "list_conflicts", {"status": "resolved"}))["conflicts"]
            assert [(c["resolved_by"], c["picked"]) for c in resolved] == [("operator", "incoming")]
            alice = (await ok(writer, "open_nodes", {"names": ["Alice"]}))["entities"][0]
            assert alice["properties"]["city"] == "Berlin"

            # History, live: a change an agent makes now appears without a reload.
            await page.goto("/console/history")
            await expect(page.locator("#changes")).to_contain_text("resolve")  # the operator's resolve is history
            await expect(page.locator("#live-state")).to_contain_text("Live")
            await ok(writer, "write_node", person("Dave", role="<b>pilot</b>"))
            fresh = page.locator("#changes tbody tr.fresh", has_text="Dave")
            await expect(fresh).to_have_count(1)
            await expect(fresh).to_contain_text("writer")
            # Values are text, the same in the live row and in the row the server renders after a reload.
            live_values = await fresh.locator("td").nth(4).inner_text()
            assert 'role: null → "<b>pilot</b>"' in live_values, live_values
            dave = await fresh.get_attribute("data-change-id")
            await page.reload()
            rendered = page.locator(f'#changes tbody tr[data-change-id="{dave}"]')
            assert await rendered.locator("td").nth(4).inner_text() == live_values
            await shot("history")

            # Agents: grants, toolsets, last write and rejections.
            await page.goto("/console/agents")
            writer_row = page.locator('#agents tr[data-agent="writer"]')
            await expect(writer_row).to_contain_text("read, write")
            await expect(page.locator('#agents tr[data-agent="operator"]')).to_be_visible()
            # The importer's one write held its value beside Alice's (keep_both): written, and counted.
            await expect(page.locator('#agents tr[data-agent="importer"] td.num').first).to_have_text("1")
            await shot("agents")

            # Explore: search, then Alice's neighbourhood drawn by Cytoscape.js, her values with their claims.
            await page.goto("/console/explore")
            await page.fill("#search input[name=q]", "Alice")
            await page.click("#search button")
            await page.click("#hits a:text-is('Alice')")
            graph_box = page.locator("#graph[data-ready=true]")
            await expect(graph_box).to_have_attribute("data-nodes", "3")
            await expect(graph_box).to_have_attribute("data-edges", "2")
            await expect(page.locator("#claims")).to_contain_text("hr-import")  # Berlin's claim, as resolved
            # Laid out readably: no node's label lies on another label or across an edge; and the same way each time
            # (from one shared starting place the layout spread the nodes at random: one drawing in ten clashed).
            assert await page.evaluate(LABEL_CLASHES) == []
            drawn = await page.evaluate(PLACES)
            await page.reload()
            await expect(page.locator("#graph[data-ready=true]")).to_have_attribute("data-nodes", "3")
            assert await page.evaluate(PLACES) == drawn
            await shot("explore")

            # Refused: a form posted without its CSRF token, and one from another origin (token and all).
            json_accept = {"Accept": "application/json"}
            no_token = await page.request.post("/console/quarantine/discard", form={"ids": "x"}, headers=json_accept)
            assert no_token.status == 403
            assert (await no_token.json())["details"] == {"reason": "csrf"}
            csrf = await page.locator("meta[name=csrf-token]").get_attribute("content")
            elsewhere = await page.request.post(
                "/console/quarantine/discard",
                form={"ids": "x", "csrf": csrf or ""},
                headers={**json_accept, "Origin": "http://evil.example"},
            )
            assert elsewhere.status == 403 and "Origin" in await elsewhere.text()
            # Bad input gets the tools' structured refusal.
            bad = await page.request.get("/console/history?key=name%3DAlice", headers=json_accept)
            assert bad.status == 400
            body = await bad.json()
            assert body["status"] == "rejected" and body["error_code"] == "INVALID_INPUT", body
            assert errors == [], "\n".join(errors)
            await context.close()

        # The same gate's metrics: the console's actions were counted as the operator's calls.
        assert scrape(gate.url, None)[0] == 401
        assert scrape(gate.url, tokens["reader"])[0] == 403
        status, text = scrape(gate.url, tokens["prometheus"])
        assert status == 200
        calls = "write_gate_tool_calls_total"
        assert sample(text, calls, tool="replay_quarantine", agent="operator", outcome="ok") == 1
        assert sample(text, calls, tool="resolve_conflict", agent="operator", outcome="ok") == 1
        assert sample(text, "write_gate_tool_calls_total", tool="write_relationship", agent="writer",
                      outcome="rejected", error_code="ENDPOINT_NOT_FOUND") == 1  # fmt: skip
        assert sample(text, "write_gate_quarantine_entries", space="main") == 0
        assert sample(text, "write_gate_open_conflicts", space="main") == 0
        assert sample(text, "write_gate_engine_statements_total", operation="write", outcome="ok") > 0


async def test_the_console_command_opens_once_by_its_printed_link(
    browser: Any, settings: Settings, tmp_path: Path
) -> None:  # noqa: E501
    port = free_port()
    log = (tmp_path / "console.log").open("w+")
    out = tmp_path / "console.out"
    with out.open("w") as printed:
        process = subprocess.Popen(
            write_gate_argv("console", "--port", str(port)), env=settings_env(settings), stdout=printed, stderr=log
        )
    try:
        link = None
        deadline = time.monotonic() + 120
        while link is None:
            assert process.poll() is None, Path(log.name).read_text()
            assert time.monotonic() < deadline, "no login link was printed"
            found = re.search(r"http://127\.0\.0\.1:\d+/console/login\?once=\S+\n\n", out.read_text())
            link = found.group(0).strip() if found else None
            if link is None:
                time.sleep(0.1)
        assert link.startswith(f"http://127.0.0.1:{port}/")
        # On stdout alone, as the docs show it (the logs are stderr's), once the console is up.
        assert out.read_text() == (
            f"Write Gate console, as agent 'console'. Open this link (it works once):\n\n    {link}\n\n"
        )
        assert "Uvicorn running on" in Path(log.name).read_text()  # logged once it listens, before the link
        context = await browser.new_context()
        page = await context.new_page()
        await page.goto(link)
        assert page.url == f"http://127.0.0.1:{port}/console/"  # off the link at once: no secret left in the URL
        await page.locator("header .agent").wait_for()
        assert await page.locator("header .agent").text_content() == "console"
        other = await browser.new_context()
        again = await (await other.new_page()).goto(link)
        assert again is not None and again.status == 403  # the link works once
        await other.close()
        await context.close()
    finally:
        process.terminate()
        process.wait(timeout=60)
        log.close()


def test_the_vendored_graph_library_is_the_pinned_one_with_its_licence() -> None:
    import hashlib

    static = Path(__file__).parents[2] / "src" / "write_gate" / "surface" / "console" / "static"
    pinned = json.loads((static / "vendor.json").read_text())["cytoscape"]
    built = (static / pinned["file"]).read_bytes()
    assert hashlib.sha256(built).hexdigest() == pinned["sha256"]
    assert f'"{pinned["version"]}"' in built.decode()  # the library's own version string
    assert "Cytoscape Consortium" in (static / pinned["license_file"]).read_text() and pinned["license"] == "MIT"
