"""Which entity a deploy belongs to: the one place that decides it (the deploy feed and webhooks).

Backstage says "this entity is that repository" with annotations, so a deploy is matched, in order:
  1. its repository (full `owner/name`) against `github.com/project-slug` / `gitlab.com/project-slug`,
     then against the repository of `backstage.io/source-location`;
  2. a PagerDuty change event's `routing_key` against `pagerduty.com/integration-key`;
  3. its service name against `backstage.io/kubernetes-id`;
  4. its service name against every name and alias (the alias index).
When an annotation is shared (a monorepo's entities all name one repository), the service name picks
among those entities. A placeholder, made from a dangling reference, never takes a deploy that a
defined entity can take. Pure: no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from urllib.parse import urlsplit

from graph.background import stepping
from graph.facts import Deploy, Entity, Problem
from graph.naming.names import AliasIndex, Resolution, loose, match, resolve
from graph.snapshot import Snapshot

PROJECT_SLUG_ANNOTATIONS = ("github.com/project-slug", "gitlab.com/project-slug")
SOURCE_LOCATION_ANNOTATION = "backstage.io/source-location"
INTEGRATION_KEY_ANNOTATION = "pagerduty.com/integration-key"
KUBERNETES_ID_ANNOTATION = "backstage.io/kubernetes-id"

BY_REPOSITORY, BY_SOURCE_LOCATION, BY_ROUTING_KEY, BY_KUBERNETES_ID, BY_NAME = (
    "repository",
    "source-location",
    "routing_key",
    "kubernetes-id",
    "name",
)
# Where a repository path stops and a place inside it begins (GitHub, GitLab, Bitbucket, Gitea).
_PATH_ENDS = ("-", "tree", "blob", "src", "browse")

Keys = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class DeployTargetIndex:
    """Each annotation value (normalized) and the defined entities carrying it, by tier."""

    project_slugs: Keys
    source_locations: Keys
    integration_keys: Keys
    kubernetes_ids: Keys
    defined: frozenset[str]


@dataclass(frozen=True, slots=True)
class DeployTarget:
    """The entity a deploy maps to, or why none: `candidates` when several tie, else `suggestions`."""

    entity: str | None
    matched_by: str = ""
    candidates: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()

    @property
    def ambiguous(self) -> bool:
        return self.entity is None and len(self.candidates) > 1


def repository_key(text: str) -> str:
    """`owner/name` as compared: lower case, no `.git`, no surrounding slashes or space."""
    return text.strip().strip("/").removesuffix(".git").lower()


def source_location_repository(location: str) -> str:
    """The `owner/name` (GitLab: `group/sub/name`) of a `backstage.io/source-location` URL; "" if none.

    The annotation reads `url:https://github.com/owner/name/tree/main/` (Backstage's location form).
    """
    url = location.strip().removeprefix("url:")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    segments = [s for s in parts.path.split("/") if s]
    for index, segment in enumerate(segments):
        if segment in _PATH_ENDS:
            segments = segments[:index]
            break
    if parts.netloc.lower().endswith("github.com"):
        segments = segments[:2]  # github.com/owner/name/...: no groups on GitHub
    return repository_key("/".join(segments)) if len(segments) >= 2 else ""


def deploy_target_index(entities: Mapping[str, Entity]) -> DeployTargetIndex:
    """The annotations of every defined entity that can name a deploy's target."""
    slugs: dict[str, list[str]] = defaultdict(list)
    locations: dict[str, list[str]] = defaultdict(list)
    keys: dict[str, list[str]] = defaultdict(list)
    kubernetes: dict[str, list[str]] = defaultdict(list)
    defined = []
    for ref, entity in stepping(entities.items()):
        if entity.placeholder:
            continue
        defined.append(ref)
        annotations = entity.annotations
        if not annotations:
            continue
        for name in PROJECT_SLUG_ANNOTATIONS:
            if slug := repository_key(annotations.get(name, "")):
                slugs[slug].append(ref)
        if repository := source_location_repository(annotations.get(SOURCE_LOCATION_ANNOTATION, "")):
            locations[repository].append(ref)
        if key := annotations.get(INTEGRATION_KEY_ANNOTATION, "").strip():
            keys[key].append(ref)
        if kubernetes_id := annotations.get(KUBERNETES_ID_ANNOTATION, "").strip().lower():
            kubernetes[kubernetes_id].append(ref)
    return DeployTargetIndex(_frozen(slugs), _frozen(locations), _frozen(keys), _frozen(kubernetes), frozenset(defined))


def deploy_target(
    index: DeployTargetIndex,
    aliases: AliasIndex,
    *,
    service: str,
    repository: str = "",
    routing_key: str = "",
    name_targets: Mapping[str, str] | None = None,
) -> DeployTarget:
    """The entity of a deploy given its identifying fields, by the order in the module docstring.

    `name_targets` maps an alias-file alias (loose key) to the plain name it stands for.
    """
    repo = repository_key(repository)
    tiers = (
        (BY_REPOSITORY, index.project_slugs.get(repo, ()) if repo else ()),
        (BY_SOURCE_LOCATION, index.source_locations.get(repo, ()) if repo else ()),
        (BY_ROUTING_KEY, index.integration_keys.get(routing_key.strip(), ()) if routing_key.strip() else ()),
        (BY_KUBERNETES_ID, index.kubernetes_ids.get(service.strip().lower(), ()) if service.strip() else ()),
    )
    for tier, refs in tiers:
        if len(refs) == 1:
            return DeployTarget(refs[0], tier)
        if refs:
            return _narrowed(tier, tuple(sorted(set(refs))), aliases, service)
    return _by_name(index, aliases, service, name_targets or {})


def _narrowed(tier: str, refs: tuple[str, ...], aliases: AliasIndex, service: str) -> DeployTarget:
    """One annotation value on several entities: the service name picks one of them, or none does."""
    if len(refs) == 1:
        return DeployTarget(refs[0], tier)
    allowed = frozenset(refs)
    found = match(aliases, service, allow=allowed.__contains__) if service.strip() else Resolution(service, None)
    if found.entity is not None:
        return DeployTarget(found.entity, tier)
    return DeployTarget(None, tier, candidates=found.candidates or refs)


def _by_name(
    index: DeployTargetIndex, aliases: AliasIndex, service: str, name_targets: Mapping[str, str]
) -> DeployTarget:
    if not service.strip():
        return DeployTarget(None)
    defined: Callable[[str], bool] = index.defined.__contains__
    texts = [service] + ([target] if (target := name_targets.get(loose(service))) else [])
    for allow in (defined, None):  # a placeholder only when no defined entity answers to the name
        for text in texts:
            found = match(aliases, text, allow=allow)
            if found.entity is not None:
                return DeployTarget(found.entity, BY_NAME)
            if found.ambiguous:
                return DeployTarget(None, BY_NAME, candidates=found.candidates)
    missed = resolve(aliases, service)  # its suggestions name the problem
    return DeployTarget(None, candidates=missed.candidates, suggestions=missed.suggestions)


def _frozen(found: Mapping[str, Iterable[str]]) -> Keys:
    return MappingProxyType({key: tuple(dict.fromkeys(refs)) for key, refs in found.items()})


def place_deploy(
    targets: DeployTargetIndex, aliases: AliasIndex, name_targets: Mapping[str, str], deploy: Deploy
) -> tuple[str | None, Problem]:
    """The entity a deploy attaches to, or None and the problem `lint` lists for it."""
    found = deploy_target(
        targets,
        aliases,
        service=deploy.service,
        repository=deploy.repository,
        routing_key=deploy.routing_key,
        name_targets=name_targets,
    )
    if found.entity is not None:
        return found.entity, _PLACED
    return None, unresolved_problem(deploy, found)


_PLACED = Problem("", "")  # no problem: the deploy found its entity


def problem_order(problem: Problem) -> tuple[str, str, str]:
    # Unresolved deploys are listed in this order, not arrival order: a deploy delta adds and
    # retires them one by one and must list them exactly as a rebuild does.
    return (problem.where, problem.message, problem.field)


def unresolved_problem(deploy: Deploy, found: DeployTarget) -> Problem:
    hint = ", ".join(found.candidates or found.suggestions) or "no close names"
    if found.ambiguous:
        return Problem(deploy.citation.locator, f"deploy {deploy.id!r} could belong to {hint}; not attached", "service")
    tried = []
    if deploy.repository:
        tried.append(f"repository {deploy.repository!r} matches no github.com/ or gitlab.com/project-slug annotation")
    if deploy.routing_key:
        # never the key itself: it is a credential
        tried.append("its routing_key matches no pagerduty.com/integration-key annotation")
    tried.append(f"service {deploy.service!r} names no entity ({hint})")
    return Problem(deploy.citation.locator, "; ".join(tried), field="service")


_DEPLOY_TARGETS = f"{__name__}.deploy_targets"  # this module's key in `Snapshot.derived`


def snapshot_deploy_targets(snapshot: Snapshot) -> DeployTargetIndex:
    """The annotations that name a deploy's entity, for deploys that arrive after the build (webhooks)."""
    index: DeployTargetIndex | None = snapshot.derived.get(_DEPLOY_TARGETS)
    if index is None:
        index = snapshot.derived[_DEPLOY_TARGETS] = deploy_target_index(snapshot.entities)
    return index
