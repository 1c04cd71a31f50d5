"""engines.base.plain: every engine value becomes JSON-ready Python, whichever path it takes (the scalar and
list/dict fast paths that every row's values go through, and the engines' own node and map types)."""

from collections import OrderedDict
from typing import Any

from write_gate.engines.base import plain


class FalkorNode:  # the shape of falkordb's Node and Edge: a `properties` map
    def __init__(self, properties: dict[str, Any]) -> None:
        self.properties = properties


class BoltNode:  # the shape of neo4j's Node and Relationship: items() and an element_id
    element_id = "4:x:1"

    def __init__(self, properties: dict[str, Any]) -> None:
        self._properties = properties

    def items(self) -> Any:
        return self._properties.items()


def test_scalars_come_back_as_they_are() -> None:
    for value in ("text", "", 0, 7, -1.5, True, False, None):
        assert plain(value) is value


def test_maps_lists_and_tuples_become_plain_dicts_and_lists_all_the_way_down() -> None:
    value = OrderedDict(a=[1, ("x", OrderedDict(b=None))], c={"d": (2.5,)})
    result = plain(value)
    assert result == {"a": [1, ["x", {"b": None}]], "c": {"d": [2.5]}}
    assert type(result) is dict and type(result["a"][1]) is list and type(result["a"][1][1]) is dict


def test_engine_nodes_become_the_map_of_their_properties() -> None:
    assert plain(FalkorNode({"name": "Ada", "tags": ("a", "b")})) == {"name": "Ada", "tags": ["a", "b"]}
    assert plain([BoltNode({"name": "Ada", "m": OrderedDict(k=1)})]) == [{"name": "Ada", "m": {"k": 1}}]


def test_another_value_passes_through() -> None:
    marker = object()
    assert plain(marker) is marker
