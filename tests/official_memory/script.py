"""The scripted calls both servers get, in order: every tool, seed 001 section 8's cases, and the edges an
official-server user's graph holds (names with spaces at the edges, the empty name, Unicode in both
normalisation forms, free-text and empty types, repeats, both directions, cascades, missing things)."""

from typing import Any

Step = tuple[str, dict[str, Any]]


def e(name: str, entity_type: str = "person", observations: list[str] | None = None) -> dict[str, Any]:
    return {"name": name, "entityType": entity_type, "observations": observations or []}


def r(start: str, end: str, relation_type: str = "knows") -> dict[str, str]:
    return {"from": start, "to": end, "relationType": relation_type}


def entities(*items: dict[str, Any]) -> Step:
    return "create_entities", {"entities": list(items)}


def relations(*items: dict[str, str]) -> Step:
    return "create_relations", {"relations": list(items)}


def observe(name: str, *contents: str) -> dict[str, Any]:
    return {"entityName": name, "contents": list(contents)}


def unobserve(name: str, *observations: str) -> dict[str, Any]:
    return {"entityName": name, "observations": list(observations)}


def search(query: str, **extra: Any) -> Step:
    return "search_nodes", {"query": query, **extra}


def open_(*names: str, **extra: Any) -> Step:
    return "open_nodes", {"names": list(names), **extra}


NFC, NFD = "Caf\u00e9", "Cafe\u0301"
PEOPLE = [f"P{i:03}" for i in range(1, 121)]  # more than a page of read_graph and search_nodes

SCRIPT: list[Step] = [
    # 8.1 entities: create, duplicates (whatever their type), only the new ones, case-sensitive names
    entities(e("Alice", observations=["Is a student"])),
    entities(e("Alice", "company", ["other"])),
    entities(e("Alice"), e("Bob")),
    entities(e("alice")),
    # names and types an official-server user's graph holds
    entities(
        e(" Spaced ", observations=["edge"]),
        e("", ""),
        e("Ünïcødé 東京", observations=["naïve café"]),
        e(NFC, "PERSON"),
        e(NFD),
        e("Straße", " Person ", ["ﬁne print"]),
        e("Paris", "city", ["capital of France"]),
        e("Big Apple", "New York City"),
        e("Odd", "!!!"),
        e("John_Smith", "Person", ["Works at Google"]),
        e("🙂", "emoji"),
    ),
    entities(e(" Spaced ", observations=["again"]), e("", "thing")),
    entities(e("Dup", observations=["first"]), e("Dup", observations=["second"])),
    ("create_entities", {"entities": [{"name": "NoObs", "entityType": "person"}]}),
    entities(e("Nul\0", observations=["x"])),
    ("create_entities", {"entities": "not a list"}),
    # 8.2 relations: create, repeat, another type, the other direction, free-text types, a self-loop
    relations(r("Alice", "Bob")),
    relations(r("Alice", "Bob")),
    relations(r("Alice", "Bob", "likes")),
    relations(r("Bob", "Alice")),
    relations(
        r("Bob", "Alice", "reports_to"),
        r(" Spaced ", "", "knows"),
        r("Ünïcødé 東京", "Paris", "lives in"),
        r("Alice", "Alice", "knows"),
        r(NFD, NFC, "KNOWS "),
    ),
    relations(r("Alice", "Bob", "loves")),
    relations(r("Alice", "Acme", "works at")),  # Acme is not there: the official server keeps a dangling relation
    entities(e("Acme", "company"), e("Startup", "startup")),
    relations(r("Alice", "Acme", "works at")),
    relations(r("Bob", "Startup", "works at")),  # WORKS_FOR runs from a Person to an Organization
    relations(r("Alice", "Bob", "directed")),
    relations(r("Alice", "Ghost")),
    relations(r("Bob", "Paris", "lives in"), r("Paris", "Nowhere")),
    relations(r("Alice", "Paris", "lives in"), r("Alice", "Paris", "lives in")),
    ("create_relations", {"relations": [{"from": "Alice", "relationType": "knows"}]}),
    # 8.3 observations
    ("add_observations", {"observations": [observe("Alice", "Likes pizza")]}),
    ("add_observations", {"observations": [observe("Alice", "Is a student", "Likes tea")]}),
    ("add_observations", {"observations": [observe("Bob", "y", "y")]}),
    ("add_observations", {"observations": [observe(" Spaced ", "edge", "more")]}),
    ("add_observations", {"observations": [observe("Nonexistent", "anything")]}),
    ("add_observations", {"observations": [observe("Alice", "z"), observe("Ghost", "w")]}),
    ("delete_observations", {"deletions": [unobserve("Alice", "Likes pizza")]}),
    ("delete_observations", {"deletions": [unobserve("Nonexistent", "anything")]}),
    entities(e("Rep", observations=["x", "x", "keep"])),
    ("delete_observations", {"deletions": [unobserve("Rep", "x"), unobserve("Rep", "never there")]}),
    # 8.5 search: name, type, observation (case-insensitive), relations of matches, nothing, Unicode
    search("john"),
    search("PERSON"),
    search("google"),
    search("xyznonexistent"),
    search("b"),
    search("city"),
    search("york city"),
    search("東京"),
    search("CAFÉ"),
    search("caf"),
    search("location"),
    search("STRASSE"),
    search("fine"),
    search(""),
    search("llm"),
    search("alice", random_string="x"),
    # 8.6 open: exact, case-sensitive, several, edges, repeats, missing
    open_("Alice"),
    open_("alice"),
    open_("Alice", "Paris"),
    open_(" Spaced ", ""),
    open_(NFC),
    open_("Ghost"),
    open_("Alice", "Alice"),
    open_("Bob", extra=True),
    ("read_graph", {}),
    ("read_graph", {"random_string": "x"}),
    # 8.4 deletes: exact relation, missing ones, cascades from and to, B->C kept
    entities(e("A"), e("B"), e("C")),
    relations(r("A", "B"), r("B", "C"), r("A", "C"), r("A", "B", "likes")),
    open_("A", "C"),
    ("delete_relations", {"relations": [r("A", "B")]}),
    ("delete_relations", {"relations": [r("A", "B"), r("A", "B", "directed"), r("Ghost", "A")]}),
    ("delete_entities", {"entityNames": ["A"]}),
    ("delete_entities", {"entityNames": ["Ghost", "Nonexistent"]}),
    ("delete_entities", {"entityNames": ["Bob"]}),
    ("delete_entities", {"entityNames": [" Spaced ", ""]}),
    open_(" Spaced ", ""),
    # more than a page, and a hub with more relations than a read answers for one entity
    entities(e("Hub", "", ["the centre"]), *(e(name, observations=["member"]) for name in PEOPLE)),
    relations(*(r("Hub", name) for name in PEOPLE[:101])),
    ("read_graph", {}),
    search("member"),
    search("centre"),
    open_("Hub"),
    ("delete_entities", {"entityNames": ["Hub", *PEOPLE[:60]]}),
    ("read_graph", {}),
]
