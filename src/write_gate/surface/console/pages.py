"""The console's pages and actions. Each reads and acts through the tools (`Page.tool`: the server's call path, as
the operator's agent, with its grant, guard, history and quarantine) and, for the aggregates no tool answers, the
console's read-only statements (core/cypher/console.py) on the same space's engine."""

from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.responses import JSONResponse, Response

from write_gate.core.cypher import console as cypher
from write_gate.core.cypher.statement import Statement
from write_gate.core.model import ErrorCode, GateRejection
from write_gate.interchange.schema_suggest import drift_counts, suggest_counts
from write_gate.services import agent_tallies
from write_gate.services.reads import encode_cursor
from write_gate.surface.console import views
from write_gate.surface.console.app import Page
from write_gate.surface.tool_spec import Services

QUARANTINE_PAGE = 50
HISTORY_PAGES = 5  # changes_since pages of 500 a history page reads at most
DRIFT_ENTRIES = 500


def _now() -> datetime:
    return datetime.now(UTC)


def _services(page: Page) -> Services:
    _, services = page.console.operations.services(page.agent, page.space)
    return services


async def _read(page: Page, statement: Statement) -> list[dict[str, Any]]:
    return await _services(page).gate.reader.read(statement)


# --- overview -------------------------------------------------------------------------------------------------


async def overview(page: Page) -> Response:
    stats = await page.answer("get_graph_stats", {})
    now = _now()
    minutes = views.window(now)
    since = views.stored_time(now - timedelta(minutes=views.MINUTES))
    writes = await _read(page, Statement(cypher.WRITES_PER_MINUTE.text, {"since": since}))
    rejections = await _read(page, Statement(cypher.REJECTIONS_PER_MINUTE.text, {"since": since}))
    return page.render(
        "overview.html",
        stats=stats,
        writes_by_agent=views.per_minute(writes, "agent", "writes", minutes),
        rejections_by_agent=views.per_minute(rejections, "agent", "rejections", minutes),
        rejections_by_code=views.per_minute(rejections, "error_code", "rejections", minutes),
        minutes=minutes,
        plot_size=(views.CHART_WIDTH, views.CHART_HEIGHT),  # not `chart`: the macro has that name
    )


# --- registry -------------------------------------------------------------------------------------------------


async def registry(page: Page) -> Response:
    schema = await page.answer("get_schema", {})
    gate = _services(page).gate
    snapshot = gate.registry
    # Drift: what rejected writes named that the registry does not take, and what the fallback label holds.
    kept = await page.answer(
        "list_quarantine", {"error_code": ErrorCode.SCHEMA_UNKNOWN_LABEL.value, "limit": DRIFT_ENTRIES}
    )
    entity_types, relation_types = drift_counts((e["tool"], e["arguments"]) for e in kept["entries"])
    fallback = schema.get("fallback_label")
    if fallback:
        rows = await _read(page, Statement(cypher.fallback_drift(fallback).text, {"limit": DRIFT_ENTRIES}))
        for row in rows:
            written = str(row["written"]).lstrip(":")
            if written:
                entity_types[written] += row["uses"]
    suggestion = suggest_counts(entity_types, relation_types, snapshot)
    return page.render(
        "registry.html",
        schema=schema,
        drafts=[(entry, views.pretty(entry)) for entry in suggestion.entries],
        covered=suggestion.covered,
        document=views.pretty(suggestion.document()),
    )


# --- quarantine -----------------------------------------------------------------------------------------------

_QUARANTINE_FILTERS = ("error_code", "label", "agent", "tool")


def _quarantine_filters(page: Page) -> dict[str, str]:
    return {name: value for name in _QUARANTINE_FILTERS if (value := page.value(name)) is not None}


async def _quarantine_page(page: Page, outcome: dict[str, Any] | None = None, status: int = 200) -> Response:
    filters = _quarantine_filters(page)
    arguments: dict[str, Any] = {**filters, "limit": QUARANTINE_PAGE}
    if (cursor := page.value("cursor")) is not None and page.form is None:
        arguments["cursor"] = cursor
    listed = await page.answer("list_quarantine", arguments)
    entries = [(entry, views.pretty(entry["arguments"])) for entry in listed["entries"]]
    return page.render(
        "quarantine.html",
        status,
        entries=entries,
        filters=filters,
        next_cursor=listed.get("next_cursor"),
        outcome=outcome,
    )


async def quarantine(page: Page) -> Response:
    return await _quarantine_page(page)


def _ids(page: Page) -> list[str]:
    ids = page.values("ids")
    if not ids:
        raise GateRejection(ErrorCode.INVALID_INPUT, "choose at least one quarantined write", field="ids")
    return ids


async def _quarantine_action(page: Page, action: str) -> Response:
    async def show(ok: bool, answer: dict[str, Any]) -> Response:
        return await _quarantine_page(page, {"action": action, "ok": ok, "answer": answer}, 200 if ok else 400)

    return await page.act(f"{action}_quarantine", {"ids": _ids(page)}, show)


