"""Whether one named entity breaks when another fails: "if rabbitmq dies does the catalogue go down
too?", "would orders be affected by a kafka outage?", "will redis going down take checkout with it?".

Such a question names two sides: the entity that fails (the one the failure words sit around: "if X",
"X dies", "an X outage", "losing X") and the entities asked about ("does Y", "Y go down", "take Y").
It is answered by one section per entity asked about: yes with the cited path from it to the failed
one, or no and why (no path at all, or only through soft dependencies: it degrades, never breaks).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graph.exposure.visibility import HIDDEN, Viewer
from graph.naming.refs import short_name
from graph.questions.answers import join
from graph.questions.sections import Section
from graph.questions.wording import AFFECTED
from graph.snapshot import Snapshot
from graph.walks.blast import BREAKS, blast_radius
from graph.walks.paths import CitedPath, chain_text

Span = tuple[str, int, int]  # an entity and where its name sits among the question's words [start, end)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DETERMINERS = _words("the a an our my your their this that its")
_JOINERS = _words("and or nor both either")  # "does checkout or cart break": one side
# Words right before the failing entity: a condition ("if X dies", "when X is down"), a loss ("losing X",
# "without X"), its agent ("affected by X", "go down with X", "survive X going down").
_FAILING_BEFORE = _words(
    "if when whenever once after should losing lose lost loses without by with survive survives surviving"
)
# "an outage of X", "because of X", "due to X"
_FAILING_PAIRS = frozenset(
    [*((noun, "of") for noun in _words("outage outages failure failures loss death crash because")), ("due", "to")]
)
# Words right before an entity asked about: the yes/no question's verb ("does Y", "is Y", "would Y"), or
# the failure's object ("take Y", "affect Y", "bring down Y", "impact on Y", "happens to Y").
_ASKED_BEFORE = _words(
    "does do did is are was were would will can could should might may"
    " take takes taking took affect affects affecting impact impacts impacting break breaks hit hits hurt hurts"
    " kill kills down out on to"
)
_VERBS = _words("does do did is are was were would will can could should might may")
_FAILING_AFTER = re.compile(
    r"^(?:(?:is|was|were|are|gets|got|has|had|being|be|to|should|were to|just) )?"
    r"(?:(?:go|goes|going|went|gone) down|down|dies|died|dying|dead|die|fails?|failed|failing|failures?|outages?|"
    r"crash(?:es|ed|ing)?|offline|unavailable|unreachable|goes away|flapping|flaps|broke|broken)\b"
)
_ASKED_AFTER = re.compile(
    r"^(?:(?:still|also|then) )?(?:(?:be|get|stay|keep|go|goes|going|stays|keeps) )?"
    r"(?:break|breaks|down|fail|fails|affected|impacted|hit|survive|survives|work|works|working|up|ok|okay|fine|"
    r"safe|too|also|with it|as well)\b"
)
_SURVIVES = re.compile(
    r"\b(survive[sd]?|surviving|unaffected|still (be )?(up|ok|okay|fine|running|working|work|works|available|alive)|"
    r"stays? up|keeps? (working|running)|be (ok|okay|fine|safe)|safe)\b"
)
# "what breaks if X dies", "who is affected when X is down": a blast radius, whatever else it names.
_WHAT_BREAKS = re.compile(
    r"\b(what|who|which|whom)( \w+){0,2}? (else )?(break|breaks|broke|goes|go|fail|fails|depend|depends|"
    r"survive|survives|degrade|degrades|affected|impacted|hit|dies|die)\b"
)


@dataclass(frozen=True, slots=True)
class Roles:
    """Who fails and who is asked about; `survives` when the question asks whether they stay up ("can Y
    survive X going down", "is Y still up if X dies"), so that yes and no answer the question asked."""

    failing: str
    asked: tuple[str, ...]
    survives: bool = False


def read_roles(words: Sequence[str], spans: Sequence[Span]) -> Roles | None:
    """The roles when the question asks whether some named entities break with another one; None when
    it asks anything else (a blast radius, two blast radii, a failure of several at once)."""
    said = " ".join(words)
    if _WHAT_BREAKS.search(said):
        return None
    groups = _sides(words, sorted(spans, key=lambda s: s[1]))
    if len(groups) != 2:
        return None
    scores = [_failing_score(words, group) for group in groups]
    failing = 0 if scores[0] > scores[1] else 1
    if scores[failing] <= scores[1 - failing] or len(groups[failing]) != 1:
        return None
    asked = groups[1 - failing]
    if not _is_asked(words, asked):
        return None
    return Roles(groups[failing][0][0], tuple(ref for ref, _, _ in asked), bool(_SURVIVES.search(said)))


def stands_as_side(words: Sequence[str], start: int, end: int) -> bool:
    """Whether the words at [start, end) stand where a side of a yes/no impact question does: between a
    condition and a failure ("if X dies"), or a question's verb and a failure ("does Y go down")."""
    before, _ = _before(words, start)
    after = _after(words, end)
    failing = before in _FAILING_BEFORE and bool(_FAILING_AFTER.match(after))
    return failing or (before in _VERBS and bool(_ASKED_AFTER.match(after)))


def _sides(words: Sequence[str], spans: Sequence[Span]) -> list[list[Span]]:
    """Names joined by "and"/"or" (or nothing but a comma) are one side of the question."""
    groups: list[list[Span]] = []
    for span in spans:
        if groups and all(w in _JOINERS for w in words[groups[-1][-1][2] : span[1]]):
            groups[-1].append(span)
        else:
            groups.append([span])
    return groups


def _before(words: Sequence[str], start: int) -> tuple[str, str]:
    """The two words before `start`, determiners skipped ("if the catalogue" reads "if")."""
    found = [w for w in reversed(words[max(start - 4, 0) : start]) if w not in _DETERMINERS][:2]
    return (found + ["", ""])[0], (found + ["", ""])[1]


def _after(words: Sequence[str], end: int) -> str:
    return " ".join(words[end : end + 3])


def _failing_score(words: Sequence[str], group: list[Span]) -> int:
    """How surely the failure words are about this side: 2 for a word before it, 1 for words after it,
    less one where it is the failure's object."""
    first, second = _before(words, group[0][1])
    score = 2 if first in _FAILING_BEFORE or (second, first) in _FAILING_PAIRS else 0
    score -= 1 if first in _ASKED_BEFORE and first not in ("on", "to") else 0
    return score + (1 if _FAILING_AFTER.match(_after(words, group[-1][2])) else 0)


def _is_asked(words: Sequence[str], group: list[Span]) -> bool:
    """Whether the question asks about this side ("does Y", "take Y", "Y go down"), not only names it."""
    first, _ = _before(words, group[0][1])
    return first in _ASKED_BEFORE or bool(_ASKED_AFTER.match(_after(words, group[-1][2])))


def affected(snapshot: Snapshot, asked: str, failing: str, viewer: Viewer, *, survives: bool = False) -> Section:
    """Whether `asked` breaks when `failing` goes down: yes with the cited path from `asked` to it, or no
    and why (it degrades through soft dependencies only, or depends on it in no way). With `survives`
    the question asked whether it stays up, and yes and no say that."""
    a, f = short_name(asked), short_name(failing)
    hit = blast_radius(snapshot, failing, viewer=viewer).impact_on(asked)
    if hit is None:
        return _unaffected(snapshot, asked, failing, viewer, survives=survives)
    edges = hit.edges[::-1]  # from `asked` to `failing`, as the chain reads
    chain = chain_text(CitedPath(asked, failing, hit.path[::-1], edges, hit.hidden), _name)
    hops = f"{hit.hops} hop{'s' if hit.hops != 1 else ''}"
    if hit.impact == BREAKS:
        verdict = "No" if survives else "Yes"
        lines = (f"{verdict}: {a} breaks if {f} goes down.", f"{a} depends on {f} ({hops}): {chain}.")
        return Section(AFFECTED, (asked, failing), lines, edges)
    soft = [f"{short_name(e.src)} -{e.rel}-> {short_name(e.dst)}" for e in edges if e.soft]
    through = "a soft dependency" if len(soft) == 1 else "soft dependencies"
    verdict = "Yes, degraded" if survives else "No, it degrades"
    lines = (
        f"{verdict}: {a} does not break if {f} goes down, but it degrades.",
        f"{a} depends on {f} ({hops}) only through {through} ({join(soft)}): {chain}.",
    )
    return Section(AFFECTED, (asked, failing), lines, edges)


def _unaffected(snapshot: Snapshot, asked: str, failing: str, viewer: Viewer, *, survives: bool) -> Section:
    """No path from `asked` to `failing`; said with the path the other way when `failing` depends on `asked`."""
    a, f = short_name(asked), short_name(failing)
    verdict = "Yes" if survives else "No"
    said = f"{verdict}: {a} does not depend on {f}, directly or through anything else; {f} going down leaves it up."
    back = blast_radius(snapshot, asked, viewer=viewer).impact_on(failing)
    if back is None:
        return Section(AFFECTED, (asked, failing), (said,))
    edges = back.edges[::-1]
    chain = chain_text(CitedPath(failing, asked, back.path[::-1], edges, back.hidden), _name)
    verb = "breaks" if back.impact == BREAKS else "degrades"
    other = f"It is the other way round: {f} depends on {a} ({chain}), so {f} {verb} if {a} goes down."
    return Section(AFFECTED, (asked, failing), (said, other), edges)


def _name(ref: str) -> str:
    """A path's entity as a chain names it; one the viewer may not see stays a placeholder."""
    return ref if ref == HIDDEN else short_name(ref)
