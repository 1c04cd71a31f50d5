"""The ranked search's query language: parsed here, judged here, and compiled to what an engine's full-text
index can find.

    alice                      a word (case-insensitive: folded as stored text is)
    alice bob                  any of them (`words="any"`: seed 004's ranked search, more words rank higher),
                               or both (`words="all"`: its boolean search); a `-word` beside them is excluded
    alice AND bob              both
    alice OR bob               either
    NOT bob / -bob             not
    "acme corp"                a phrase: these words, adjacent, in one value
    eng*                       a word starting with `eng`
    alise~ / alise~2           a word within 1 (or 2) edits (Levenshtein) of `alise`
    name:alice                 in one field only: `name`, `type` (the label, or the type as written),
                               `observation(s)`, or any property's name
    (a OR b) AND NOT c         grouping

The meaning is decided here, in Python, on the node's folded text values (`_f_<property>`), so it is the same
on every engine. An engine's index only narrows the candidates: `recall` compiles a query the index answers
with a superset of the true matches (stemming and its own tokenizer only add candidates; negations, fields and
what an engine cannot express are left out, which also only adds), and `matches` decides each candidate.
A query with nothing the index can find (only negations, say) has no recall query: it is answered by a scan.
One bound, as in every search engine: the index expands a prefix or typo term to a limited number of the
words it holds (FalkorDB: about 100), so such a term alone can miss matches when more words share it.
"""

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz.distance import Levenshtein

from write_gate.core.identity import SEPARATOR, fold

# A word, as both the judge and (closely enough) the engines' tokenizers see one.
WORD = re.compile(r"\w+")
# A search text's words and the separators between its values, which no term is or matches: one list for a
# node's values, in which a phrase still never runs from one value into the next.
_WORD_OR_SEPARATOR = re.compile(r"\w+|" + re.escape(SEPARATOR))
MAX_EDITS = 2
MAX_QUERY_CHARS = 1000
MAX_TERMS = 32
MAX_NESTING = 32  # parentheses within parentheses: the parser and the tree's walks recurse once a level or more
# Fields that name something other than a property of that name.
FIELD_ALIASES = {
    "type": "_label",
    "entitytype": "_label",
    "label": "_label",
    "observation": "observations",
    "tag": "tags",
}


class QueryError(ValueError):
    """The query does not parse; the message says where, never echoing more than the offending token."""


# --- the tree ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    words: tuple[str, ...]  # one word, or a phrase's words in order
    field: str | None = None  # the property's name (`_label` for the type); None for every field
    prefix: bool = False
    edits: int = 0


@dataclass(frozen=True)
class Not:
    child: "Node"


@dataclass(frozen=True)
class And:
    children: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    children: tuple["Node", ...]


Node = Term | Not | And | Or


# --- parsing -----------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<open>\()|(?P<close>\))|(?P<minus>-)(?=\S)|
        (?:(?P<field>[A-Za-z_][A-Za-z0-9_]*):)?
        (?:"(?P<phrase>[^"]*)"|(?P<word>[^\s()"]+))
    )""",
    re.VERBOSE,
)
_FUZZY = re.compile(r"^(?P<body>.*?)~(?P<edits>[0-9]?)$")


def _field_name(raw: str) -> str:
    # The token's pattern lets only identifiers through; a field only ever keys a dict here, never Cypher.
    return FIELD_ALIASES.get(raw.lower(), raw)


def _term(raw: str | None, phrase: str | None, field: str | None, fuzzy: bool, starts: bool = False) -> Term | None:
    """One leaf; None when its text holds no word (punctuation only). `starts`: a plain word of two characters or
    more is a prefix (`ali` finds `alice`), as memory-mcp's boolean search finds a field that contains it."""
    field_name = _field_name(field) if field else None
    if phrase is not None:
        words = tuple(WORD.findall(fold(phrase)))
        return Term(words, field_name) if words else None
    assert raw is not None
    edits, prefix = 0, False
    if (m := _FUZZY.match(raw)) is not None:
        raw, edits = m["body"], int(m["edits"] or 1)
        if edits > MAX_EDITS:
            raise QueryError(f"at most {MAX_EDITS} edits: {raw}~{edits}")
    elif raw.endswith("*"):
        raw, prefix = raw[:-1], True
    words = tuple(WORD.findall(fold(raw)))
    if not words:
        return None
    if len(words) > 1:  # `e-mail`: the words as a phrase, as the engines tokenize it
        return Term(words, field_name)
    if fuzzy and not prefix and edits == 0:
        edits = auto_edits(words[0])
    if starts and not prefix and edits == 0 and len(words[0]) >= 2:  # the index needs two characters before a `*`
        prefix = True
    return Term(words, field_name, prefix, edits)


def auto_edits(word: str) -> int:
    """Typo tolerance by length, as search engines' AUTO: none for 1-2 characters, 1 up to 5, else 2."""
    return 0 if len(word) <= 2 else 1 if len(word) <= 5 else 2