async def quarantine_replay(page: Page) -> Response:
    return await _quarantine_action(page, "replay")


async def quarantine_discard(page: Page) -> Response:
    return await _quarantine_action(page, "discard")


# --- conflicts ------------------------------------------------------------------------------------------------


async def _conflicts_page(page: Page, outcome: dict[str, Any] | None = None, status: int = 200) -> Response:
    arguments: dict[str, Any] = {"status": page.value("status") or "open", "limit": 100}
    if (label := page.value("label")) is not None:
        arguments["label"] = label
    listed = await page.answer("list_conflicts", arguments)
    gate = _services(page).gate
    now = _now()
    by_method = gate.policy.half_life_by_method
    shown = []
    for conflict in listed["conflicts"]:
        subject = conflict["subject"]
        name = subject.get("label") or subject.get("type")
        entry = gate.registry.get_entry(name) or gate.registry.get_relationship(name) if name else None
        half_life = entry.half_life_days if entry is not None else None
        sides = [
            (which, conflict.get(f"{which}_value"), conflict.get(f"{which}_claim")) for which in ("current", "incoming")
        ]
        shown.append(
            {
                "conflict": conflict,
                "subject": views.subject_text(subject),
                "sides": [
                    {
                        "which": which,
                        "value": views.pretty(value),
                        "claim": claim,
                        "effective": views.effective(claim, half_life, by_method, now),
                    }
                    for which, value, claim in sides
                ],
            }
        )
    return page.render(
        "conflicts.html", status, conflicts=shown, status_filter=arguments["status"], label=page.value("label"),
        outcome=outcome,
    )  # fmt: skip


async def conflicts(page: Page) -> Response:
    return await _conflicts_page(page)


async def conflicts_resolve(page: Page) -> Response:
    arguments = {"conflict_id": page.value("conflict_id"), "pick": page.value("pick")}

    async def show(ok: bool, answer: dict[str, Any]) -> Response:
        return await _conflicts_page(page, {"ok": ok, "answer": answer}, 200 if ok else 400)

    return await page.act("resolve_conflict", {k: v for k, v in arguments.items() if v is not None}, show)


# --- history and changes ----------------------------------------------------------------------------------------


def _history_filters(page: Page) -> dict[str, Any]:
    since = views.parse_time(page.value("since"), "since")
    until = views.parse_time(page.value("until"), "until")
    label, key = page.value("label"), page.value("key")
    if key is not None and label is None:
        raise GateRejection(ErrorCode.INVALID_INPUT, "a subject's keys need its label", field="label")
    return {
        "label": label,
        "keys": views.parse_keys(key) if key is not None else None,
        "key_text": key,
        "agent": page.value("agent"),
        "since": since,
        "until": until,
    }


def _matches(change: dict[str, Any], filters: dict[str, Any]) -> bool:
    if filters["agent"] is not None and change.get("agent") != filters["agent"]:
        return False
    if filters["until"] is not None and change["at"] > views.stored_time(filters["until"]):
        return False
    keys = filters["keys"]
    return keys is None or {str(k): str(v) for k, v in (change["subject"].get("merge_keys") or {}).items()} == {
        str(k): str(v) for k, v in keys.items()
    }


async def _feed(page: Page, filters: dict[str, Any], cursor: str) -> tuple[list[dict[str, Any]], str]:
    """Changes from `cursor` on (oldest first) matching the filters, up to HISTORY_PAGES pages; the cursor after."""
    found: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {"limit": 500}
    if filters["label"] is not None:
        arguments["labels"] = [filters["label"]]
    for _ in range(HISTORY_PAGES):
        feed = await page.answer("changes_since", {**arguments, "cursor": cursor})
        found += [change for change in feed["changes"] if _matches(change, filters)]
        cursor = feed["next_cursor"]
        if not feed.get("more"):
            break
    return found, cursor


def _start_cursor(since: datetime) -> str:
    """changes_since's cursor just before `since` (its position is a time and a change id)."""
    return encode_cursor("changes", a=views.stored_time(since), c="")


def _shown(change: dict[str, Any]) -> dict[str, Any]:
    """A change as the history page's rows show it, rendered or live: its subject and values as text."""
    properties = [
        {**p, "before_text": views.value_text(p.get("before")), "after_text": views.value_text(p.get("after"))}
        for p in change["properties"]
    ]
    return {**change, "subject_text": views.subject_text(change["subject"]), "properties": properties}


async def history(page: Page) -> Response:
    filters = _history_filters(page)
    since = filters["since"] or _now() - timedelta(hours=1)
    changes, cursor = await _feed(page, filters, _start_cursor(since))
    subject_history = None
    if filters["keys"] is not None:  # one subject: its history too, as get_history answers it (every property)
        arguments: dict[str, Any] = {"label": filters["label"], "merge_keys": filters["keys"], "limit": 100}
        if filters["since"] is not None:
            arguments["since"] = views.stored_time(filters["since"])
        subject_history = (await page.answer("get_history", arguments))["changes"]
    return page.render(
        "history.html",
        changes=[_shown(c) for c in reversed(changes)],  # newest first
        subject_history=subject_history,
        filters={k: page.value(k) for k in ("label", "key", "agent", "since", "until")},
        cursor=cursor if filters["until"] is None else None,  # a window that ended does not go live
        poll_ms=int(page.console.settings.console_poll_seconds * 1000),
    )


