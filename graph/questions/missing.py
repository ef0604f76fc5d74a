"""Names a question types that the graph does not hold, so that a question is never answered as if it
named fewer entities than it does: each is found among the question's words and answered with
suggestions ("'ts-verification-code-servce' matches no entity in the graph. Did you mean: ...?").

A word is taken for a name when it can only be one (hyphenated, or letters and digits: `ts-user-servce`,
`redis2`), when it is a few edits from a name the graph holds (`chekout`), or when it stands where a
name must (the other end of "is X connected to zookeeper"). Common words of questions never are.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass

from graph.naming.names import AliasIndex, Allow, name_words
from graph.naming.refs import short_name


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words(
    "a an the what which who whom whose is are was were if do does did of to in on for and or it its that this"
    " goes go down breaks break fails fail by with from i we me my our us you your"
)
# Common words of questions: never taken for a misspelt name (a suggestion for "owns" is noise).
QUESTION_WORDS = STOPWORDS | _words(
    "about after all any anything around be been being call calls changed changes could deploy deployed deploys"
    " each else everything failure happens has have how last least list most much need next now own owned owner"
    " owners owns past ping recent recently risk should since single some someone tell than them then there"
    " these they those today uses what's when where whom why will would yesterday hours hour minutes days"
    " points point system systems service services team teams shipped ship releases released release went"
    " out got anything deployments rolled roll prod production graph site slow broken okay fine thanks help"
    " first look should start today's yesterday's morning night week hours? it? ok everything"
    # the words of links and failures ("is X connected to Y", "would Y be affected by an X outage")
    " change connected connection connects linked link links path chain route reach reaches between depend depends"
    " talk talks affected affect affects impacted impact impacts outage outages survive survives still up"
    " dies died dying dead crash crashes crashed going take takes taking with too also safe working"
    " flapping flaps flapped unreachable unavailable offline failing erroring errors timing latency degraded"
    " restarting restarted paging alerting alert alerts incident"
    " database db queue cache cluster region host node server"
    # how people start and end a question, and the on-call words around a name
    " hey hi please pls can you know whether happen happening again right actually on-call oncall follow-up"
    " read-only real-time e-mail"
)
SUGGEST_CUTOFF = 60.0  # of graph.naming.suggest's blend: one edit in five letters, for a word that is no common word
PREPOSITIONS = frozenset({"in", "to", "for", "on", "about", "of", "under", "with", "from", "behind"})
_POSSESSIVE = re.compile(r"['’]s\b|['’]$")
# "4h", "30min", "2d": a window as typed, never a name the graph lacks; nor a version, a date or a time.
_WINDOW_TOKEN = re.compile(r"\d+(\.\d+)?(s|sec|secs|m|min|mins|mo|mos|h|hr|hrs|d|w|y|yr|yrs)")
_NOT_NAMES = re.compile(r"v?\d+(\.\d+)+|\d{4}-\d\d-\d\d(t[\d:]+z?)?|\d+:\d\d(:\d\d)?|\d+(st|nd|rd|th|s|x|xx)")
_SHAPED = re.compile(r"[-_]|\d[a-z]|[a-z]\d")


@dataclass(frozen=True, slots=True)
class Token:
    """A word of the question as typed (split on spaces, so `ts-user-servce` stays whole), cleaned of
    punctuation around it, and where its name words sit among the question's [start, end)."""

    text: str
    start: int
    end: int


def words_of(question: str) -> tuple[list[str], list[Token]]:
    """The question's name words (as aliases are compared), and its typed tokens among them."""
    words: list[str] = []
    tokens: list[Token] = []
    for typed in question.split():
        typed = _POSSESSIVE.sub("", typed)
        parts = name_words(typed)
        if parts:
            tokens.append(Token(typed.strip(".,;:!?()[]{}\"'`"), len(words), len(words) + len(parts)))
            words += parts
    return words, tokens


