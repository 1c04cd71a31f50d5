"""The console's routes without a browser: its ASGI app in process (`http_app`, as `serve --transport http` serves
it, and `console_app`, as `write-gate console` does), spoken to with httpx on the embedded engine. What only a page's
script does (the live history, the graph drawing) is tests/e2e/test_console.py's, in a real browser; here: logging
in and out, sessions that end when the agents file changes, the pages' filters, paging and refusals, and the
registry's drift from every kind of rejected write (docs/operations/console.md)."""

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette

from tests.conftest import TESTS, ok, open_client, rejected
from write_gate.access.agents import FULL, PRESETS, READER, AgentRecord, AgentsFile, Grant
from write_gate.core.login_throttle import LoginLimit
from write_gate.engines import GraphBackend
from write_gate.services import agent_tallies
from write_gate.serving.config import Settings
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.console.app import Console
from write_gate.surface.console.sessions import Sessions
from write_gate.surface.console.standalone import console_app
from write_gate.surface.server import http_app

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8000"  # the settings' default bind: a Host the console's rules accept
JSON = {"Accept": "application/json"}
FORM_CSRF = re.compile(r'name="csrf" value="([^"]+)"')
PAGE_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)">')
API = {"source": "crm", "extraction_method": "api"}


@asynccontextmanager
async def browsing(app: Starlette) -> AsyncIterator[httpx2.AsyncClient]:
    """The app started as a server starts it (its lifespan), and an HTTP client that keeps its cookies."""
    async with (
        app.router.lifespan_context(app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE) as http,
    ):
        yield http


def agents_file(path: Path, operator: Grant = FULL) -> dict[str, str]:
    agents = AgentsFile.load(path)
    tokens = {
        "operator": agents.add("operator", operator),
        "writer": agents.add("writer", PRESETS["writer"]),
        "reader": agents.add("reader", READER),
    }
    agents.save()
    return tokens


def regrant(path: Path, agent: str, grant: Grant) -> None:
    """The agent's grant changed in the file, its token kept (as an operator's edit would)."""
    agents = AgentsFile.load(path)
    agents.agents[agent] = AgentRecord(token_sha256=agents.agents[agent].token_sha256, **grant.model_dump())
    agents.save()


async def log_in(http: httpx2.AsyncClient, token: str) -> str:
    """Logged in with the token; the session's CSRF token (the pages' meta tag)."""
    form = await http.get("/console/login")
    csrf = FORM_CSRF.search(form.text)
    assert csrf is not None, form.text
    answer = await http.post("/console/login", data={"csrf": csrf.group(1), "token": token})
    assert (answer.status_code, answer.headers["location"]) == (303, "/console/"), answer.text
    page = await http.get("/console/")
    assert page.status_code == 200, page.text
    meta = PAGE_CSRF.search(page.text)
    assert meta is not None
    return meta.group(1)


def refusal(answer: httpx2.Response, status: int, reason: str | None = None) -> dict[str, Any]:
    body = answer.json()
    assert answer.status_code == status and body["status"] == "rejected", (answer.status_code, body)
    if reason is not None:
        assert body["details"]["reason"] == reason, body
    return body


def person(name: str, **props: Any) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "properties": props, **API}


def knows(start: str, end: str, **props: Any) -> dict[str, Any]:
    ends = {"from_label": "Person", "from_keys": {"name": start}, "to_label": "Person", "to_keys": {"name": end}}
    return {"type": "KNOWS", **ends, "properties": props, **API}


