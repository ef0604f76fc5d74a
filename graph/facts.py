"""What readers produce: entities, assertions, deploys and alias claims, each with a citation.

Readers (in `sync/`) turn one source into a `SourceFacts`; `graph.build` merges many of them
into a `Snapshot`. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

EMPTY_ANNOTATIONS: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a fact was asserted.

    `origin` is the unit that counts once towards an edge's weight (a catalog document, a runbook
    file, a triples entry, a deploy event); `locator` is the precise place shown to people
    (`catalog/payments.yaml#2`, `docs/redis.md:14`).
    """

    source: str
    locator: str
    origin: str = ""
    text: str = ""
    extracted: bool = False
    # The kind of evidence (`graph.evidence`); empty: the kind its source and `extracted` imply, so
    # the facts stored before evidence had a name keep their keys.
    evidence: str = ""
    # Where the cited text opens, as its source said it (a descriptor's file, a PagerDuty service's
    # page): untrusted text like the rest, made a link only at an escaping boundary. Last, so that
    # the facts stored before it keep their keys.
    url: str = ""

    @property
    def unit(self) -> str:
        return self.origin or self.locator

    def __str__(self) -> str:
        return self.locator


@dataclass(frozen=True, slots=True)
class Problem:
    """A bad part of an input: where it is, which field, and what was expected."""

    where: str
    message: str
    field: str = ""
    # "warning": used with a caveat; "error": that part was dropped; "note": skipped on purpose, only
    # counted (a YAML file in a catalog folder that is no Backstage descriptor).
    severity: str = "warning"

    @property
    def note(self) -> bool:
        return self.severity == NOTE

    def __str__(self) -> str:
        place = f"{self.where}: {self.field}" if self.field else self.where
        return f"{self.severity}: {place}: {self.message}"


NOTE = "note"


@dataclass(frozen=True, slots=True)
class Entity:
    """A node: service, datastore, queue, API, system, team, user.

    `ref` is the full lower-case Backstage ref (`component:default/auth-service`).
    """

    ref: str
    kind: str
    name: str
    citation: Citation
    namespace: str = "default"
    type: str = ""
    title: str = ""
    description: str = ""
    owner: str = ""
    system: str = ""
    lifecycle: str = ""
    annotations: Mapping[str, str] = field(default_factory=lambda: EMPTY_ANNOTATIONS)
    placeholder: bool = False


@dataclass(frozen=True, slots=True)
class Assertion:
    """`src rel dst`, as one source said it.

    Endpoints are full refs, except:
    - `by_name=True`: both endpoints are free-text names (runbooks, triples) that the build
      resolves through the alias index, or turns into placeholder refs;
    - `kindless=True`: `dst` is `namespace/name` from a kindless `dependsOn`/`dependencyOf` ref,
      accepted by the build only when exactly one component or resource has that name.
    `via` names the API when the edge was derived from consumesApis/providesApis.
    `held=True` marks an edge from an untrusted source, kept out of answers until reviewed.
    """

    src: str
    rel: str
    dst: str
    citation: Citation
    by_name: bool = False
    kindless: bool = False
    via: str = ""
    held: bool = False


@dataclass(frozen=True, slots=True)
class Deploy:
    """A deploy event, mapped to its entity at build time (`graph.deploys.deploy_targets`).

    `service` is any name or alias of an entity; `repository` the full `owner/name` of the
    repository it came from (GitHub, GitLab); `routing_key` a PagerDuty change event's integration
    key (a credential: matched, never shown). `version` is what was deployed (a GitHub deploy's
    short sha), `git_ref` the branch or tag beside it.
    """

    id: str
    service: str
    deployed_at: datetime
    citation: Citation
    version: str = ""
    environment: str = ""
    actor: str = ""
    url: str = ""
    summary: str = ""
    repository: str = ""
    routing_key: str = ""
    git_ref: str = ""


@dataclass(frozen=True, slots=True)
class AliasClaim:
    """`alias` names `target` (a ref, or a canonical name when `target_is_name`)."""

    alias: str
    target: str
    citation: Citation
    target_is_name: bool = False


@dataclass(frozen=True, slots=True)
class Passage:
    """A runbook paragraph or list block, cited where it stands, to quote beside an answer.

    `locator` is what people are shown (`runbooks/redis.md §Failover`, or `notes.txt:12` where the
    document has no headings); `heading` is the nearest heading and `headings` the whole path from
    the top; `line` is where the passage starts. Code in `text` is always fenced (```), so the
    build can leave it out when it looks for the entities a passage names.
    """

    source: str
    locator: str
    heading: str
    text: str
    line: int
    document: str = ""
    headings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Observation:
    """Calls seen in traces: `client` called `server`, as telemetry names them (not refs).

    The build maps each name to an entity (`graph.observed`) and never invents one. `connection`
    is the service graph's `connection_type` ("" for a direct call, `database`,
    `messaging_system`, `virtual_node`); `broker` names the messaging system (and destination)
    spans named, for a producer-to-consumer edge. The counts change at every poll, so they are
    not part of the fact: they travel beside it as `CallCount`s, keyed by the citation's origin.
    """

    client: str
    server: str
    citation: Citation
    connection: str = ""
    broker: str = ""


@dataclass(frozen=True, slots=True)
class CallCount:
    """How many calls one observed edge carried over its window, as of one read.

    `key` is the observation's `citation.origin`. `first_seen` and `last_seen` bound the calls
    seen (a service graph knows only its window's end; the store keeps the first read that saw it).
    """

    key: str
    calls: int
    failed: int
    window_seconds: int
    last_seen: datetime
    first_seen: datetime | None = None

    @property
    def failed_share(self) -> float:
        return self.failed / self.calls if self.calls else 0.0


@dataclass(frozen=True, slots=True)
class SourceFacts:
    """Everything one source said in one read, plus what was wrong with it."""

    source: str
    entities: tuple[Entity, ...] = ()
    assertions: tuple[Assertion, ...] = ()
    deploys: tuple[Deploy, ...] = ()
    aliases: tuple[AliasClaim, ...] = ()
    problems: tuple[Problem, ...] = ()
    passages: tuple[Passage, ...] = ()
    observations: tuple[Observation, ...] = ()
    calls: tuple[CallCount, ...] = ()  # beside the facts: stored per read, never in the facts' history


@dataclass(frozen=True, slots=True)
class SourceMark:
    """How fresh a source is: when it was last read successfully, and the last error."""

    name: str
    last_success: datetime | None = None
    last_error: str = ""
    last_attempt: datetime | None = None
    version: str = ""
    held_reason: str = ""
    held_problems: tuple[str, ...] = ()  # the problems of the read that was held (file, line, field)
    pushed: bool = False  # events are pushed in (webhooks): no sync interval, stale only past its own limit
    last_refused: str = ""  # a pushed source's last refused delivery, with why
    last_refused_at: datetime | None = None

    @property
    def ok(self) -> bool:
        return not self.last_error
