"""How on-call engineers word questions: which asks a question makes, and the time window it gives.

A question is a set of asks ("what does payments call, which of those changed in the last six
hours, and who owns each?" is dependencies + changes + ownership), each read from its own words, so
none is lost to another. Pure: the window is relative to the `now` the caller passes.
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta

IMPACT = "impact"
DEPENDENCIES = "dependencies"
OWNERSHIP = "ownership"
PATH = "path"
CHANGES = "changes"  # deploys in a window: of an entity and what it depends on, or of the whole graph
RISK = "risk"  # the ranking of entities by how much breaks with them (single points of failure)
AFFECTED = "affected"  # whether one named entity breaks when another fails: yes with the path, or no and why
KINDS = (DEPENDENCIES, CHANGES, OWNERSHIP, IMPACT, AFFECTED, PATH, RISK)

DEFAULT_WINDOW = timedelta(hours=6)

_ASK_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        PATH,
        re.compile(
            r"\b(path|between|connect(ed|s|ion)?|chain|route|linked|link|reach(es)?|get to)\b"
            r"|\bdoes \S+(?: \S+){0,3} (call|depend on|use|talk to|need|read from|write to|publish to)\b"
        ),
    ),
    (
        IMPACT,
        re.compile(
            r"\b(break|breaks|broken|down|fail|fails|failing|failed|failure|outage|impact(ed|s)?|blast|affected|"
            r"survive|flapping|flaps|unreachable|unavailable|fallout|take[sn]? out|took out|dies|died|dead|"
            r"crash(es|ed)?|"
            r"degraded?|goes away|offline|at risk|hurt|what happens)\b"
            r"|\b(what|who|which \w+) (else )?(depends|relies|rel(y|ies)) on\b|\bdependents\b|\bupstream of\b"
        ),
    ),
    (
        OWNERSHIP,
        re.compile(
            r"\b(own|owns|owned|owner|owners|ownership|responsible|whose|maintains?|maintainers?|on[- ]?call|"
            r"on the hook|escalate|team|teams)\b|\bwho (do|should|can) (i|we) (ping|page|call|contact|ask|talk to)\b"
            r"|\b(ping|page|contact) about\b|\bwho (runs|looks after|handles)\b"
            r"|\bwho (gets|is|should be|would be|to) (paged|pinged|called|contacted|page|ping|call|contact)\b"
            r"|\b(paged|pinged) (for|about)\b"
        ),
    ),
    (
        CHANGES,
        re.compile(
            r"\b(chang(e|ed|es)|deploy(s|ed|ment|ments)?|releas(e|ed|es)|rolled out|roll ?outs?|shipped|recent(ly)?|"
            r"new version|went out|pushed)\b"
        ),
    ),
    (
        DEPENDENCIES,
        re.compile(
            r"\b(deps|dependencies|downstreams?|depends on|relies on|calls|uses|talks to|needs)\b"
            r"|\bwhat does .+ (call|depend on|use|talk to|need|rely on|hit|read from|write to)\b"
            r"|\bdepend\b"
        ),
    ),
)
_RISK_WORDS = re.compile(
    r"\b(single points? of failure|spofs?|most critical|riskiest|most (at risk|depended|important|dangerous)|"
    r"biggest blast|what would hurt (the )?most|weakest|critical (path|dependenc(y|ies)))\b"
)
# "what depends on X" asks for X's dependents (its blast radius), not its dependencies.
_DEPENDENTS = re.compile(r"\b(what|who|which \w+) (else )?(depends|relies|rel(y|ies)) on\b|\bdependents\b")
# "what does X depend on" is X's dependencies, not its dependents, whatever IMPACT's words say.
_FORWARD = re.compile(r"\bwhat (does|do|is) .+ (depend(s|ing)? on|rel(y|ies|ying) on|need)\b|\bdoes \S+ depend on\b")
_WHAT_IT_CALLS = re.compile(r"\b(what|which)\s+(does|do|did)\b.*\b(call|depend|use|talk|need|rely|hit|read|write)")
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
    "forty-five": 45, "couple": 2, "few": 3,
}  # fmt: skip
_AMOUNT = r"(\d+(?:\.\d+)?|" + "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True)) + ")"
_UNIT = r"(seconds?|secs?|s|months?|mos?|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)"
_WINDOW = re.compile(
    rf"\b(?:last|past|previous|within|in the last|over the last)\s+(?:(?:a )?couple of\s+)?{_AMOUNT}?\s*{_UNIT}\b"
    rf"|\b{_AMOUNT}\s*{_UNIT}\s+ago\b|\b(\d+)\s*(s|m|h|d|w|y)\b"
)
_SHORTEST_SECONDS, _LONGEST_SECONDS = 60, 365 * 86400  # as bot/query/durations.py allows
_HALF_HOUR = re.compile(r"\bhalf (an? )?hour\b")


def read_kinds(question: str, mentions: int) -> tuple[str, ...]:
    """Every ask the question's words make, in the order answers give them; a question of one or two
    names and no ask words gets the old defaults (dependencies, or the path between the two)."""
    lowered = question.casefold()
    found = [kind for kind, pattern in _ASK_WORDS if pattern.search(lowered)]
    if _RISK_WORDS.search(lowered):
        found.append(RISK)
    if PATH in found and mentions < 2:
        found.remove(PATH)
    if PATH in found:  # two names and link words: the other asks' words are the link's ("does a call b")
        found = [PATH] + [k for k in found if k in (OWNERSHIP, CHANGES) and _asks_apart(lowered, k)]
    if DEPENDENCIES in found and _DEPENDENTS.search(lowered) and not _FORWARD.search(lowered):
        found.remove(DEPENDENCIES)
    if IMPACT in found and _FORWARD.search(lowered):
        found.remove(IMPACT)
        if DEPENDENCIES not in found:
            found.append(DEPENDENCIES)
    if RISK in found and mentions:
        found = [IMPACT if k == RISK else k for k in found]  # "most at risk if mongodb fails": its blast radius
    if not found:
        found = [PATH if mentions >= 2 else DEPENDENCIES]
    order = {kind: i for i, kind in enumerate(KINDS)}
    return tuple(sorted(dict.fromkeys(found), key=order.__getitem__))


def asks_link(question: str) -> bool:
    """Whether the question's words ask how two entities are linked ("is X connected to Y", "does X call
    Y"), not what one depends on ("what does X call")."""
    lowered = question.casefold()
    return bool(dict(_ASK_WORDS)[PATH].search(lowered)) and not _WHAT_IT_CALLS.search(lowered)


