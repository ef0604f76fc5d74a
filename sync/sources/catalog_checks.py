"""What Backstage's catalog refuses in a descriptor that oncall-graph still reads: each a warning
naming the document and the field, saying Backstage refuses the entity and how it was read here.

Pure. The rules are `@backstage/catalog-model`'s (`sync.sources.backstage_formats`).
"""

from __future__ import annotations

from graph.facts import Problem
from sync.sources.backstage_formats import is_valid_namespace, is_valid_object_name
from sync.sources.reading.shown import shown

REFUSED = "Backstage refuses this entity"
NAME_RULE = "1-63 letters, digits, -, _ or ., starting and ending with a letter or digit"
NAMESPACE_RULE = "1-63 lower-case letters and digits, runs joined by -"


def name_problems(where: str, name: object, namespace: object) -> list[Problem]:
    """`metadata.name` and `metadata.namespace` as written, against Backstage's rules."""
    problems = []
    if not is_valid_object_name(name):
        message = f"name {shown(name)} breaks Backstage's rule ({NAME_RULE}): {REFUSED}; used anyway"
        problems.append(Problem(where, message, "metadata.name"))
    if not is_valid_namespace(namespace):
        read_as = namespace.strip().lower() if isinstance(namespace, str) else namespace
        used = f"read as {shown(read_as)}" if read_as != namespace else "used anyway"
        message = f"namespace {shown(namespace)} breaks Backstage's rule ({NAMESPACE_RULE}): {REFUSED}; {used}"
        problems.append(Problem(where, message, "metadata.namespace"))
    return problems