async def test_logging_in_and_out_and_a_session_that_ends_when_the_agents_file_changes(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "conflicts"]))
    path = tmp_path / "agents.toml"
    tokens = agents_file(path, Grant(spaces=("*",)))
    settings = settings.model_copy(update={"agents_file": path, "spaces": ["main", "team_b"]})
    app = http_app(settings, auto_migrate=False)
    async with browsing(app) as http:
        assert (await http.get("/favicon.ico")).headers["content-type"] == "image/x-icon"  # beside /mcp too
        # Not logged in: a script is refused with the structured rejection, a person sent to the login page.
        refusal(await http.get("/console/api/changes", params={"cursor": "x"}), 403, "login")
        form = await http.get("/console/login")
        assert form.status_code == 200 and form.headers["set-cookie"].startswith("write_gate_console_login=")
        assert "write_gate_console" not in http.cookies  # a form opens no session: only a login does
        wrong = await http.post("/console/login", data={"csrf": "not-the-forms", "token": tokens["operator"]})
        assert wrong.status_code == 403 and 'data-error-code="PERMISSION_DENIED"' in wrong.text
        csrf = FORM_CSRF.search(form.text)
        assert csrf is not None
        unknown = await http.post("/console/login", data={"csrf": csrf.group(1), "token": "wg_nobody"}, headers=JSON)
        refusal(unknown, 403, "unknown_token")

        page_csrf = await log_in(http, tokens["operator"])
        again = await http.get("/console/login")  # logged in already: straight on to the console
        assert (again.status_code, again.headers["location"]) == (303, "/console/")
        # Spaces on: the operator's grant covers both, and the page offers them with the chosen one selected.
        spaced = await http.get("/console/agents", params={"space": "team_b"})
        assert '<option value="main" >main</option>' in spaced.text
        assert '<option value="team_b" selected>team_b</option>' in spaced.text

        # Logging out needs the session's CSRF token too, then ends the session.
        refusal(await http.post("/console/logout", data={}, headers=JSON), 403, "csrf")
        out = await http.post("/console/logout", data={"csrf": page_csrf})
        assert (out.status_code, out.headers["location"]) == (303, "/console/login")
        assert (await http.get("/console/")).status_code == 303

        # The agents file is read again at every request: a grant without the admin tools is refused at once...
        await log_in(http, tokens["operator"])
        regrant(path, "operator", PRESETS["writer"])
        refusal(await http.get("/console/", headers=JSON), 403, "not_admin")
        # ... and a new token for the agent ends the sessions its old one opened.
        regrant(path, "operator", FULL)
        assert (await http.get("/console/")).status_code == 200
        agents = AgentsFile.load(path)
        agents.add("operator", FULL)
        agents.save()
        assert (await http.get("/console/")).headers["location"] == "/console/login"
        refusal(await http.get("/console/", headers=JSON), 403, "login")  # ended: the session is gone

        # Only HTTP is served under /console: a WebSocket is closed, not answered.
        sent: list[dict[str, Any]] = []
        incoming = iter([{"type": "websocket.connect"}])

        async def receive() -> dict[str, Any]:
            return next(incoming, {"type": "websocket.disconnect", "code": 1000})

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "websocket", "path": "/console/", "raw_path": b"/console/", "root_path": "",
                 "query_string": b"", "headers": [(b"host", b"127.0.0.1:8000")], "subprotocols": []}  # fmt: skip
        await app(scope, receive, send)
        assert [m["type"] for m in sent] == ["websocket.close"]


async def test_write_gate_console_sends_home_to_the_console_and_its_link_needs_an_operator(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "conflicts"]))
    path = tmp_path / "agents.toml"
    agents_file(path)
    links: list[str] = []
    # WRITE_GATE_AGENT names the console's agent: here one the agents file lists with a reader's grant.
    reader = settings.model_copy(update={"agents_file": path, "agent": "reader"})
    async with browsing(console_app(reader, auto_migrate=False, announce=links.append)) as http:
        home = await http.get("/")
        assert (home.status_code, home.headers["location"]) == (303, "/console/")
        icon = await http.get("/favicon.ico")  # where a browser asks unbidden: an icon, not a 404
        assert (icon.status_code, icon.headers["content-type"], icon.content[:4]) == (200, "image/x-icon", b"\0\0\1\0")
        [link] = links
        refused = await http.get(link.removeprefix(f"http://127.0.0.1:{reader.port}"), headers=JSON)
        refusal(refused, 403, "not_admin")
        assert (await http.get("/console/")).headers["location"] == "/console/login"