def _asks_apart(lowered: str, kind: str) -> bool:
    """Whether an ask next to a link question is its own ("... and who owns it?")."""
    return bool(re.search(r"\band (who|when|what|which)\b", lowered)) and kind in (OWNERSHIP, CHANGES)


def read_window(question: str, now: datetime | None = None) -> timedelta:
    """The window the question gives ("last 2 hours", "past 30 min", "six hours", "today", "since
    yesterday", "this morning"); DEFAULT_WINDOW when it gives none. Day words need `now`."""
    lowered = question.casefold()
    if _HALF_HOUR.search(lowered):
        return timedelta(minutes=30)
    typed = typed_window(question)
    if typed is not None:
        # "past 0 hours" or "past 99999999999 weeks": the nearest window answers can take (the
        # reply names the window it used), never a zero window or an OverflowError.
        return timedelta(seconds=min(max(typed[1], _SHORTEST_SECONDS), _LONGEST_SECONDS))
    if now is not None:
        day = _day_window(lowered, now)
        if day is not None:
            return day
    if re.search(r"\b(this|past|last) week\b", lowered):
        return timedelta(weeks=1)
    if re.search(r"\b(yesterday|last day|past day)\b", lowered):
        return timedelta(days=1)
    return DEFAULT_WINDOW


def bounded_window(question: str, window: timedelta) -> tuple[timedelta, str]:
    """The window answers take (1 minute … 1 year) for `window`, and what to say when the question typed
    one outside that range, or a reader gave one ("" when nothing was moved): never moved in silence."""
    seconds = min(max(window.total_seconds(), _SHORTEST_SECONDS), _LONGEST_SECONDS)
    bounded = timedelta(seconds=seconds)
    typed = typed_window(question)
    if typed is not None and not _SHORTEST_SECONDS <= typed[1] <= _LONGEST_SECONDS:
        asked = f"'{typed[0]}'"
    elif bounded != window:
        asked = f"A window of {window.total_seconds():g} seconds"
    else:
        return bounded, ""
    return (
        bounded,
        f"{asked} is outside the windows answers take, from 1 minute to 1 year (1m … 365d): {_used(bounded)}.",
    )


def _used(window: timedelta) -> str:
    shortest = window.total_seconds() == _SHORTEST_SECONDS
    return "answered for the last minute instead" if shortest else "answered for the last year (365 days) instead"


def typed_window(question: str) -> tuple[str, float] | None:
    """(the words that give a window, its length in seconds, unbounded) when the question types one."""
    match = _WINDOW.search(question.casefold())
    if not match:
        return None
    amount_text = match.group(1) or match.group(3) or match.group(5)
    unit = match.group(2) or match.group(4) or match.group(6)
    return match.group(), _amount(amount_text) * _unit_seconds(unit)


def _unit_seconds(unit: str) -> int:
    if unit.startswith("mo"):
        return 30 * 86400
    return {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 365 * 86400}[unit[0]]


def _amount(text: str | None) -> float:
    if not text:
        return 1  # "last hour"
    return _NUMBERS[text] if text in _NUMBERS else float(text)


def _day_window(lowered: str, now: datetime) -> timedelta | None:
    midnight = datetime.combine(now.date(), time(0), tzinfo=now.tzinfo)
    if re.search(r"\bsince yesterday\b|\byesterday\b", lowered):
        return now - (midnight - timedelta(days=1))
    if re.search(r"\bthis morning\b", lowered):
        return now - min(midnight + timedelta(hours=6), now - timedelta(minutes=1))
    if re.search(r"\blast night\b|\bovernight\b", lowered):
        return now - (midnight - timedelta(hours=6))
    if re.search(r"\btoday\b|\bso far\b|\bsince midnight\b", lowered):
        return max(now - midnight, timedelta(minutes=1))
    return None
