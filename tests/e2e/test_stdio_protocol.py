"""`write-gate serve` over stdio answers every line as JSON-RPC 2.0 says, and keeps serving: raw lines are
written to a real server process and its answers read back from its stdout."""

import json
from collections.abc import Iterator

import pytest

from tests.e2e.stdio_process import RawStdio
from write_gate.serving.config import BackendKind, Settings

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawStdio]:
    data = tmp_path_factory.mktemp("stdio-protocol")
    raw = RawStdio(Settings(backend=BackendKind.EMBEDDED, data_dir=data, embedded_fsync="everysec"))
    raw.initialize()
    yield raw
    raw.close()


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


MALFORMED = {
    "not JSON": (b"hello", PARSE_ERROR, None),
    "half a message": (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', PARSE_ERROR, None),
    # Too deep for the SDK's parser, not for Python's: answered with its id, so the client is not left waiting.
    "JSON nested 200 deep": (
        f'{{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {{"a": {nested(200)}}}}}'.encode(),
        PARSE_ERROR,
        2,
    ),
    # Too deep for Python's too: its id read without descending (the client's request is answered, not left waiting).
    "JSON nested 3,000 deep": (
        f'{{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {{"a": {nested(3000)}}}}}'.encode(),
        PARSE_ERROR,
        2,
    ),
    "JSON nested 3,000 deep, its id after": (
        f'{{"jsonrpc": "2.0", "params": {{"id": 9, "a": {nested(3000)}}}, "id": "deep", "method": "ping"}}'.encode(),
        PARSE_ERROR,
        "deep",
    ),
    # Valid JSON, but no Unicode text (a JavaScript client that cut an emoji in half sends it).
    "a lone surrogate": (
        b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"a": "\\ud800"}}',
        INVALID_PARAMS,
        3,
    ),
    "an integer of 4,400 digits": (
        b'{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"n": ' + b"9" * 4400 + b"}}",
        PARSE_ERROR,
        None,
    ),
    "no jsonrpc": (b'{"id": 5, "method": "ping"}', INVALID_REQUEST, 5),
    "jsonrpc 1.0": (b'{"jsonrpc": "1.0", "id": "six", "method": "ping"}', INVALID_REQUEST, "six"),
    "params as an array": (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": [1]}', INVALID_REQUEST, 7),
    "a method that is not a string": (b'{"jsonrpc": "2.0", "id": 8, "method": 8}', INVALID_REQUEST, 8),
    "a boolean id": (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', INVALID_REQUEST, None),
    "a batch": (b'[{"jsonrpc": "2.0", "id": 9, "method": "ping"}]', INVALID_REQUEST, None),
    "a bare number": (b"42", INVALID_REQUEST, None),
}


def refused_search(server: RawStdio, request_id: str, query: bytes) -> None:
    """A search_nodes call whose query is `query` (raw bytes inside the JSON string) answers the tool's own
    INVALID_INPUT naming the argument."""
    server.send(
        b'{"jsonrpc": "2.0", "id": "%s", "method": "tools/call", "params": {"name": "search_nodes", '
        b'"arguments": {"query": "%s"}}}' % (request_id.encode(), query)
    )
    answer = server.answer()
    assert answer["id"] == request_id and answer["result"]["isError"] is True, answer
    rejection = answer["result"]["structuredContent"]
    assert (rejection["error_code"], rejection["details"]["field"]) == ("INVALID_INPUT", "query"), rejection


def test_a_lone_surrogate_in_a_tool_call_is_the_tools_structured_rejection(server: RawStdio) -> None:
    """errors.md: a lone surrogate, as a NUL, is INVALID_INPUT anywhere in a call, as the tool's own rejection
    (a JavaScript client that cut an emoji in half sends one); the pair beside it is text."""
    refused_search(server, "sur", b"Sur\\udc00x \\ud83d\\ude00")


def test_bytes_that_are_no_utf8_are_a_tool_calls_rejection_and_elsewhere_read_as_the_sdk_reads_them(
    server: RawStdio,
) -> None:
    """A tool call is refused (INVALID_INPUT naming the argument) rather than given U+FFFD in place of what was sent
    (the audit found a name stored so); any other message is read as the SDK reads it, each such byte U+FFFD."""
    refused_search(server, "utf", b"Bad\xff\xfeUtf")
    server.send(b'{"jsonrpc": "2.0", "id": "ping", "method": "ping", "params": {"_meta": {"x": "Bad\xffUtf"}}}')
    assert server.answer() == {"jsonrpc": "2.0", "id": "ping", "result": {}}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_line_is_answered_and_serving_goes_on(server: RawStdio, case: str) -> None:
    line, code, request_id = MALFORMED[case]
    server.send(line)
    answer = server.answer()
    assert answer["jsonrpc"] == "2.0" and answer["id"] == request_id, answer
    assert answer["error"]["code"] == code and answer["error"]["message"], answer
    assert "result" not in answer
    if code == INVALID_PARAMS:
        assert answer["error"]["data"] == {"error_code": "INVALID_INPUT"}, answer
    assert server.request(f"after {case}", "ping") == {"jsonrpc": "2.0", "id": f"after {case}", "result": {}}


def test_invalid_utf8_is_read_as_replacement_characters_and_answered(server: RawStdio) -> None:
    server.send(b'{"jsonrpc": "2.0", "id": 20, "method": "ping", "params": {"a": "\xed\xa0\x80\xff"}}')
    assert server.answer() == {"jsonrpc": "2.0", "id": 20, "result": {}}


def test_empty_lines_are_skipped_without_an_answer(server: RawStdio) -> None:
    server.send(b"")
    server.send(b"   ")
    assert server.request(21, "ping") == {"jsonrpc": "2.0", "id": 21, "result": {}}  # the next line is ping's


def test_a_tool_call_works_after_the_malformed_lines(server: RawStdio) -> None:
    arguments = {"label": "Person", "merge_keys": {"name": "Ada"}, "source": "raw", "extraction_method": "manual"}
    answer = server.request(22, "tools/call", {"name": "write_node", "arguments": arguments})
    assert answer["id"] == 22 and answer["result"]["isError"] is False, answer
    assert answer["result"]["structuredContent"]["status"] == "written"


def test_deep_but_parseable_arguments_get_a_tool_answer(server: RawStdio) -> None:
    """Nesting below the parser's limit reaches the tool, which answers with a rejection, not silence."""
    arguments = {
        "label": "Person",
        "merge_keys": {"name": "Deep"},
        "properties": {"tags": json.loads(nested(150))},
        "source": "raw",
        "extraction_method": "manual",
    }
    answer = server.request(23, "tools/call", {"name": "write_node", "arguments": arguments})
    assert answer["id"] == 23 and answer["result"]["isError"] is True, answer
    assert answer["result"]["structuredContent"]["status"] == "rejected"
