"""The embedding providers (core/embedding.py's contract): wordllama's shipped model on this machine, or an
OpenAI-compatible `/embeddings` endpoint. Chosen by WRITE_GATE_EMBEDDINGS; "off" imports neither."""

import contextlib
import json
import logging
import os
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from write_gate.core.embedding import VECTOR_DECIMALS, EmbeddingFailed, EmbeddingProvider
from write_gate.serving.config import ConfigurationError, Settings

LOCAL_DIMENSION = 256


@contextlib.contextmanager
def logging_kept() -> Iterator[None]:
    """The root logger's handlers and level as they were: wordllama calls `logging.basicConfig(level=INFO)` when
    imported, which, in a process that set no logging up (a gate run inside another program, a test), would print
    every INFO line of every library to stderr from then on."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


class WordLlamaProvider:
    """wordllama's 256-dimension static model, from the files inside its wheel (no download, no network). Loaded
    once, on the first text to embed, so a gate pays for it only when it embeds."""

    name = "local"
    model = "wordllama-l2-supercat-256"
    dimension = LOCAL_DIMENSION
    normalizes = True

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Loaded: an embedding takes microseconds (the gate calls it in line; before, in a worker thread)."""
        return self._model is not None

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                # A write embeds a few short texts: the tokenizer's thread pool costs more than it saves there, and
                # its threads spin on cores the engine needs (measured: 3 texts tokenized in 78 us with it, 30 us
                # without). An operator's own setting is kept.
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                with logging_kept():
                    import wordllama  # type: ignore[import-untyped]  # noqa: PLC0415 - heavy: only when embeddings are on

                # Its plain load() looks for the tokenizer under a folder name the wheel does not use, and downloads
                # it; the wheel's own folder holds both files (../shared/DESIGN.md).
                folder = Path(wordllama.__file__).parent
                self._model = wordllama.WordLlama.load(cache_dir=folder, disable_download=True, dim=self.dimension)
            return self._model

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        # Unit length and rounded here, in numpy (normalizes: the gate does not do it again in Python).
        return self._loaded().embed(texts, norm=True).round(VECTOR_DECIMALS).tolist()


class OpenAIProvider:
    """An OpenAI-compatible endpoint (a hosted API, Ollama, vLLM): POST `{url}/embeddings` with the model and
    the texts, a bearer key if set; its dimension is learnt from its first answer."""

    name = "openai"
    normalizes = False

    def __init__(self, url: str, model: str, api_key: str | None, timeout: float) -> None:
        self.url, self.model, self.dimension = url.rstrip("/") + "/embeddings", model, 0
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        body = json.dumps({"model": self.model, "input": texts}).encode()
        request = urllib.request.Request(  # noqa: S310 - the configured endpoint, http(s) only (checked at start)
            self.url, data=body, headers={"Content-Type": "application/json", **self._headers}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as answer:  # noqa: S310
                data = sorted(json.loads(answer.read())["data"], key=lambda item: item["index"])
            vectors = [[float(x) for x in item["embedding"]] for item in data]
        except (OSError, ValueError, KeyError, TypeError) as exc:  # URLError and timeouts are OSErrors
            raise EmbeddingFailed(f"{self.url}: {exc}") from exc
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) != 1:
            raise EmbeddingFailed(f"{self.url} answered {len(vectors)} vectors of mixed or wrong size")
        if self.dimension and len(vectors[0]) != self.dimension:
            raise EmbeddingFailed(f"{self.url} answered {len(vectors[0])} dimensions, not {self.dimension}")
        self.dimension = len(vectors[0])
        return vectors


def load_embedder(settings: Settings) -> EmbeddingProvider | None:
    """The configured provider, None when embeddings are off; a provider missing what it needs stops the start."""
    if settings.embeddings == "off":
        return None
    if settings.embeddings == "local":
        return WordLlamaProvider()
    url = settings.embeddings_url or ""
    if not url.startswith(("http://", "https://")) or not settings.embeddings_model:
        raise ConfigurationError(
            "WRITE_GATE_EMBEDDINGS=openai needs WRITE_GATE_EMBEDDINGS_URL (http:// or https://) and "
            "WRITE_GATE_EMBEDDINGS_MODEL"
        )
    key = settings.embeddings_api_key.get_secret_value() if settings.embeddings_api_key else None
    return OpenAIProvider(url, settings.embeddings_model, key, settings.embeddings_timeout_seconds)
