"""The ranked search's query language: parsing, judging, and the recall query each engine's index gets."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from write_gate.core.identity import SEPARATOR
from write_gate.core.search_query import (
    And,
    Not,
    Or,
    QueryError,
    Term,
    auto_edits,
    count,
    document,
    leaves,
    matched_fields,
    matches,
    occurrences,
    parse,
    recall,
    search_text_document,
)
from write_gate.core.search_ranking import Judged, judge_and_score, tf_idf
from write_gate.services.search import required_words

DOC = document(
    {
        "name": ["alice smith"],
        "_label": ["person"],
        "observations": ["works at acme corp", "likes the e-mail client"],
        "role": ["Engineer"],  # as stored: folded; this one is not, so it never matches "engineer"
    }
)


def judge(query: str, *, fuzzy: bool = False) -> bool:
    return matches(parse(query, fuzzy=fuzzy), DOC)


def test_words_are_folded_and_juxtaposed_words_must_all_match() -> None:
    assert parse("ALICE Smith") == And((Term(("alice",)), Term(("smith",))))
    assert judge("ALICE") and judge("alice smith") and not judge("alice jones")


def test_with_any_word_juxtaposed_words_may_match_and_a_negation_beside_them_excludes() -> None:
    """Seed 004's ranked search scores every entity holding a query word: words side by side are an OR there,
    explicit AND and OR keep binding, and `-word` (or NOT) beside them is still required absent."""
    a, b, c = Term(("a",)), Term(("b",)), Term(("c",))
    assert parse("a b", words="any") == Or((a, b))
    assert parse("a b -c", words="any") == And((Or((a, b)), Not(c)))
    assert parse("a AND b c", words="any") == Or((And((a, b)), c))
    assert parse("a OR b c", words="any") == Or((Or((a, b)), c))
    assert parse("(a b) AND c", words="any") == And((Or((a, b)), c))
    assert parse("-a -b", words="any") == And((Not(a), Not(b)))
    assert parse("a", words="any") == a and parse("NOT a", words="any") == Not(a)

    def judge_any(query: str) -> bool:
        return matches(parse(query, words="any"), DOC)

    assert judge_any("alice jones") and judge_any("jones acme") and not judge_any("jones bob")
    assert not judge_any("jones -acme") and not judge_any("alice -smith") and judge_any("alice bob -jones")
    assert not judge_any("alice AND jones") and judge_any("(alice AND smith) jones")
    for query in ("(a", "a)", "AND", "OR a", "a OR", "NOT", "()"):
        with pytest.raises(QueryError):
            parse(query, words="any")


def test_or_not_minus_and_groups() -> None:
    assert parse("a OR b c") == Or((Term(("a",)), And((Term(("b",)), Term(("c",))))))
    assert parse("-a") == Not(Term(("a",))) == parse("NOT a")
    assert judge("jones OR smith") and judge("alice -jones") and not judge("alice NOT smith")
    assert judge("(jones OR acme) AND NOT (bob OR carol)")


def test_phrases_are_adjacent_words_within_one_value() -> None:
    assert judge('"acme corp"') and not judge('"corp acme"')
    assert not judge('"corp likes"')  # the end of one value and the start of the next are not adjacent
    assert judge("e-mail") and parse("e-mail") == Term(("e", "mail"))  # split as the engines split it


def test_fields_prefixes_and_typos() -> None:
    assert judge("name:alice") and not judge("name:acme") and judge("observation:acme")
    assert judge("type:person") and judge("entityType:person")
    assert judge("smi*") and not judge("mith*")
    assert judge("alise~") and not judge("alise") and not judge("alsie~") and judge("alsie~2")
    assert judge("alise", fuzzy=True) and [auto_edits(w) for w in ("ab", "abcde", "abcdef")] == [0, 1, 2]


@pytest.mark.parametrize("query", ["(a", "a)", "AND", "OR a", "a OR", "NOT", "()", "x~3", "!!!", ""])
def test_what_does_not_parse_is_a_query_error(query: str) -> None:
    with pytest.raises(QueryError):
        parse(query)


def test_matched_fields_name_where_counted_terms_occur() -> None:
    assert matched_fields(parse("alice OR acme -bob"), DOC) == ["name", "observations"]
    assert matched_fields(parse("alice -acme"), DOC) == ["name"]


def test_recall_drops_fields_and_negations_and_says_when_an_index_cannot_narrow() -> None:
    tree = parse('name:alice "acme corp" -bob smi* typo~')
    # The exact words narrow the AND: the prefix and typo terms, which the index expands to a bounded number of
    # words, are left to the judge.
    assert recall(tree, "redisearch") == '(alice "acme corp")' == recall(parse('alice AND "acme corp"'), "redisearch")
    assert recall(parse("smi* typo~"), "redisearch") == "(smi* %typo%)"
    assert recall(tree, "tantivy") == '(alice AND "acme corp")'  # Tantivy's parser has no prefix or fuzzy term
    assert recall(parse("a OR typo~"), "tantivy") is None  # one side unnarrowed: the OR cannot be narrowed
    assert recall(parse("a OR b"), "redisearch") == "(a | b)"
    assert recall(parse("NOT a"), "redisearch") is None
    assert recall(parse("x*"), "redisearch") is None  # RediSearch wants two characters before a `*`


def test_a_scan_reads_only_nodes_holding_every_required_word() -> None:
    assert required_words(parse('alice "acme corp" typo~ (x OR y) smi*')) == ["alice", "acme", "corp", "smi"]
    assert required_words(parse("x OR y")) == []


def test_tf_idf_favours_repeated_and_rare_words() -> None:
    docs = [document({"n": ["rare word word"]}), document({"n": ["word"]}), document({"n": ["other"]})]
    first, second, third = tf_idf(parse("word OR rare"), docs)
    assert first > second > third == 0


def test_each_match_is_judged_and_scored_exactly() -> None:
    """A counted term's occurrences times log(1 + N / documents holding it), N all the documents; a negated term
    is judged (it excludes) but never counted; a term holds once it occurs."""
    docs = [
        document({"n": ["rare word word"]}),
        document({"n": ["word"]}),
        document({"n": ["other"]}),
        document({"n": ["word other"]}),
    ]
    word, rare = math.log(1 + 4 / 3), math.log(1 + 4 / 1)
    assert judge_and_score(parse("(word OR rare) -other"), docs) == [
        Judged(True, 2 * word + rare),
        Judged(True, word),
        Judged(False, 0),
        Judged(False, word),
    ]


WORDS = st.text(alphabet="abcdeé", min_size=1, max_size=6)


@given(
    query=st.lists(st.one_of(WORDS, st.sampled_from(["AND", "OR", "NOT", "(", ")", "-", '"', "*", "~"])), max_size=8)
)
def test_any_text_either_parses_or_is_a_query_error(query: list[str]) -> None:
    text = " ".join(query)
    for words in ("all", "any"):
        try:
            tree = parse(text, words=words)
        except QueryError:
            continue
        matches(tree, DOC)  # and whatever parsed can be judged and compiled
        recall(tree, "redisearch")
        recall(tree, "tantivy")


def test_typo_tolerance_grows_with_the_words_length() -> None:
    assert [auto_edits("x" * n) for n in range(1, 8)] == [0, 0, 1, 1, 1, 2, 2]


def test_a_negated_term_is_a_negative_leaf() -> None:
    assert leaves(parse("a -b")) == [(Term(("a",)), True), (Term(("b",)), False)]


def test_recall_of_one_narrowing_term_an_or_in_tantivy_and_a_two_letter_prefix() -> None:
    assert recall(parse("alice -bob"), "redisearch") == "alice"  # one term left: no parentheses
    assert recall(parse("a OR b"), "tantivy") == "(a OR b)"
    assert recall(parse("ab*"), "redisearch") == "ab*"
    assert recall(parse("ab*"), "tantivy") is None


def test_an_exact_term_matches_only_its_own_word() -> None:
    assert judge("alice") and not judge("alic") and not judge("bob")


def test_occurrences_are_counted_in_every_value_of_each_field() -> None:
    doc = document({"name": ["smith smile acme corp acme corp", "smit acme corp"], "city": ["smith"]})
    assert occurrences(Term(("smi",), prefix=True), doc) == {"name": 3, "city": 1}
    assert occurrences(Term(("smit",), edits=1), doc) == {"name": 2, "city": 1}  # smith and smit; smile is 2 edits
    assert occurrences(Term(("acme", "corp")), doc) == {"name": 3}
    assert occurrences(Term(("smith",), field="role"), doc) == {}  # a field the node lacks


@given(
    st.lists(st.lists(st.sampled_from("abc"), max_size=12), max_size=4),
    st.lists(st.sampled_from("abc"), min_size=1, max_size=3),
)
def test_a_term_is_counted_at_every_position_it_stands_at(values: list[list[str]], words: list[str]) -> None:
    """Against the definition: a phrase (or a word) at each position of each value, overlaps included ("a a" in
    "a a a" twice), never across two values."""
    doc = document({"name": [" ".join(value) for value in values]})
    n = len(words)
    expected = sum(value[i : i + n] == words for value in values for i in range(len(value)))
    term = Term(tuple(words))
    assert count(term, doc) == expected
    assert occurrences(term, doc) == ({"name": expected} if expected else {})


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("(a", "a '(' is not closed"),
        ("a)", "a ')' has no '('"),
        ("a AND", "the query ends too early"),
        ("OR a", "'OR' is not expected here"),
        ("()", "the query has no word to search for"),
        ("x~3", "at most 2 edits: x~3"),
        ('a "b', "cannot read the query at character 2"),
        ("a" * 1001, "the query is longer than 1000 characters"),
        (" ".join(["w"] * 33), "the query has more than 32 terms"),
        # 250 deep overran the parser's recursion (INTERNAL_ERROR); the limit is far below it.
        ("(" * 250 + "a" + ")" * 250, "the query nests parentheses more than 32 deep"),
        ("(" * 33 + "a" + ")" * 33, "the query nests parentheses more than 32 deep"),
    ],
)
def test_each_query_error_says_exactly_what_is_wrong(query: str, message: str) -> None:
    with pytest.raises(QueryError) as refused:
        parse(query)
    assert str(refused.value) == message


def test_the_limits_themselves_parse() -> None:
    assert parse("a" * 1000) == Term(("a" * 1000,))
    assert isinstance(parse(" ".join(["w"] * 32)), And)
    assert parse("(" * 32 + "a" + ")" * 32) == Term(("a",))


def test_phrases_fields_and_split_words_become_the_terms_they_say() -> None:
    assert parse("a  ") == Term(("a",))  # trailing white space ends the query
    assert parse('a "!!!"') == Term(("a",))  # a phrase of no word is no term
    assert parse('name:"Alice Smith"') == Term(("alice", "smith"), "name")
    assert parse("name:e-mail") == Term(("e", "mail"), "name")  # split by the engines: a phrase
    assert parse("hello-world", fuzzy=True) == Term(("hello", "world"))  # a phrase gets no typo tolerance


@given(
    values=st.lists(st.lists(st.sampled_from(["ab", "a", "b", "abc", "ba"]), max_size=5).map(" ".join), max_size=5),
    query=st.lists(
        st.one_of(
            st.sampled_from(["ab", "a", "b", "abc", "ba"]),
            st.sampled_from(["ab*", "a~2", "b~1", '"ab a"', '"a b"', '"b ab"', "OR", "-ab", "NOT"]),
        ),
        min_size=1,
        max_size=5,
    ),
)
def test_a_search_text_judged_whole_counts_as_its_values_judged_one_by_one(values: list[str], query: list[str]) -> None:
    """search_text_document reads the joined values as one list with the separators kept: every count, match and
    score equals the values' own, phrases never running from one value into the next and no typo term matching
    a separator."""
    try:
        tree = parse(" ".join(query))
    except QueryError:
        return
    joined = SEPARATOR + SEPARATOR.join(values)  # as the gate stores a search text: a separator before each value
    assert judge_and_score(tree, [search_text_document(joined)]) == judge_and_score(tree, [document({"": values})])
    for term, _positive in leaves(tree):
        assert count(term, search_text_document(joined)) == count(term, document({"": values}))


def test_starts_makes_every_plain_word_of_two_letters_a_prefix() -> None:
    """memory-mcp's boolean search: a field contains the value, here from the start of a word."""
    tree = parse('name:ali AND a AND "grey wizard" AND eng* AND wizrd~1', starts=True)
    assert tree == And(
        (
            Term(("ali",), "name", prefix=True),
            Term(("a",)),  # one letter: the index needs two before a prefix's `*`
            Term(("grey", "wizard")),
            Term(("eng",), prefix=True),
            Term(("wizrd",), edits=1),
        )
    )
    assert parse("ali", starts=False) == Term(("ali",))
