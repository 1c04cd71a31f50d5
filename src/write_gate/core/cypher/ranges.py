"""Ranges on indexed text, answered exactly on every engine.

FalkorDB 4.16's range index answers a comparison on a string loosely (FalkorDB #2239). An upper bound alone,
`h.seq <= $hi`, matches every row; beside a lower bound, or as one arm of an OR beside one, it still answers rows
past the bound (30 of 30 random windows over time stamps answered too many). A lower bound is loosened too where
the bound is no stored value (`h.at >= '…318['` answered the record stamped `…318Z`). So every comparison of an
indexed string with a bound is written twice: once for the index (which then reads a window, not the rest of the
label) and once as `expr + ''`, which no index can take, so the engine tests it on each row the index gives.
Memgraph answers both forms alike. tests/unit/test_range_bounds.py holds every FalkorDB statement to this rule;
tests/integration/test_exact_ranges.py compares each statement's answer with its predicate on random data.
"""

from typing import Literal

_PAST_THE_INDEX = " + ''"

Comparison = Literal["<", "<=", ">", ">="]


def exactly(expr: str, op: Comparison, bound: str) -> str:
    """`expr op bound` on an indexed string, exact on every engine; parenthesised, so it stands anywhere a
    comparison does (beside others with AND, as an arm of an OR)."""
    return f"({expr} {op} {bound} AND {expr}{_PAST_THE_INDEX} {op} {bound})"


def past_index(expr: str) -> str:
    """`expr` as no index can take it: a comparison on it is tested on each row the rest of the statement finds
    (beside a numeric window, so the planner takes that window and nothing else)."""
    return f"{expr}{_PAST_THE_INDEX}"
