"""The names a question types: the entities they resolve to (`find_mentions`), where each sits among
the question's words, and those that resolve to nothing (`with_missing`), so that an answer covers every
name or says which it could not find; and, for a yes/no impact question, which name fails and which
are asked about (`roles`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from graph.naming.names import AliasIndex, Allow
from graph.naming.refs import short_name
from graph.questions.affected import Roles, read_roles, stands_as_side
from graph.questions.missing import STOPWORDS, Token, locate, missing_names, missing_note, unfound_words, words_of
from graph.questions.wording import IMPACT, asks_link, read_kinds
from graph.snapshot import Snapshot

MAX_ALIAS_WORDS = 6


@dataclass(frozen=True, slots=True)
class Mention:
    """A name the question types: the entity it resolves to, or none (`candidates`: several it could
    mean; no candidates: nothing in the graph)."""

    text: str
    entity: str | None
    candidates: tuple[str, ...] = ()
    span: tuple[int, int] | None = None  # where among the question's name words (None: named by a model)


def find_mentions(index: AliasIndex, question: str, allow: Allow | None = None) -> tuple[Mention, ...]:
    """Entities a question names: the longest alias match at each position, left to right, over whole
    words as typed (`shop-payment-crad-service` is no mention of `shop-payment`: it is one misspelt name)."""
    words, tokens = words_of(question)
    starts, ends = {t.start for t in tokens}, {t.end for t in tokens}
    found: list[Mention] = []
    i = 0
    while i < len(words):
        for n in range(min(MAX_ALIAS_WORDS, len(words) - i), 0, -1):
            phrase = words[i : i + n]
            if all(w in STOPWORDS for w in phrase) or i not in starts or i + n not in ends:
                continue
            text = " ".join(phrase)
            tier, refs = index.lookup(text, allow)
            if not refs and n == 1 and len(text) < 3:
                continue
            if refs:
                entity = next(iter(refs)) if len(refs) == 1 else None
                mention = Mention(text, entity, tuple(sorted(refs)) if entity is None else (), (i, i + n))
                if all(m.entity != entity or entity is None for m in found):
                    found.append(mention)
                i += n
                break
        else:
            i += 1
    return tuple(found)


def with_missing(
    snapshot: Snapshot, question: str, mentions: Sequence[Mention], allow: Allow | None, kinds: Sequence[str] = ()
) -> tuple[Mention, ...]:
    """The mentions, each placed among the question's words, and after them the names the question types
    that resolve to nothing (entity None, no candidates); unchanged when none resolved."""
    mentions = tuple(mentions)
    if not any(m.entity for m in mentions):
        return mentions
    mentions = _placed(snapshot, question, mentions, allow)
    return mentions + _missing(snapshot, question, mentions, allow, kinds)


def unresolved_note(snapshot: Snapshot, mention: Mention, allow: Allow | None) -> str:
    """What a name that resolves to no one entity is answered with: its candidates, or suggestions."""
    if mention.candidates:
        return f"'{mention.text}' could mean {', '.join(short_name(c) for c in mention.candidates)}; name one of them."
    return missing_note(snapshot.aliases, mention.text, allow)


def _placed(
    snapshot: Snapshot, question: str, mentions: tuple[Mention, ...], allow: Allow | None
) -> tuple[Mention, ...]:
    """The mentions with where they sit in the question's words (a model reader's names have no place yet)."""
    if all(m.span is not None for m in mentions):
        return mentions
    words = words_of(question)[0]
    found = {m.entity: m.span for m in find_mentions(snapshot.aliases, question, allow) if m.entity}
    return tuple(
        m if m.span is not None else replace(m, span=locate(words, m.text) or found.get(m.entity or ""))
        for m in mentions
    )


def _missing(
    snapshot: Snapshot, question: str, mentions: tuple[Mention, ...], allow: Allow | None, kinds: Sequence[str]
) -> tuple[Mention, ...]:
    """The names the question types, beside those found, that resolve to nothing: the other end of a link
    question ("is X connected to zookeeper"), a side of a yes/no impact question, or a misspelt name."""
    covered = [m.span for m in mentions if m.span is not None]
    unfound = unfound_words(snapshot.aliases, question, covered, allow, snapshot.deploy_ids)
    link = asks_link(question) and len(mentions) == 1
    found = [_unknown(t) for t in missing_names(snapshot.aliases, unfound, allow, link=link)]
    if found or len(mentions) != 1 or IMPACT not in (kinds or read_kinds(question, 1)):
        return tuple(found)
    words = words_of(question)[0]
    maybe = [_unknown(t) for t in unfound if len(t.text) >= 4 and stands_as_side(words, t.start, t.end)]
    found_roles = roles(question, mentions + tuple(maybe))
    if found_roles is None:
        return ()
    sides = {found_roles.failing, *found_roles.asked}
    return tuple(m for i, m in enumerate(maybe, start=len(mentions)) if _role_ref(m, i) in sides)


def _unknown(token: Token) -> Mention:
    return Mention(token.text, None, (), (token.start, token.end))


def roles(question: str, mentions: tuple[Mention, ...]) -> Roles | None:
    """Which named entity fails and which are asked about, when the question asks whether they break with
    it; a name that resolves to nothing takes its part too (as `?N`), so its question is not taken for another."""
    spans = [(_role_ref(m, i), *m.span) for i, m in enumerate(mentions) if m.span is not None]
    return read_roles(words_of(question)[0], spans) if len(spans) >= 2 else None


def _role_ref(mention: Mention, i: int) -> str:
    return mention.entity or f"?{i}"
