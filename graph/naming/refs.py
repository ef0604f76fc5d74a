"""Backstage entity references: `[kind:][namespace/]name`, compared case-insensitively."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

KINDS = frozenset({"component", "resource", "api", "system", "domain", "group", "user", "location"})


class RefError(ValueError):
    """A reference that is not of the form `[kind:][namespace/]name`."""


@dataclass(frozen=True, slots=True)
class EntityRef:
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.namespace}/{self.name}"


def parse_ref(value: object, *, default_kind: str | None = None, default_namespace: str = "default") -> EntityRef:
    """Parse a string or compound `{kind, namespace, name}` ref; kind is None-free only if given.

    Raises RefError for malformed refs and for a missing kind with no default. Use
    `split_ref` when a kindless ref is acceptable.
    """
    kind, namespace, name = split_ref(value, default_namespace=default_namespace)
    kind = kind or (default_kind or "").lower()
    if not kind:
        raise RefError(f"reference {value!r} had missing or empty kind")
    return EntityRef(kind, namespace, name)


def split_ref(value: object, *, default_namespace: str = "default") -> tuple[str, str, str]:
    """(kind or '', namespace, name), lower-cased; a `/` before the first `:` means no kind."""
    if isinstance(value, Mapping):
        return _split_compound(value, default_namespace)
    if not isinstance(value, str) or not value.strip():
        raise RefError(f"reference {value!r} was not on the form [<kind>:][<namespace>/]<name>")
    text = value.strip()
    colon, slash = text.find(":"), text.find("/")
    kind = ""
    if colon != -1 and (slash == -1 or colon < slash):
        kind, text = text[:colon], text[colon + 1 :]
        if not kind:
            raise RefError(f"reference {value!r} was not on the form [<kind>:][<namespace>/]<name>")
        slash = text.find("/")
    namespace = default_namespace
    if slash != -1:
        namespace, text = text[:slash], text[slash + 1 :]
    if not namespace or not text:
        raise RefError(f"reference {value!r} was not on the form [<kind>:][<namespace>/]<name>")
    return kind.lower(), namespace.lower(), text.lower()


def _split_compound(value: Mapping[object, object], default_namespace: str) -> tuple[str, str, str]:
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise RefError(f"compound reference {dict(value)!r} has no name")
    kind = value.get("kind") or ""
    namespace = value.get("namespace") or default_namespace
    if not isinstance(kind, str) or not isinstance(namespace, str):
        raise RefError(f"compound reference {dict(value)!r} has a non-text kind or namespace")
    return kind.lower(), namespace.lower(), name.lower()


def format_ref(kind: str, namespace: str, name: str) -> str:
    return f"{kind.lower()}:{namespace.lower()}/{name.lower()}"


def ref_parts(ref: str) -> EntityRef:
    """Split a full ref produced by `format_ref` (no defaulting)."""
    kind, rest = ref.split(":", 1)
    namespace, name = rest.split("/", 1)
    return EntityRef(kind, namespace, name)


def short_name(ref: str) -> str:
    """`component:default/auth-service` -> `auth-service`; other namespaces keep theirs."""
    # String slicing, not `ref_parts`: a 100k-entity answer's full text names 100k refs.
    rest = ref.partition(":")[2]
    if "/" not in rest:
        ref_parts(ref)  # not a full ref: raise as ref_parts does
    return rest[8:] if rest.startswith("default/") else rest