async def test_the_registry_page_drafts_entries_from_every_kind_of_rejected_write(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    """A registry without a fallback label: unknown labels and types are rejected (and kept in the quarantine), by
    the gate's tools and by the memory profile's; the page counts what they named and drafts an entry for each."""
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "quarantine"]))
    path = tmp_path / "agents.toml"
    tokens = agents_file(path)
    settings = settings.model_copy(update={"agents_file": path})
    writer = settings.model_copy(update={"agent": "writer"})
    async with open_client(writer, "in_process") as gate, open_client(writer, "in_process", "memory") as memory:
        starship = {**person("Enterprise"), "label": "Starship"}
        assert (await rejected(gate, "write_node", starship))["error_code"] == "SCHEMA_UNKNOWN_LABEL"
        orbits = {**knows("Mars", "Sun"), "type": "ORBITS", "from_label": "Planet", "to_label": "Star"}
        assert (await rejected(gate, "write_relationship", orbits))["error_code"] == "SCHEMA_UNKNOWN_LABEL"
        planets = {"entities": [{"name": "Venus", "entityType": "planet", "observations": []}]}
        assert (await rejected(memory, "create_entities", planets))["error_code"] == "SCHEMA_UNKNOWN_LABEL"
        known = [{"name": name, "entityType": "Person", "observations": []} for name in ("Io", "Jupiter")]
        await ok(memory, "create_entities", {"entities": known})
        circles = {"relations": [{"from": "Io", "to": "Jupiter", "relationType": "circles"}]}
        assert (await rejected(memory, "create_relations", circles))["error_code"] == "SCHEMA_UNKNOWN_LABEL"
    async with browsing(http_app(settings, auto_migrate=False)) as http:
        await log_in(http, tokens["operator"])
        page = await http.get("/console/registry")
        assert page.status_code == 200
    drafted = re.findall(r'<details class="draft" open><summary><strong>(\w+)</strong> \((\w+)\) ([^<]*)<', page.text)
    assert {(name, kind) for name, kind, _ in drafted} == {
        ("Starship", "node"),  # write_node's label
        ("Planet", "node"),  # write_relationship's from_label, and create_entities' entityType `planet`
        ("Star", "node"),  # write_relationship's to_label
        ("ORBITS", "relationship"),  # write_relationship's type
        ("CIRCLES", "relationship"),  # create_relations' relationType `circles`
    }, page.text
    [planet] = [why for name, _, why in drafted if name == "Planet"]
    assert planet == "Suggested from 2 entities typed &#39;Planet&#39;, &#39;planet&#39;. Identity: name."


