"""What a relationship write asks of the agent's grant, written once for the services that write one
(write_relationship, its batch, a typed tool's links): the rule has one home, which the mutation run covers
(pyproject [tool.mutmut]).

The relationship types written must be granted; when the write may create its endpoints (`merge_endpoints`: stub
nodes), the endpoints' labels must be granted too, since it then writes those nodes. Grant.check_types and
check_labels refuse with PERMISSION_DENIED naming what is not granted."""

from collections.abc import Iterable

from write_gate.access.agents import Grant


def check_relationship_write(
    grant: Grant, types: Iterable[str], endpoint_labels: Iterable[str], creates_endpoints: bool
) -> None:
    grant.check_types(types)
    if creates_endpoints:
        grant.check_labels(endpoint_labels)
