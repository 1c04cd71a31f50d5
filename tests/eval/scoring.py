"""The search evaluation's pure parts: the words of a text, whether a question shares a word with its answer, the
queries each search is given, and the scores (recall@k, MRR) of the ranks the searches answered.

Words are lowercased runs of letters and digits, less STOP_WORDS and one-letter words. Two words count as the same
word when they are equal or one is an inflection of the other: the shorter (3 letters or more) begins the longer, or
they begin with the same 5 letters, or with the same 3 or more letters up to three short of the shorter's length
("rockets" and "rocket", "trackers" and "tracking", "studies" and "studying", "carves" and "carving"). It errs
towards "the same" ("computer" and "company"), so a question counted as sharing no word with its answer shares no
stem a stemming full-text index could match either."""

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SET_FILE = Path(__file__).with_name("search_set.json")

# Kept fixed: the set's no-shared-word half is judged with it, so changing it changes which questions are in it.
_STOP_TEXT = """
    a about after against all also am an and any are as at be been before being between both but by can could
    did do does doing done during each ever for from get gets got had has have having he her here hers him his
    how i if in into is it its itself just me more most my no nor not of off on once only or other our ours out
    over own same she should so some such than that the their theirs them then there these they this those
    through to too under until up us very was we were what when where which while who whom whose why will with
    would you your yours anyone anybody someone somebody something anything one ones thing things kind sort know
    tell find show give let make made makes please
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
# How many hits a search is asked for: recall@5 and MRR over the first ten (a rank below ten scores 0).
K = 5
DEPTH = 10


@dataclass(frozen=True)
class Fact:
    label: str
    name: str
    observations: tuple[str, ...]

    @property
    def text(self) -> str:
        """What a fact says: its name and observations (the text the no-shared-word check and embeddings read)."""
        return ". ".join((self.name, *self.observations))


@dataclass(frozen=True)
class Question:
    question: str
    answer: str


@dataclass(frozen=True)
class SearchSet:
    facts: tuple[Fact, ...]
    questions: tuple[Question, ...]

    def fact(self, name: str) -> Fact:
        return next(fact for fact in self.facts if fact.name == name)

    def no_shared_word(self) -> tuple[Question, ...]:
        """The questions that share no word with their answer's name and observations."""
        return tuple(q for q in self.questions if not shared_words(q.question, self.fact(q.answer).text))


def load_set(path: Path = SET_FILE) -> SearchSet:
    data = json.loads(path.read_text(encoding="utf-8"))
    facts = tuple(Fact(f["label"], f["name"], tuple(f["observations"])) for f in data["facts"])
    return SearchSet(facts, tuple(Question(q["question"], q["answer"]) for q in data["questions"]))


def words(text: str) -> list[str]:
    """The text's words in order, each once: lowercased, less stop words and one-letter words."""
    seen: dict[str, None] = {}
    for word in re.findall(r"[^\W_]+", text.lower()):
        if len(word) > 1 and word not in STOP_WORDS:
            seen.setdefault(word)
    return list(seen)


def same_word(a: str, b: str) -> bool:
    """Equal, or one an inflection of the other (see the module's docstring)."""
    short, long = sorted((a, b), key=len)
    if short == long or (len(short) >= 3 and long.startswith(short)):
        return True
    common = 0
    for x, y in zip(short, long, strict=False):
        if x != y:
            break
        common += 1
    return common >= 5 or (common >= 3 and common >= len(short) - 3)


def shared_words(question: str, text: str) -> list[str]:
    """The question's words that the text also has (as the same word)."""
    theirs = words(text)
    return [word for word in words(question) if any(same_word(word, other) for other in theirs)]


def fulltext_query(question: str) -> str:
    """The question as a ranked full-text query: its words joined by OR (any may match; more matches rank higher)."""
    return " OR ".join(words(question))


def rank(answer: str, names: Sequence[str]) -> int | None:
    """Where the answer stands in a search's hits, from 1; None when it is not among them."""
    return names.index(answer) + 1 if answer in names else None


def best_rank(ranks: Iterable[int | None]) -> int | None:
    """The best of several searches' ranks (substring search by each of a question's words)."""
    found = [r for r in ranks if r is not None]
    return min(found) if found else None


def recall_at(ranks: Sequence[int | None], k: int = K) -> float:
    """The share of questions whose answer is among the first k hits."""
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def mrr(ranks: Sequence[int | None], depth: int = DEPTH) -> float:
    """Mean reciprocal rank: 1/rank for an answer in the first `depth` hits, 0 otherwise."""
    return sum(1 / r for r in ranks if r is not None and r <= depth) / len(ranks) if ranks else 0.0


def fuse(rankings: Iterable[Sequence[str]], k: int = 60) -> list[str]:
    """Reciprocal rank fusion of several rankings of names: best first (the offline estimate of hybrid search)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for position, name in enumerate(ranking, start=1):
            scores[name] = scores.get(name, 0.0) + 1 / (k + position)
    return sorted(scores, key=lambda name: -scores[name])


@dataclass(frozen=True)
class Score:
    search: str
    recall_all: float
    mrr_all: float
    recall_half: float
    mrr_half: float


def score(search: str, ranks: Sequence[int | None], in_half: Sequence[bool]) -> Score:
    """One search's scores over the whole set and over its no-shared-word half (`in_half`, per question)."""
    half = [r for r, inside in zip(ranks, in_half, strict=True) if inside]
    return Score(search, recall_at(ranks), mrr(ranks), recall_at(half), mrr(half))


def table(scores: Iterable[Score], questions: int, half: int) -> str:
    """The scores as a plain-text table: the whole set, then the no-shared-word half."""
    head = f"{'search':<44} {'recall@5':>9} {'MRR@10':>7} {'half recall@5':>14} {'half MRR@10':>12}"
    rows = [
        f"{s.search:<44} {s.recall_all:>9.3f} {s.mrr_all:>7.3f} {s.recall_half:>14.3f} {s.mrr_half:>12.3f}"
        for s in scores
    ]
    return "\n".join([f"{questions} questions; half: the {half} sharing no word with their answer", head, *rows])