async def api_changes(page: Page) -> Response:
    """The history page's live list: changes after its cursor that match its filters, as JSON."""
    filters = _history_filters(page)
    cursor = page.value("cursor")
    if cursor is None:
        raise GateRejection(ErrorCode.INVALID_INPUT, "cursor is required", field="cursor")
    changes, after = await _feed(page, filters, cursor)
    return JSONResponse({"changes": [_shown(c) for c in changes], "next_cursor": after})


# --- agents -----------------------------------------------------------------------------------------------------


async def agents(page: Page) -> Response:
    operations = page.console.operations
    gate = _services(page).gate
    tallies = await agent_tallies.current(
        gate.backend, page.console.settings.change_settle_seconds, in_flight=gate.in_flight
    )
    if tallies is None:  # a history older than the tallies, still being folded: counted over it, as before them
        writes = views.writes_by_agent(
            [*await _read(page, cypher.AGENT_WRITES), *await _read(page, cypher.AGENT_HELD_WRITES)]
        )
    else:
        writes = {agent: {"writes": t.writes + t.held, "last_at": t.last_at} for agent, t in tallies.items()}
    rejections = {row["agent"]: row for row in await _read(page, cypher.AGENT_REJECTIONS)}
    listed = operations.agents.current().agents if operations.agents is not None else {}
    held_back = operations.held_back()  # by this gate's fair share, since it started
    rows = []
    for name in sorted({*listed, *(a for a in writes if a), *(a for a in rejections if a), *held_back}):
        record = listed.get(name)
        agent = operations.agents.by_id(name) if operations.agents is not None and record is not None else None
        tools = operations.offered(agent) if agent is not None else []
        groups: dict[str, list[str]] = {}
        for spec in tools:
            groups.setdefault(spec.group, []).append(spec.name)
        rows.append(
            {
                "name": name,
                "listed": record is not None,
                "grant": agent.grant if agent is not None else None,
                "toolsets": groups,
                "writes": writes.get(name, {}).get("writes", 0),
                "last_write": writes.get(name, {}).get("last_at"),
                "rejections": rejections.get(name, {}).get("rejections", 0),
                "last_rejection": rejections.get(name, {}).get("last_at"),
                "held_back": held_back.get(name, {}),
            }
        )
    return page.render("agents.html", agents=rows, file=str(operations.agents.path) if operations.agents else None)


# --- explore ----------------------------------------------------------------------------------------------------


async def _open(page: Page, name: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]], dict[str, str]]:
    """The entity of this name (None when there is none), the relations touching it, and its neighbours' types."""
    opened = await page.answer("open_nodes", {"names": [name], "provenance": {}, "relations_limit": 200})
    centre = next((e for e in opened["entities"] if e.get("name") == name), None)
    relations = opened["relations"]
    neighbours = sorted({end for r in relations for end in (r["from"], r["to"]) if end != name})[:100]
    types: dict[str, str] = {}
    if neighbours:
        around = await page.answer("open_nodes", {"names": neighbours, "relations_limit": 1})
        types = {e["name"]: e["entityType"] for e in around["entities"] if e.get("name")}
    return centre, relations, types


async def explore(page: Page) -> Response:
    query, name = page.value("q"), page.value("name")
    hits = None
    if query is not None:
        hits = (await page.answer("search_nodes_ranked", {"query": query, "limit": 25}))["results"]
    centre: dict[str, Any] | None = None
    relations: list[dict[str, Any]] = []
    claims: list[dict[str, Any]] = []
    if name is not None:
        centre, relations, _ = await _open(page, name)
        if centre is not None:
            gate = _services(page).gate
            entry = gate.registry.get_entry(centre["entityType"])
            half_life = entry.half_life_days if entry is not None else None
            now = _now()
            for prop, claim in sorted((centre.get("provenance") or {}).items()):
                value = centre["properties"].get(prop, centre.get(prop))
                effective = views.effective(claim, half_life, gate.policy.half_life_by_method, now)
                claims.append({"property": prop, "value": views.pretty(value), "claim": claim, "effective": effective})
    return page.render(
        "explore.html", query=query, hits=hits, name=name, centre=centre, relations=relations, claims=claims
    )


async def api_neighbourhood(page: Page) -> Response:
    name = page.value("name")
    if name is None:
        raise GateRejection(ErrorCode.INVALID_INPUT, "name is required", field="name")
    centre, relations, types = await _open(page, name)
    if centre is None:
        raise GateRejection(ErrorCode.INVALID_INPUT, "no entity has this name", field="name")
    return JSONResponse(views.neighbourhood(centre, relations, types))