def _tokens(text: str, fuzzy: bool, starts: bool = False) -> list[str | Term]:
    out: list[str | Term] = []
    position = 0
    while position < len(text):
        if text[position:].isspace():
            break
        m = _TOKEN.match(text, position)
        if m is None or m.end() == position:
            raise QueryError(f"cannot read the query at character {position + 1}")
        position = m.end()
        if m["open"]:
            out.append("(")
        elif m["close"]:
            out.append(")")
        elif m["minus"]:
            out.append("NOT")
        elif m["word"] in ("AND", "OR", "NOT") and not m["field"]:
            out.append(m["word"])
        elif (term := _term(m["word"], m["phrase"], m["field"], fuzzy, starts)) is not None:
            out.append(term)
    return out


Words = Literal["any", "all"]


class _Parser:
    def __init__(self, tokens: list[str | Term], words: Words) -> None:
        self.tokens = tokens
        self.at = 0
        self.words = words

    def peek(self) -> str | Term | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str | Term | None:
        token = self.peek()
        self.at += 1
        return token

    def either(self) -> Node:
        children = [self.both()]
        while self.peek() == "OR":
            self.take()
            children.append(self.both())
        return children[0] if len(children) == 1 else Or(tuple(children))

    def sequence(self) -> Node:
        """Clauses side by side. With `words="all"` they are one AND (parsed by `both`); with "any" each clause
        may match, as a search engine's default OR: any positive clause, and none of the negated ones."""
        if self.words == "all":
            return self.either()
        clauses = [self.either()]
        while (token := self.peek()) is not None and token != ")":
            clauses.append(self.either())
        return any_of(clauses)

    def both(self) -> Node:
        children = [self.unary()]
        while (token := self.peek()) == "AND" or (
            self.words == "all" and token is not None and token not in ("OR", ")")
        ):
            if token == "AND":
                self.take()
            children.append(self.unary())
        return children[0] if len(children) == 1 else And(tuple(children))

    def unary(self) -> Node:
        token = self.take()
        if token == "NOT":
            return Not(self.unary())
        if token == "(":
            inner = self.sequence()
            if self.take() != ")":
                raise QueryError("a '(' is not closed")
            return inner
        if isinstance(token, Term):
            return token
        raise QueryError("the query ends too early" if token is None else f"{token!r} is not expected here")


def any_of(clauses: list[Node]) -> Node:
    """Clauses side by side under `words="any"`: `a b -c` is (a OR b) AND NOT c; negations alone are all required."""
    positive = [c for c in clauses if not isinstance(c, Not)]
    negated = [c for c in clauses if isinstance(c, Not)]
    core = [positive[0] if len(positive) == 1 else Or(tuple(positive))] if positive else []
    joined = core + negated
    return joined[0] if len(joined) == 1 else And(tuple(joined))


def _nesting(tokens: list[str | Term]) -> int:
    depth = deepest = 0
    for token in tokens:
        if token == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif token == ")":
            depth -= 1
    return deepest


def parse(text: str, *, fuzzy: bool = False, words: Words = "all", starts: bool = False) -> Node:
    """The query's tree; `fuzzy` gives every plain word its length's typo tolerance (`auto_edits`); `words` says
    what clauses side by side mean: all of them (an AND), or any (the ranked search's default); `starts` makes
    every plain word a prefix (memory-mcp's boolean search: a field contains the value)."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is longer than {MAX_QUERY_CHARS} characters")
    tokens = _tokens(text, fuzzy, starts)
    if not any(isinstance(t, Term) for t in tokens):
        raise QueryError("the query has no word to search for")
    if sum(isinstance(t, Term) for t in tokens) > MAX_TERMS:
        raise QueryError(f"the query has more than {MAX_TERMS} terms")
    if _nesting(tokens) > MAX_NESTING:
        raise QueryError(f"the query nests parentheses more than {MAX_NESTING} deep")
    parser = _Parser(tokens, words)
    tree = parser.sequence()
    if parser.peek() is not None:
        raise QueryError("a ')' has no '('")
    return tree


def leaves(node: Node) -> list[tuple[Term, bool]]:
    """Each term with whether it counts for a match (not under an odd number of NOTs)."""
    out: list[tuple[Term, bool]] = []

    def walk(n: Node, positive: bool) -> None:
        if isinstance(n, Term):
            out.append((n, positive))
        elif isinstance(n, Not):
            walk(n.child, not positive)
        else:
            for child in n.children:
                walk(child, positive)

    walk(node, True)
    return out


# --- judging ------------------------------------------------------------------------------------------

# A node as the judge reads it: each field's folded values (`_f_<field>` without the prefix), each as words.
Document = Mapping[str, Sequence[list[str]]]


def document(folded: Mapping[str, Sequence[str]]) -> dict[str, list[list[str]]]:
    """`{"name": ["alice smith"]}` -> `{"name": [["alice", "smith"]]}`."""
    return {
        field: [WORD.findall(value) for value in values if isinstance(value, str)] for field, values in folded.items()
    }


def search_text_document(text: str) -> dict[str, list[list[str]]]:
    """A node's search text (its folded values joined by SEPARATOR) as the judge reads it when the query names no
    field: all its words in one list, the separators kept as boundaries. Counts as `document` of the values would,
    with one tokenizing and one count per term instead of one per value (a ranked page judges up to a thousand)."""
    return {"": [_WORD_OR_SEPARATOR.findall(text)]}


def _word_matches(term: Term, word: str) -> bool:
    """A prefix or typo term's one word (`occurrences` counts an exact word itself)."""
    wanted = term.words[0]
    if term.prefix:
        return word.startswith(wanted)
    # A separator (search_text_document) is no word, however short the typo term.
    return word != SEPARATOR and Levenshtein.distance(word, wanted, score_cutoff=term.edits) <= term.edits


