"""The aliases file: YAML mapping a canonical name or entity ref to the other names people use,
e.g. `postgresql: [postgres, pg]` or `resource:default/redis: cache`."""

from __future__ import annotations

import httpx
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from graph.facts import AliasClaim, Citation, Problem, SourceFacts
from graph.naming.refs import KINDS, RefError, format_ref, split_ref
from sync.sources.reading.shown import shown
from sync.sources.reading.textfiles import DEFAULT_TIMEOUT, FetchedText, fetch_text
from sync.sources.reading.yaml_aliases import compose_bounded

# The C loader is ~10x faster; both give the same nodes and marks.
_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NULL_TAG = "tag:yaml.org,2002:null"


def fetch_aliases(
    location: str, *, timeout: float = DEFAULT_TIMEOUT, transport: httpx.BaseTransport | None = None
) -> FetchedText:
    return fetch_text(location, timeout=timeout, accept="application/yaml, text/yaml, */*", transport=transport)


def read_aliases(
    source: str,
    path: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    transport: httpx.BaseTransport | None = None,
) -> SourceFacts:
    """Fetch and parse one aliases file (or URL); raises FetchError only when nothing could be read."""
    fetched = fetch_aliases(path, timeout=timeout, transport=transport)
    return parse_aliases(source, fetched.name, fetched.text)


def parse_aliases(source: str, name: str, text: str) -> SourceFacts:
    """One AliasClaim per alias, cited by file and line; each bad key or item a Problem."""
    try:
        root = compose_bounded(text, _LOADER)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 1
        message = f"not valid YAML: {exc.problem or exc}"
        if exc.context and exc.context_mark:
            message += f" ({exc.context} at line {exc.context_mark.line + 1})"
        return SourceFacts(source, problems=(Problem(f"{name}:{line}", message, severity="error"),))
    except (yaml.YAMLError, RecursionError) as exc:
        message = f"not valid YAML: {'nested too deeply' if isinstance(exc, RecursionError) else exc}"
        return SourceFacts(source, problems=(Problem(name, message, severity="error"),))
    if root is None or _is_null(root):
        return SourceFacts(source)
    if not isinstance(root, MappingNode):
        message = f"expected a mapping of canonical name to aliases, got {_kind(root)}"
        return SourceFacts(source, problems=(Problem(_where(name, root), message, severity="error"),))
    return _parse_mapping(source, name, root)


def _parse_mapping(source: str, name: str, root: MappingNode) -> SourceFacts:
    claims: list[AliasClaim] = []
    problems: list[Problem] = []
    seen_keys: dict[str, str] = {}
    claimed: dict[str, tuple[str, str]] = {}  # alias (folded) -> (key, where)
    for key_node, value_node in root.value:
        where = _where(name, key_node)
        key = _scalar(key_node)
        if not key:
            message = f"a key must be a name or entity ref, got {_kind(key_node)}"
            problems.append(Problem(where, message, severity="error"))
            continue
        if key.casefold() in seen_keys:
            message = f"listed twice (also at {seen_keys[key.casefold()]}); the aliases of both are used"
            problems.append(Problem(where, message, field=key))
        seen_keys.setdefault(key.casefold(), where)
        target, is_name = _target(where, key, problems)
        for alias, alias_where in _aliases(name, key, value_node, problems):
            earlier = claimed.setdefault(alias.casefold(), (key, alias_where))
            if earlier[0].casefold() == key.casefold() and earlier[1] != alias_where:
                continue  # the same claim again under a repeated key
            if earlier[0].casefold() != key.casefold():
                message = f"alias {shown(alias)} also names {shown(earlier[0])} ({earlier[1]}); it will be ambiguous"
                problems.append(Problem(alias_where, message, field=key))
            citation = Citation(source, alias_where, origin=name, text=f"{key}: {alias}")
            claims.append(AliasClaim(alias, target, citation, target_is_name=is_name))
    return SourceFacts(source, aliases=tuple(claims), problems=tuple(problems))


def _target(where: str, key: str, problems: list[Problem]) -> tuple[str, bool]:
    """(target, target_is_name): a key with a known kind is a ref, anything else a canonical name."""
    try:
        kind, namespace, name = split_ref(key)
    except RefError:
        return key, True
    if kind in KINDS:
        return format_ref(kind, namespace, name), False
    if not kind and "/" in key:
        message = f"{shown(key)} has no kind, so it is taken as a name; write e.g. resource:{key} for a ref"
        problems.append(Problem(where, message, field=key))
    return key, True


def _aliases(name: str, key: str, node: Node, problems: list[Problem]) -> list[tuple[str, str]]:
    """(alias, where) pairs; a string item may hold several aliases separated by commas."""
    if _is_null(node):
        problems.append(Problem(_where(name, node), "no aliases listed", field=key))
        return []
    items = list(enumerate(node.value, 1)) if isinstance(node, SequenceNode) else [(0, node)]
    found: list[tuple[str, str]] = []
    for index, item in items:
        text = _scalar(item)
        if text is None:
            field = f"{key}[{index}]" if index else key
            message = f"an alias must be a string, got {_kind(item)}"
            problems.append(Problem(_where(name, item), message, field=field, severity="error"))
            continue
        for alias in (part.strip() for part in text.split(",")):
            if alias and alias.casefold() != key.casefold() and alias not in (a for a, _ in found):
                found.append((alias, _where(name, item)))
    return found


def _scalar(node: Node) -> str | None:
    # The text as written: `no`, `on` or `404` stay names instead of becoming booleans and numbers.
    if isinstance(node, ScalarNode) and not _is_null(node) and isinstance(node.value, str):
        return node.value.strip() or None
    return None


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _NULL_TAG


def _where(name: str, node: Node) -> str:
    return f"{name}:{node.start_mark.line + 1}"


def _kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return "null" if _is_null(node) else "an empty string"
