"""The order of a subject's changes, decided inside the statement that makes them (issue 28, item 3).

A change record's `seq` (core/history.py) is the writer's `at`, unless the subject's last change sorts at or
after it (a gate whose clock stamped it earlier, or a change in the same millisecond): then it is that one's
with a `#` after it. It is computed from the subject's `_seq`, which the same statement moves on, so it sorts
after every change the subject had before, on both engines: FalkorDB runs a graph's writes one at a time, and
Memgraph refuses one of two transactions that write one node or relationship (the driver runs it again, on what
the other wrote). Text, so a record from before `seq` existed sorts by its `at` alone, and both compare as text:
an `at` is always 24 characters (`2026-11-22T08:00:00.000Z`, core/clock.py), so a `seq` sorts by its time first,
then by how many changes of that millisecond came before it (`…000Z` < `…000Z#` < `…000Z##`), and any later time
sorts after all of them. (A counter of digits sorted the same and cost the engine about 0.1 ms a write: FalkorDB
evaluates every branch of a CASE, and the counter's text took five functions.)
"""

from collections.abc import Sequence

from write_gate.core.feed_windows import SEQ_KEY, SEQ_KEY_INDEXED, SEQ_NUMBER, seq_key_cypher, seq_number_cypher
from write_gate.core.history import SEQ_FIELD

AFTER = "#"  # what follows a `seq` to sort just after it


def _later(previous: str, at: str) -> str:
    return f"CASE WHEN coalesce({previous}, '') >= {at} THEN {previous} + '{AFTER}' ELSE {at} END"


def next_seq(subjects: Sequence[str], at: str = "$at", lists: Sequence[str] = ()) -> str:
    """The `seq` of a change to the nodes and relationships `subjects` (variables) and to every one in each list
    variable of `lists` (the relationships a delete takes): after each one's last change, and not before `at`."""
    if len(subjects) == 1 and not lists:
        return _later(f"{subjects[0]}.{SEQ_FIELD}", at)
    previous = "[" + ", ".join(f"{var}.{SEQ_FIELD}" for var in subjects) + "]"
    for list_var in lists:
        previous += f" + [seq_of IN {list_var} | seq_of.{SEQ_FIELD}]"
    # Names no statement gives its own variables (`m`, `s` are taken: a merge's node, the search text's reduce).
    return f"reduce(seq_max = {at}, seq_prev IN {previous} | {_later('seq_prev', 'seq_max')})"


def set_seq(var: str, seq: str = "seq") -> str:
    """A SET item: the subject's last change is now the one stamped `seq`."""
    return f"{var}.{SEQ_FIELD} = {seq}"


def numbered(var: str, seq: str) -> str:
    """A SET item of a new change record: its `seq` as a number, for the feed's windows (core/feed_windows.py)."""
    return f"{var}.{SEQ_NUMBER} = {seq_number_cypher(seq)}"


def keyed(var: str, seq: str, order: str = "0") -> str:
    """SET items of a new change record: `numbered`, and its place in its millisecond (`seq_k`: its `#`s and
    `order`, its item's place in the statement; core/feed_windows.py), and that place + 1 as the index reads it."""
    key = seq_key_cypher(seq, order)
    return f"{numbered(var, seq)}, {var}.{SEQ_KEY} = {key}, {var}.{SEQ_KEY_INDEXED} = {key} + 1"


def ordered(var: str, seq: str, order: str = "0") -> str:
    """SET items of a new change record: its `seq`, and `keyed`."""
    return f"{var}.seq = {seq}, {keyed(var, seq, order)}"