async def test_the_quarantine_and_conflicts_pages_page_filter_and_refuse_what_is_wrong(
    settings: Settings, graph: GraphBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "conflicts"]))
    path = tmp_path / "agents.toml"
    tokens = agents_file(path)
    settings = settings.model_copy(update={"agents_file": path})
    async with (
        open_client(settings.model_copy(update={"agent": "writer"}), "in_process") as writer,
        open_client(settings.model_copy(update={"agent": "importer"}), "in_process") as importer,
        open_client(settings.model_copy(update={"agent": "operator"}), "in_process") as operator,
    ):
        for name in ("Eve", "Fay"):
            await ok(writer, "write_node", person(name, city="Oslo"))
        await ok(writer, "write_relationship", knows("Eve", "Fay", place="Oslo"))
        await ok(importer, "write_node", person("Eve", city="Rome"))  # held beside Oslo (keep_both)
        await ok(importer, "write_relationship", knows("Eve", "Fay", place="Rome"))  # and on the relationship
        for missing in ("Gus", "Hal"):
            assert (await rejected(writer, "write_relationship", knows("Eve", missing)))["error_code"] == (
                "ENDPOINT_NOT_FOUND"
            )
        first = await ok(operator, "list_quarantine", {"limit": 1})
        [newest] = first["entries"]
        cursor = first["next_cursor"]
    async with browsing(http_app(settings, auto_migrate=False)) as http:
        csrf = await log_in(http, tokens["operator"])
        # The quarantine, a page on: the entry after the cursor only.
        later = await http.get("/console/quarantine", params={"cursor": cursor})
        rows = re.findall(r'<tr data-id="([^"]+)">', later.text)
        assert len(rows) == 1 and newest["id"] not in rows
        # A form that chose nothing is refused as a tool refuses it; a discard takes the entry away.
        nothing = await http.post("/console/quarantine/discard", data={"csrf": csrf}, headers=JSON)
        assert refusal(nothing, 400)["details"] == {"field": "ids"}
        discarded = await http.post("/console/quarantine/discard", data={"csrf": csrf, "ids": newest["id"]})
        assert discarded.status_code == 200 and "Discarded 1." in discarded.text
        assert re.findall(r'<tr data-id="([^"]+)">', discarded.text) == rows

        # Conflicts: a relationship's shown by its ends, a label narrows the list, a bad filter is refused.
        listed = await http.get("/console/conflicts")
        subjects = re.findall(r'<article class="conflict"[^>]*>\s*<h2>([^<]*)</h2>', listed.text)
        assert sorted(subjects) == [
            "(Person {name: Eve})-[KNOWS]-&gt;(Person {name: Fay}) · place",
            "Person {name: Eve} · city",
        ]
        narrowed = await http.get("/console/conflicts", params={"label": "KNOWS"})
        assert re.findall(r'data-conflict-id="([^"]+)"', narrowed.text) != []
        assert "Person {name: Eve} · city" not in narrowed.text
        refusal(await http.get("/console/conflicts", params={"status": "bogus"}, headers=JSON), 400)
        # The agents page counts each write answered written, a value held beside another (keep_both) too.
        agents_page = (await http.get("/console/agents")).text
        writes = dict(re.findall(r'<tr data-agent="(\w+)">.*?<td class="num">(\d+)</td>', agents_page, re.S))
        assert (writes["writer"], writes["importer"]) == ("3", "2"), writes
        # That was the agent tallies' count (core/agent_tallies.py); a history they have not caught up with is
        # counted over, to the same figures.
        monkeypatch.setattr(agent_tallies, "PAGES_A_READ", 0)  # a read folds nothing: behind, it scans
        scanned_page = (await http.get("/console/agents")).text
        assert dict(re.findall(r'<tr data-agent="(\w+)">.*?<td class="num">(\d+)</td>', scanned_page, re.S)) == writes
        # An action a script posts is refused as JSON too, the tool's structured rejection; a person gets the page.
        [conflict_id, *_] = re.findall(r'data-conflict-id="([^"]+)"', listed.text)
        bad_pick = {"csrf": csrf, "conflict_id": conflict_id, "pick": "both"}
        scripted = refusal(await http.post("/console/conflicts/resolve", data=bad_pick, headers=JSON), 400)
        assert scripted["error_code"] == "INVALID_INPUT", scripted
        by_hand = await http.post("/console/conflicts/resolve", data=bad_pick)
        assert by_hand.status_code == 400 and 'data-error-code="INVALID_INPUT"' in by_hand.text
        assert '<article class="conflict"' in by_hand.text  # the page, with the refusal on it
        # ... and what an action did, as the tool answered it.
        unknown = {"csrf": csrf, "ids": "not-an-entry"}
        replayed = await http.post("/console/quarantine/replay", data=unknown, headers=JSON)
        assert (replayed.status_code, replayed.json()["replayed"]) == (200, 0), replayed.text


def changed_subjects(html: str) -> list[str]:
    """The history page's rows, by subject (newest first)."""
    return re.findall(
        r"<tr data-change-id=[^>]*><td><time>[^<]*</time></td><td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td>", html
    )


