"""Whether a model's reply stays within the facts it was given: every id it cites exists, it cites at
least one, and every entity it names (found through the alias index) is one the context names.

A reply that fails any check is not shown; the graph's own answer is. The check is deliberately
strict: a false rejection costs a plainer answer, a false acceptance costs trust.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graph.naming.names import AliasIndex
from graph.naming.refs import short_name
from graph.questions.ask import find_mentions
from graph.questions.model_context import ModelContext

EMPTY, UNCITED, UNKNOWN_ID, OUTSIDE_ENTITY = "empty", "uncited", "unknown_id", "outside_entity"
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_ID = re.compile(r"\b([A-Z])(\d{1,5})\b")


@dataclass(frozen=True, slots=True)
class Verdict:
    ok: bool
    reason: str = ""  # EMPTY, UNCITED, UNKNOWN_ID or OUTSIDE_ENTITY when not ok
    detail: str = ""
    cited: tuple[str, ...] = ()  # distinct ids cited, in order of first citation


def cited_ids(reply: str) -> tuple[str, ...]:
    """Ids cited in brackets: `[E3]`, `[E1, E4]`, `[E2][F1]`; distinct, in order."""
    found = [f"{m.group(1)}{m.group(2)}" for group in _BRACKETS.findall(reply) for m in _ID.finditer(group)]
    return tuple(dict.fromkeys(found))


def check_reply(reply: str, context: ModelContext, index: AliasIndex) -> Verdict:
    """Accept the reply only if it cites known ids and names no entity outside the context."""
    if not reply.strip():
        return Verdict(False, EMPTY, "the reply had no text")
    cited = cited_ids(reply)
    unknown = [i for i in cited if i not in context.ids]
    if unknown:
        return Verdict(False, UNKNOWN_ID, f"cites {', '.join(unknown)}, not in the context", cited)
    if not cited:
        return Verdict(False, UNCITED, "cites no fact id")
    # Bracketed citations hold ids and file names, not claims: scanning them would only add noise.
    prose = _BRACKETS.sub(" ", reply)
    allowed = context.entities
    for mention in find_mentions(index, prose):
        refs = (mention.entity,) if mention.entity else mention.candidates
        if refs and not any(ref in allowed for ref in refs):
            named = ", ".join(short_name(r) for r in refs)
            return Verdict(False, OUTSIDE_ENTITY, f"names {named} ('{mention.text}'), not in the cited subgraph", cited)
    return Verdict(True, cited=cited)
