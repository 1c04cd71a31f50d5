"""The search evaluation run through a real MCP client session (gate profile, `search` toolset): the set's facts
written with `write_nodes`, then each question put to each search and the answer's rank noted, with each call's
time. The test (tests/e2e/test_search_eval.py) and the benchmark (bench/search_eval.py) both run it."""

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import Client

from tests.eval.scoring import DEPTH, Score, SearchSet, best_rank, fulltext_query, rank, score, table, words

BATCH = 100  # facts per write_nodes call
SOURCE = "search-eval"

# The searches scored, by the name the table prints.
SUBSTRING_WHOLE = "substring: search_nodes, whole question"
SUBSTRING_WORD = "substring: search_nodes, best single word"
FULLTEXT = "ranked full-text: words joined by OR"
SEMANTIC = "semantic: search_nodes_ranked mode=semantic"
HYBRID = "hybrid: search_nodes_ranked mode=hybrid"
MODES = {SEMANTIC: "semantic", HYBRID: "hybrid"}


@dataclass
class Evaluation:
    """Each search's rank of each question's answer (None: not in its first DEPTH hits), and each call's time."""

    search_set: SearchSet
    has_modes: bool
    ranks: dict[str, list[int | None]] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)

    def score(self, search: str) -> Score:
        in_half = set(self.search_set.no_shared_word())
        return score(search, self.ranks[search], [q in in_half for q in self.search_set.questions])

    def table(self) -> str:
        half = len(self.search_set.no_shared_word())
        return table((self.score(s) for s in self.ranks), len(self.search_set.questions), half)


def fact_item(label: str, name: str, observations: Iterable[str]) -> dict[str, Any]:
    properties = {"observations": list(observations)}
    return {"label": label, "merge_keys": {"name": name}, "properties": properties, "source": SOURCE}


async def load_facts(client: Client, search_set: SearchSet) -> None:
    """The facts written through the gate, BATCH a call; every one must be written."""
    facts = search_set.facts
    for first in range(0, len(facts), BATCH):
        items = [fact_item(f.label, f.name, f.observations) for f in facts[first : first + BATCH]]
        result = await client.call_tool("write_nodes", {"items": [{**i, "extraction_method": "api"} for i in items]})
        assert not result.is_error and result.structured_content, result.structured_content
        assert result.structured_content["written"] == len(items), result.structured_content


async def has_modes(client: Client) -> bool:
    """Whether search_nodes_ranked takes a `mode` (semantic and hybrid search), as tools/list advertises it."""
    tools = (await client.list_tools()).tools
    ranked = next(tool for tool in tools if tool.name == "search_nodes_ranked")
    return "mode" in ranked.input_schema.get("properties", {})


async def names(client: Client, tool: str, args: dict[str, Any], spent: list[float]) -> list[str]:
    """The names a search answers, best first; the call must not be refused."""
    start = time.perf_counter()
    result = await client.call_tool(tool, {**args, "limit": DEPTH})
    spent.append(time.perf_counter() - start)
    assert not result.is_error and result.structured_content is not None, (tool, args, result.structured_content)
    answer = result.structured_content
    hits = answer["results"] if tool == "search_nodes_ranked" else answer["entities"]
    return [(hit["entity"] if tool == "search_nodes_ranked" else hit)["name"] for hit in hits][:DEPTH]


async def evaluate(client: Client, search_set: SearchSet, modes: bool = True, at_once: int = 1) -> Evaluation:
    """Load the facts, then score every search the gate offers: semantic and hybrid only where it has modes (and
    `modes`: a gate with embeddings off refuses them). `at_once`: questions asked concurrently (the test's speed;
    the benchmark asks one at a time, as its per-call times mean one call at a time)."""
    await load_facts(client, search_set)
    evaluation = Evaluation(search_set, modes and await has_modes(client))
    searches = [SUBSTRING_WHOLE, SUBSTRING_WORD, FULLTEXT, *(MODES if evaluation.has_modes else ())]
    questions = search_set.questions
    found: dict[str, list[int | None]] = {search: [None] * len(questions) for search in searches}
    for search in searches:
        evaluation.seconds[search] = []
    by_word: dict[str, list[str]] = {}  # the graph does not change while it is scored: one search a word

    async def word_search(word: str, spent: list[float]) -> list[str]:
        if word not in by_word:
            by_word[word] = await names(client, "search_nodes", {"query": word}, spent)
        return by_word[word]

    async def ask(at: int) -> None:
        asked, answer = questions[at].question, questions[at].answer
        for search in searches:
            spent = evaluation.seconds[search]
            if search == SUBSTRING_WHOLE:
                ranked = rank(answer, await names(client, "search_nodes", {"query": asked}, spent))
            elif search == SUBSTRING_WORD:  # the word that ranks the answer best: an upper bound for substring
                ranked = best_rank([rank(answer, await word_search(w, spent)) for w in words(asked)])
            elif search == FULLTEXT:
                query = fulltext_query(asked)
                hits = await names(client, "search_nodes_ranked", {"query": query}, spent) if query else []
                ranked = rank(answer, hits)
            else:
                args = {"query": asked, "mode": MODES[search]}
                ranked = rank(answer, await names(client, "search_nodes_ranked", args, spent))
            found[search][at] = ranked

    for first in range(0, len(questions), at_once):
        async with anyio.create_task_group() as tasks:
            for at in range(first, min(len(questions), first + at_once)):
                tasks.start_soon(ask, at)
    evaluation.ranks.update(found)
    return evaluation
