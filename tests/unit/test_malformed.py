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
