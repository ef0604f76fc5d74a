"""Small builders for facts, so graph tests read like the catalog they describe."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from graph.build import build_snapshot
from graph.facts import Assertion, Citation, Deploy, Entity, SourceFacts
from graph.naming.refs import ref_parts
from graph.snapshot import Snapshot

BUILT_AT = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)


def cite(locator: str, *, extracted: bool = False) -> Citation:
    return Citation("test", locator, origin=locator.split(":")[0] if extracted else locator, extracted=extracted)


def entity(ref: str, *, owner: str = "", annotations: dict[str, str] | None = None, title: str = "") -> Entity:
    parts = ref_parts(ref)
    return Entity(
        ref,
        parts.kind,
        parts.name,
        cite(f"catalog/{parts.name}.yaml#1"),
        namespace=parts.namespace,
        owner=owner,
        title=title,
        annotations=annotations or {},
    )


def dep(src: str, dst: str, *, rel: str = "depends_on", at: str = "", extracted: bool = False) -> Assertion:
    locator = at or f"catalog/{ref_parts(src).name}.yaml#1"
    return Assertion(src, rel, dst, cite(locator, extracted=extracted))


def said(src: str, rel: str, dst: str, at: str) -> Assertion:
    """An assertion from text: names, not refs."""
    return Assertion(src, rel, dst, cite(at, extracted=True), by_name=True)


def deploy(id: str, service: str, at: str) -> Deploy:
    when = datetime.fromisoformat(at.replace("Z", "+00:00"))
    return Deploy(id, service, when, Citation("deploys", f"deploys.jsonl:{id}", origin=f"deploy:{id}"), version="v1")


def snapshot(
    entities: Iterable[Entity] = (),
    assertions: Iterable[Assertion] = (),
    deploys: Iterable[Deploy] = (),
    *more: SourceFacts,
) -> Snapshot:
    facts = SourceFacts("test", tuple(entities), tuple(assertions), tuple(deploys))
    return build_snapshot([facts, *more], built_at=BUILT_AT)


def chain(*names: str, kind: str = "component") -> Snapshot:
    """a depends on b depends on c ...: `chain("a", "b", "c")`."""
    refs = [f"{kind}:default/{n}" for n in names]
    return snapshot([entity(r) for r in refs], [dep(a, b) for a, b in zip(refs, refs[1:], strict=False)])
