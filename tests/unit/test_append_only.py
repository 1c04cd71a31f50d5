"""core.append_only: where an append-only file's whole commands end, and whether the rest is one cut short (a
write the engine was killed in) or damage."""

from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.append_only import Commands, whole_commands


def command(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


ARGS = st.lists(st.binary(max_size=40), min_size=1, max_size=4)


@given(st.lists(ARGS, min_size=1, max_size=5), st.data())
def test_every_cut_of_whole_commands_is_a_run_then_one_cut_short(
    commands: list[list[bytes]], data: st.DataObject
) -> None:
    encoded = [command(*args) for args in commands]
    ends = [sum(len(c) for c in encoded[: i + 1]) for i in range(len(encoded))]
    whole = b"".join(encoded)
    cut = data.draw(st.integers(0, len(whole)))
    end = max([e for e in ends if e <= cut], default=0)
    assert whole_commands(whole[:cut]) == Commands(end, torn=end < cut)


def test_what_is_no_command_is_damage_not_a_cut() -> None:
    good = command(b"GRAPH.QUERY", b"g", b"CREATE ()")
    assert whole_commands(good + b"\x00not a command\r\n") == Commands(len(good), torn=False)
    assert whole_commands(good + b"*x") == Commands(len(good), torn=False)
    assert whole_commands(good + b"*1\r\n$3\r\nabcX") == Commands(len(good), torn=False)  # no line end after it
    assert whole_commands(good + b"*1\r\n#3\r\n") == Commands(len(good), torn=False)
    assert whole_commands(good + b"*1\r\n$3\r\nab") == Commands(len(good), torn=True)
    assert whole_commands(good + b"*1\r\n$3\r\nabc\r") == Commands(len(good), torn=True)
    assert whole_commands(good + b"*") == Commands(len(good), torn=True)
    assert whole_commands(b"") == Commands(0, torn=False)
