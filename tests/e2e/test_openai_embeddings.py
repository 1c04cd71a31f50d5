"""The OpenAI-compatible embedding provider (issue 38, item 4) against a real HTTP server this test starts.

The server is a stand-in for the external service (a hosted API, Ollama, vLLM): a few lines of http.server that
answer `POST /v1/embeddings` in the API's shape with deterministic vectors (letter counts: the same text, the same
vector), and record what they were sent. It checks the gate's side of the contract, not any model's quality."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import SecretStr

from tests.conftest import ok, open_client, rejected
from write_gate.core.cypher.statement import Statement
from write_gate.engines import GraphBackend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate

pytestmark = pytest.mark.anyio

DIMENSION = 26


def letters(text: str) -> list[float]:
    vector = [0.0] * DIMENSION
    for ch in text.lower():
        if "a" <= ch <= "z":
            vector[ord(ch) - ord("a")] += 1.0
    return vector


class Service:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200


@pytest.fixture
def service() -> Iterator[tuple[Service, str]]:
    state = Service()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
            if state.status != 200:
                self.send_response(state.status)
                self.end_headers()
                return
            data = [{"object": "embedding", "index": i, "embedding": letters(t)} for i, t in enumerate(body["input"])]
            answer = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def openai(settings: Settings, url: str) -> Settings:
    update = {
        "embeddings": "openai",
        "embeddings_url": url,
        "embeddings_model": "test-embed",
        "embeddings_api_key": SecretStr("sk-test"),
        "toolsets": "all",
    }
    return settings.model_copy(update=update)


ENTITY = {"name": "Ada Vance", "entityType": "Person", "observations": ["aerospace engineer"]}


async def test_the_gate_posts_the_texts_and_stores_the_answered_vectors(
    settings: Settings, graph: GraphBackend, service: tuple[Service, str]
) -> None:
    state, url = service
    await migrate(graph)
    async with open_client(openai(settings, url), "in_process", "memory") as client:
        await ok(client, "create_entities", {"entities": [ENTITY]})
        answer = await ok(client, "search_nodes_ranked", {"query": "aerospace engineer", "mode": "semantic"})
    assert answer["results"][0]["entity"]["name"] == "Ada Vance"
    assert answer["results"][0]["score"] == pytest.approx(1.0, abs=1e-5)  # the same text: the same vector
    assert {r["path"] for r in state.requests} == {"/v1/embeddings"}
    assert {(r["auth"], r["model"]) for r in state.requests} == {("Bearer sk-test", "test-embed")}
    assert ["Ada Vance", "aerospace engineer"] in [r["input"] for r in state.requests]  # one call for the entity
    rows = await graph.read(
        Statement("MATCH (v:_Embedding) RETURN DISTINCT v.provider AS p, v.model AS m, v.dimension AS d")
    )
    assert rows == [{"p": "openai", "m": "test-embed", "d": DIMENSION}]


async def test_a_failing_service_refuses_the_write_and_nothing_is_written(
    settings: Settings, graph: GraphBackend, service: tuple[Service, str]
) -> None:
    state, url = service
    state.status = 503
    await migrate(graph)
    async with open_client(openai(settings, url), "in_process", "memory") as client:
        answer = await rejected(client, "create_entities", {"entities": [ENTITY]})
        assert answer["error_code"] == "BACKEND_UNAVAILABLE" and "embedding" in answer["message"]
        assert (await ok(client, "read_graph", {}))["entities"] == []


async def test_an_unreachable_service_is_refused_too(settings: Settings, graph: GraphBackend) -> None:
    await migrate(graph)
    async with open_client(openai(settings, "http://127.0.0.1:9/v1"), "in_process", "memory") as client:
        answer = await rejected(client, "create_entities", {"entities": [ENTITY]})
        assert answer["error_code"] == "BACKEND_UNAVAILABLE"