async def test_the_history_and_explore_pages_filter_and_refuse_what_is_wrong(
    settings: Settings, graph: GraphBackend, tmp_path: Path
) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "conflicts"]))
    path = tmp_path / "agents.toml"
    tokens = agents_file(path)
    # No settle horizon: a change is in the feed as soon as it is written (one writer at a time here).
    settings = settings.model_copy(update={"agents_file": path, "change_settle_seconds": 0})
    before = datetime.now(UTC) - timedelta(seconds=1)
    async with (
        open_client(settings.model_copy(update={"agent": "writer"}), "in_process") as writer,
        open_client(settings.model_copy(update={"agent": "importer"}), "in_process") as importer,
    ):
        await ok(writer, "write_node", person("Alice", age=30))
        await ok(writer, "write_node", person("Bob"))
        await ok(writer, "write_relationship", knows("Alice", "Bob"))
        await ok(writer, "write_node", person("Loner", age=99))  # no relationship at all
        await ok(importer, "write_node", {**person("Rumour-1", claim="x"), "label": "Rumour"})
    since = before.strftime("%Y-%m-%dT%H:%M:%S")
    async with browsing(http_app(settings, auto_migrate=False)) as http:
        await log_in(http, tokens["operator"])
        everyone = changed_subjects((await http.get("/console/history")).text)
        assert "Rumour {name: Rumour-1}" in everyone and "Person {name: Alice}" in everyone
        by_writer = changed_subjects((await http.get("/console/history", params={"agent": "writer"})).text)
        assert "Rumour {name: Rumour-1}" not in by_writer and "Person {name: Loner}" in by_writer
        people = changed_subjects((await http.get("/console/history", params={"label": "Rumour"})).text)
        assert set(people) == {"Rumour {name: Rumour-1}"}
        ended = await http.get("/console/history", params={"since": since, "until": since})
        assert changed_subjects(ended.text) == [] and "Not live." in ended.text  # a window that ended
        # One subject: its changes, and its own history as get_history answers it.
        alice = await http.get("/console/history", params={"label": "Person", "key": "name=Alice", "since": since})
        assert set(changed_subjects(alice.text)) == {"Person {name: Alice}"}
        [subject_history] = re.findall(r'<table id="subject-history">(.*?)</table>', alice.text, re.S)
        assert "<td>age</td><td>null</td><td>30</td>" in subject_history
        without_since = await http.get("/console/history", params={"label": "Person", "key": '{"name": "Alice"}'})
        assert '<table id="subject-history">' in without_since.text
        # The live list's API: a cursor is needed; from the page's, what landed since.
        refusal(await http.get("/console/api/changes"), 400)
        live = await http.get("/console/history", params={"label": "Person"})
        cursor = re.search(r'data-cursor="([^"]+)"', live.text)
        assert cursor is not None
        async with open_client(settings.model_copy(update={"agent": "writer"}), "in_process") as writer:
            await ok(writer, "write_node", person("Carol"))
        fresh = (await http.get("/console/api/changes", params={"cursor": cursor.group(1), "label": "Person"})).json()
        assert [c["subject_text"] for c in fresh["changes"]] == ["Person {name: Carol}"] and fresh["next_cursor"]
        # A value is shown as text (escaped, never markup), the same in the page and in the live list's answer.
        tag = "<img src=x onerror=alert(1)> ü"
        async with open_client(settings.model_copy(update={"agent": "writer"}), "in_process") as writer:
            await ok(writer, "write_node", person("Carol", note=tag))
        [note] = (await http.get("/console/api/changes", params={"cursor": fresh["next_cursor"]})).json()["changes"]
        assert [(p["property"], p["before_text"], p["after_text"]) for p in note["properties"]] == [
            ("note", "null", '"<img src=x onerror=alert(1)> ü"')
        ]
        carol = await http.get("/console/history", params={"label": "Person", "key": "name=Carol"})
        shown = "<code>note</code>: null → &#34;&lt;img src=x onerror=alert(1)&gt; ü&#34;</div>"
        assert shown in carol.text and "\\u003c" not in carol.text, carol.text
        [carol_history] = re.findall(r'<table id="subject-history">(.*?)</table>', carol.text, re.S)
        assert "<td>note</td><td>null</td><td>&#34;&lt;img src=x onerror=alert(1)&gt; ü&#34;</td>" in carol_history

        # More changes than one page of the feed holds: the page reads on, and shows them all.
        async with open_client(settings.model_copy(update={"agent": "bulk"}), "in_process") as bulk:
            people = {"items": [person(f"P{i:03}", age=i) for i in range(510)]}
            assert len((await ok(bulk, "write_nodes", people))["items"]) == 510
        many = changed_subjects((await http.get("/console/history", params={"agent": "bulk"})).text)
        assert len(many) == len(set(many)) == 510  # one change each, over two pages of 500

        # Explore: a name no entity has shows none; an entity without relations shows its values and claims alone.
        nobody = await http.get("/console/explore", params={"name": "Nobody"})
        assert nobody.status_code == 200 and "No entity is named Nobody." in nobody.text
        loner = await http.get("/console/explore", params={"name": "Loner"})
        assert re.findall(r"<tr><td>(\w+)</td><td><pre", loner.text) == ["age", "name"]  # each value's claim
        assert '<ul id="relations"></ul>' in loner.text
        drawn = (await http.get("/console/api/neighbourhood", params={"name": "Alice"})).json()
        assert {n["id"] for n in drawn["nodes"]} == {"Alice", "Bob"} and len(drawn["edges"]) == 1
        assert refusal(await http.get("/console/api/neighbourhood"), 400)["details"] == {"field": "name"}
        unknown = await http.get("/console/api/neighbourhood", params={"name": "Nobody"})
        assert refusal(unknown, 400)["message"] == "no entity has this name"