def locate(words: Sequence[str], text: str) -> tuple[int, int] | None:
    """Where a name (as a model reader gave it) sits among the question's words, if it was typed."""
    wanted = name_words(text)
    for start in range(len(words) - len(wanted) + 1):
        if wanted and list(words[start : start + len(wanted)]) == wanted:
            return start, start + len(wanted)
    return None


def unfound_words(
    index: AliasIndex,
    question: str,
    covered: Sequence[tuple[int, int]],
    allow: Allow | None,
    other_ids: Container[str] = (),
) -> list[Token]:
    """The typed tokens outside `covered` (the names found) that may be names and are none the graph
    holds: no common word, and no word the graph knows as something else (`other_ids`: deploy ids)."""
    _, tokens = words_of(question)
    return [t for t in tokens if _unfound(index, t, covered, allow) and t.text not in other_ids]


def missing_names(index: AliasIndex, unfound: Sequence[Token], allow: Allow | None, *, link: bool) -> list[Token]:
    """The unfound words that are names: shaped like one or a few edits from one; with `link` (a link
    question that found one name of two), any word of four letters or more is the other one."""
    found = []
    for token in unfound:
        text = token.text.casefold()
        if _SHAPED.search(text) or (len(text) >= 4 and (link or close(index, text, allow))):
            found.append(token)
    return found


def _unfound(index: AliasIndex, token: Token, covered: Sequence[tuple[int, int]], allow: Allow | None) -> bool:
    text = token.text.casefold()
    if any(s < token.end and token.start < e for s, e in covered) or not _may_be_name(text):
        return False
    return not index.lookup(text, allow)[1]


def _may_be_name(text: str) -> bool:
    if text in QUESTION_WORDS or text.isdigit() or _WINDOW_TOKEN.fullmatch(text) or _NOT_NAMES.fullmatch(text):
        return False
    return not all(w in QUESTION_WORDS for w in name_words(text))


def missing_note(index: AliasIndex, name: str, allow: Allow | None) -> str:
    """What a question's name that resolves to nothing is answered with: the entities it may mean
    (a few edits away: beside names that did resolve, a loose likeness is noise)."""
    suggestions = [
        short_name(ref) for ref in index.suggest(name, limit=3, cutoff=SUGGEST_CUTOFF, allow=allow, loose=False)
    ]
    if not suggestions:
        return f"'{name}' matches no entity in the graph, and no name in it is close."
    return f"'{name}' matches no entity in the graph. Did you mean: {', '.join(suggestions)}?"


def close(index: AliasIndex, word: str, allow: Allow | None) -> tuple[str, ...]:
    """Entities a word may be a misspelling of (a few edits away; never a loose likeness)."""
    return index.suggest(word, limit=2, cutoff=SUGGEST_CUTOFF, allow=allow, loose=False)


def unknown_names(question: str) -> list[str]:
    """Words that can only be names the graph does not hold: hyphenated or with digits, or the
    uncommon word after a preposition ("what changed in memcached")."""
    tokens = [t for t in plain_tokens(question) if not _WINDOW_TOKEN.fullmatch(t)]
    named = [t for t in tokens if _SHAPED.search(t)]
    after = [b for a, b in zip(tokens, tokens[1:], strict=False) if a in PREPOSITIONS and b not in QUESTION_WORDS]
    return named + [t for t in after if len(t) >= 3]


def name_like_words(question: str) -> list[str]:
    """The question's tokens (split on spaces, so `ts-travle-servcie` stays whole) that are no common word."""
    tokens = [t for t in plain_tokens(question) if not _WINDOW_TOKEN.fullmatch(t)]
    return [t for t in tokens if len(t) >= 4 and t not in QUESTION_WORDS and not t.isdigit()]


def plain_tokens(question: str) -> list[str]:
    return [t.strip(".,;:!?()[]{}\"'`").casefold() for t in question.split()]
