"""memory-mcp's fuzzy match (core.field_similarity): a field's similarity to the whole query, folded, and the
ranked search's query that finds its candidates."""

from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.field_similarity import candidate_query, close_enough, similarity
from write_gate.core.search_query import MAX_TERMS, parse


def test_similarity_is_one_minus_the_edit_distance_over_the_longer_length() -> None:
    assert similarity("Alise Smith", "alice smith") == 1 - 1 / 11
    assert similarity("designr", "Designer") == 1 - 1 / 8
    assert (similarity("", ""), similarity("a", ""), similarity("ΣΊΣΥΦΟΣ", "σίσυφος")) == (1.0, 0.0, 1.0)


def test_an_entity_is_close_when_any_field_is() -> None:
    assert close_enough("persn", ["Alice Smith", "Person", "engineer"], 0.7)
    assert not close_enough("persn", ["Alice Smith", "Person"], 0.9)


def test_the_candidates_are_any_word_of_the_query_and_never_an_operator() -> None:
    assert candidate_query("Alise  Smith, alise") == "alise OR smith"
    assert candidate_query("Tom AND Jerry") == "tom OR and OR jerry"  # folded: `and` is a word here
    assert candidate_query("!!!") is None
    many = " ".join(f"w{i}" for i in range(40))
    assert candidate_query(many) == " OR ".join(f"w{i}*" if i < 10 else f"w{i}" for i in range(MAX_TERMS))
    # Two letters have no typo tolerance: a prefix finds "Joe", which is 0.67 similar to "Jo".
    assert candidate_query("Jo") == "jo*" and similarity("Jo", "Joe") > 0.66


@given(st.text(min_size=1, max_size=200))
def test_every_candidate_query_parses(query: str) -> None:
    text = candidate_query(query)
    if text is not None:
        parse(text, fuzzy=True)