async def test_anonymous_requests_never_log_an_operator_out_and_login_attempts_are_throttled(
    settings: Settings, graph: GraphBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await load_into_graph(graph, read_sources([TESTS / "schemas" / "conflicts"]))
    path = tmp_path / "agents.toml"
    tokens = agents_file(path)
    settings = settings.model_copy(update={"agents_file": path})
    monkeypatch.setattr(Sessions, "MAX", 20)  # the same rule at a smaller cap, so a few requests fill it
    app = http_app(settings, auto_migrate=False)
    async with browsing(app) as http:
        await log_in(http, tokens["operator"])

        def client(address: str) -> httpx2.AsyncClient:
            transport = httpx2.ASGITransport(app=app, client=(address, 40000))
            return httpx2.AsyncClient(transport=transport, base_url=BASE)

        # Cookie-less visits to the login form, many more than the cap: no session is made for them.
        async with client("192.0.2.1") as anonymous:
            for _ in range(Sessions.MAX + 30):
                anonymous.cookies.clear()
                assert (await anonymous.get("/console/login")).status_code == 200
        assert (await http.get("/console/")).status_code == 200  # the operator is still logged in

        # Login attempts from one address: refused once past the limit, saying so and for how long.
        limit = Console.LOGIN_PER_ADDRESS
        async with client("192.0.2.2") as guesser:
            form = await guesser.get("/console/login")
            csrf = FORM_CSRF.search(form.text)
            assert csrf is not None
            guess = {"csrf": csrf.group(1), "token": "wg_guess"}
            for _ in range(limit.attempts):
                refusal(await guesser.post("/console/login", data=guess, headers=JSON), 403, "unknown_token")
            throttled = await guesser.post("/console/login", data=guess, headers=JSON)
            body = refusal(throttled, 429, "login_throttled")
            assert body["error_code"] == "RATE_LIMITED" and body["details"]["scope"] == "address", body
            assert "too many login attempts from this address" in body["message"], body
            assert 0 < int(throttled.headers["retry-after"]) <= limit.seconds
            # A person is told on the page.
            page = await guesser.post("/console/login", data=guess)
            assert page.status_code == 429 and "too many login attempts" in page.text
        # Another address still logs in, until attempts from everywhere reach the overall limit.
        async with client("192.0.2.3") as operator:
            await log_in(operator, tokens["operator"])
        monkeypatch.setattr(Console, "LOGIN_OVERALL", LoginLimit(attempts=1, seconds=60))  # reached already
        async with client("192.0.2.4") as late:
            form = await late.get("/console/login")
            csrf = FORM_CSRF.search(form.text)
            assert csrf is not None
            right = {"csrf": csrf.group(1), "token": tokens["operator"]}
            everywhere = await late.post("/console/login", data=right, headers=JSON)
            body = refusal(everywhere, 429, "login_throttled")
            assert body["details"]["scope"] == "overall" and "retry-after" in everywhere.headers, body
        assert (await http.get("/console/")).status_code == 200  # a logged-in operator is never throttled