def _phrase_count(words: list[str], phrase: list[str]) -> int:
    """How often the phrase's words stand in a row in `words`, overlaps included: tried only where its first word
    stands (found by `list.index`, at C speed), not at every position."""
    first, n, count, at = phrase[0], len(phrase), 0, -1
    while True:
        try:
            at = words.index(first, at + 1)
        except ValueError:
            return count
        count += words[at : at + n] == phrase


def _count_in(term: Term, words: list[str]) -> int:
    """How often the term occurs in one value's words."""
    if len(term.words) > 1:
        return _phrase_count(words, list(term.words))
    if term.prefix or term.edits:
        return sum(1 for word in words if _word_matches(term, word))
    return words.count(term.words[0])  # the common case, at C speed


def _fields(term: Term, doc: Document) -> Iterable[str]:
    return (term.field,) if term.field is not None else doc


def occurrences(term: Term, doc: Document) -> dict[str, int]:
    """How often the term occurs in each field it occurs in."""
    found: dict[str, int] = {}
    for field in _fields(term, doc):
        count = sum(_count_in(term, words) for words in doc.get(field, ()))
        if count:
            found[field] = count
    return found


def count(term: Term, doc: Document) -> int:
    """How often the term occurs in the document, all fields together (`occurrences`' sum, without the dict)."""
    return sum(_count_in(term, words) for field in _fields(term, doc) for words in doc.get(field, ()))


def evaluate(node: Node, holds: Callable[[Term], bool]) -> bool:
    """The query's truth, given each term's."""
    if isinstance(node, Term):
        return holds(node)
    if isinstance(node, Not):
        return not evaluate(node.child, holds)
    if isinstance(node, And):
        return all(evaluate(child, holds) for child in node.children)
    return any(evaluate(child, holds) for child in node.children)


def matches(node: Node, doc: Document) -> bool:
    return evaluate(node, lambda term: bool(occurrences(term, doc)))


def matched_fields(node: Node, doc: Document) -> list[str]:
    """The fields where a term that counts for the match occurs, sorted."""
    fields: set[str] = set()
    for term, positive in leaves(node):
        if positive:
            fields.update(occurrences(term, doc))
    return sorted(fields)


# --- what an engine's index can find -----------------------------------------------------------------

Syntax = Literal["redisearch", "tantivy"]


def _recall_term(term: Term, syntax: Syntax) -> str | None:
    if len(term.words) > 1:
        return '"' + " ".join(term.words) + '"'
    word = term.words[0]
    if term.prefix:
        # RediSearch needs two characters before a `*`; Tantivy's parser has no prefix term.
        return f"{word}*" if syntax == "redisearch" and len(word) >= 2 else None
    if term.edits:
        # RediSearch's `%w%` is one edit, `%%w%%` two; Tantivy's parser has no fuzzy term.
        return "%" * term.edits + word + "%" * term.edits if syntax == "redisearch" else None
    return word


def _expands(node: Node) -> bool:
    return isinstance(node, Term) and (node.prefix or node.edits > 0)


def recall(node: Node, syntax: Syntax) -> str | None:
    """A query the engine's index answers with every true match (and maybe more); None when the index cannot
    narrow it (the caller scans). Fields are dropped (the index holds all text as one field) and negations
    are left to the judge: an engine that stems would exclude more than the judge does."""
    if isinstance(node, Term):
        return _recall_term(node, syntax)
    if isinstance(node, Not):
        return None
    recalled = [(child, recall(child, syntax)) for child in node.children]
    parts = [p for _, p in recalled]
    if isinstance(node, And):
        kept = [p for p in parts if p is not None]
        # A prefix or typo term is expanded by the index to a bounded number of words (RediSearch's
        # MAXEXPANSIONS): where an exact word narrows the AND as well, leave the expansion to the judge.
        exact = [p for child, p in recalled if p is not None and not _expands(child)]
        kept = exact or kept
        if not kept:
            return None
        joined = " ".join(kept) if syntax == "redisearch" else " AND ".join(kept)
        return kept[0] if len(kept) == 1 else f"({joined})"
    present = [p for p in parts if p is not None]
    if len(present) < len(parts):
        return None
    joined = " | ".join(present) if syntax == "redisearch" else " OR ".join(present)
    return f"({joined})"
