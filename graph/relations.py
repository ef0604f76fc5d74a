"""Relation names, and which of them carry failure from a dependency to its dependents."""

from __future__ import annotations

DEPENDS_ON = "depends_on"
CONSUMES_API = "consumes_api"
PROVIDES_API = "provides_api"
OWNED_BY = "owned_by"
PART_OF = "part_of"
CHILD_OF = "child_of"
MEMBER_OF = "member_of"

# Text relations that mean "src needs dst to work"; each is reported under its own name.
TEXT_DEPENDENCIES = frozenset({"backed_by", "runs_on", "calls", "uses", "reads_from", "writes_to", "publishes_to"})

# An API's consumers break with it, so consumes_api propagates like depends_on; the
# consumer->provider hop itself is a derived depends_on edge naming the API.
PROPAGATING = frozenset({DEPENDS_ON, CONSUMES_API}) | TEXT_DEPENDENCIES

# An observed producer-to-consumer call through a queue: asynchronous, shown, but a consumer that
# goes down breaks no producer, so it never propagates failure.
SENDS_TO = "sends_to"
CALLS = "calls"

STRUCTURAL = frozenset({OWNED_BY, PART_OF, CHILD_OF, MEMBER_OF, PROVIDES_API})

# Kinds that can fail and be reported as survivors.
RUNTIME_KINDS = frozenset({"component", "resource"})


def propagates(rel: str) -> bool:
    """True when failure of `dst` spreads to `src` along `src rel dst`."""
    return rel in PROPAGATING
