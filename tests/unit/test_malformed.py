"""Which lines (stdio) and bodies (HTTP) are JSON-RPC messages, and what the others are answered with."""

from write_gate.surface.malformed import triage

INVALID_REQUEST = -32600


def test_triage_passes_messages_and_names_what_is_wrong() -> None:
    assert triage('{"jsonrpc": "2.0", "id": 1, "method": "ping"}') is None
    assert triage('{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None
    assert triage('{"jsonrpc": "2.0", "id": 1, "result": {}}') is None
    wrong = triage('{"jsonrpc": "1.0", "id": 1, "method": "ping"}')
    assert (
        wrong is not None and wrong.id == 1 and wrong.error.message == "Invalid request: jsonrpc: Input should be '2.0'"
    )
    params = triage('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}')
    assert params is not None and params.error.message == "Invalid request: params: Input should be an object"
    null_id = triage('{"jsonrpc": "2.0", "id": null, "method": "ping"}')
    assert null_id is not None and null_id.id is None and null_id.error.code == INVALID_REQUEST


def test_a_message_nested_past_every_parser_is_answered_with_its_own_id() -> None:
    deep = "[" * 5000 + "]" * 5000
    cases = {
        f'{{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {{"a": {deep}}}}}': 7,
        f'{{"params": {{"id": 5, "a": {deep}}}, "id": "q\\"{{x", "method": "ping"}}': 'q"{x',  # not the nested one
        f'{{"params": {deep}, "method": "ping"}}': None,  # a notification: no id to answer
        f'{{"id": 1.5, "params": {deep}}}': None,  # no MCP id
        f'{{"id": true, "params": {deep}}}': None,
        f'[{{"id": 3, "params": {deep}}}]': None,  # not an object at the top
    }
    for line, expected in cases.items():
        error = triage(line)
        assert error is not None and error.id == expected and error.error.code == -32700, (line[:60], error)
