"""The trigrams a node is found by (`core.grams`): a query's trigrams are words of every text that contains it."""

from hypothesis import given, settings
from hypothesis import strategies as st

from write_gate.core.grams import GRAM, MAX_QUERY_GRAMS, grams_text, query_grams, stood_in
from write_gate.core.identity import SEPARATOR, fold

texts = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=80)


def test_a_text_shorter_than_a_trigram_has_none() -> None:
    assert grams_text("") == grams_text("ab") == ""
    assert query_grams("ab") == []


def test_each_trigram_follows_a_space_and_separators_are_letters() -> None:
    assert grams_text("abcd") == " abc bcd"
    assert grams_text("a b") == " " + stood_in("a b")
    assert stood_in("a b-c.d'e_f/g\th") == "a\u1401b\u1402c\u1403d\u1404e\u1405f\u1406g\th"
    assert all(word.isalnum() for word in grams_text("it's a co-op.name/x_y").split())


def test_a_query_asks_only_for_trigrams_an_index_holds() -> None:
    assert query_grams("a\u20acb") == []  # the euro sign is no letter: a tokenizer may split there
    assert query_grams("ab\u20accd") == []
    assert query_grams("abcabc") == ["abc", "bca", "cab"]  # each once


def test_a_long_query_asks_for_a_few_trigrams_spread_over_it() -> None:
    grams = query_grams("likes topic 123")
    assert len(grams) == MAX_QUERY_GRAMS
    assert grams[0] == "lik" and grams[-1] == "123"


@settings(max_examples=100, deadline=None)
@given(values=st.lists(texts, min_size=1, max_size=4), data=st.data())
def test_a_contained_querys_trigrams_are_words_of_the_text(values: list[str], data: st.DataObject) -> None:
    """What the index answer rests on: for any query the folded search text contains, each trigram asked for is a
    space-separated word of the text's trigrams."""
    search = "".join(SEPARATOR + fold(v) for v in values)
    value = data.draw(st.sampled_from([fold(v) for v in values]))
    start = data.draw(st.integers(0, len(value)))
    query = value[start : start + data.draw(st.integers(0, 20))]
    words = set(grams_text(search).split(" "))
    assert set(query_grams(query)) <= words
    if len(query) >= GRAM and query.isalnum():
        assert query_grams(query)  # nothing but letters and digits: always asked of the index
