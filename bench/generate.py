"""Deterministic synthetic Backstage catalogs for the benchmark, cached under bench/out/<scenario>/.

Two shapes:
- layered: services in six layers (edge -> ... -> platform), each depending on a few services of the
  next layer down, private datastores, APIs consumed by the layer above their provider, three shared
  hub resources everything ends up on, a few upward edges that close cycles, and a few soft
  dependencies. The hub is `resource:default/redis-hub`; the leaf is an edge service nothing
  depends on.
- dense: the worst case for walks. About ten dependencies per service, mostly on services generated
  before it, so that nearly everything is upstream of one hub resource (`resource:default/hub-db`);
  about one million dependsOn refs in all.

The files are YAML written by hand (no emitter: 50 MB through an emitter takes minutes) in the
block style people write, 500 entities per file. A `meta.json` records the parameters; a catalog
whose parameters match is reused as it is.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
# Bump when the shape of what is written changes, so cached catalogs are regenerated.
# 2: APIs carry the `spec.definition` Backstage requires.
GENERATOR_VERSION = 2
API_VERSION = "backstage.io/v1alpha1"


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    shape: str  # "layered" | "dense" | "named" (layered, with names made of words)
    entities: int
    seed: int = 20261129
    per_file: int = 500


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("layered-1k", "layered", 1_000),
        Scenario("layered-10k", "layered", 10_000),
        Scenario("layered-100k", "layered", 100_000),
        Scenario("dense-100k", "dense", 100_000),
    )
}
# For name matching (bench/typos_bench.py), not the walk benchmarks: not among SCENARIOS.
NAMED = {s.name: s for s in (Scenario("named-10k", "named", 10_000), Scenario("named-100k", "named", 100_000))}
QUICK = ("layered-1k", "layered-10k")


@dataclass(frozen=True, slots=True)
class Catalog:
    """A generated catalog on disk and what is in it."""

    scenario: Scenario
    folder: Path
    files: int
    entities: int
    depends_on: int  # dependsOn and dependencyOf refs written
    consumes: int  # consumesApis refs written
    size: int  # bytes of YAML
    hub: str
    leaf: str

    @property
    def paths(self) -> list[Path]:
        return sorted(self.folder.glob("*.yaml"))


@dataclass(slots=True)
class _Spec:
    """One entity while it is being generated (mutable: edges are added as the graph grows)."""

    kind: str
    name: str
    type: str = ""
    owner: str = ""
    system: str = ""
    title: str = ""
    description: str = ""
    pagerduty: str = ""
    tags: list[str] = field(default_factory=list)
    soft: list[str] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)
    dependency_of: list[str] = field(default_factory=list)
    provides: list[str] = field(default_factory=list)
    consumes: list[str] = field(default_factory=list)
    parent: str = ""
    children: list[str] = field(default_factory=list)


def ensure_catalog(scenario: Scenario, out: Path = OUT) -> Catalog:
    """The catalog for `scenario`, generated unless an identical one is already on disk."""
    folder = out / scenario.name
    meta = folder / "meta.json"
    expected = {"version": GENERATOR_VERSION, "scenario": asdict(scenario)}
    if meta.exists():
        recorded = json.loads(meta.read_text())
        if {k: recorded.get(k) for k in expected} == expected:
            return _catalog(scenario, folder, recorded)
    return _generate(scenario, folder, expected)


def _catalog(scenario: Scenario, folder: Path, recorded: dict[str, object]) -> Catalog:
    stats = recorded["stats"]
    assert isinstance(stats, dict)
    return Catalog(scenario, folder, **stats)


def _generate(scenario: Scenario, folder: Path, expected: dict[str, object]) -> Catalog:
    rng = random.Random(scenario.seed)
    build = {"layered": _layered, "dense": _dense, "named": _named}[scenario.shape]
    specs, hub, leaf = build(scenario.entities, rng)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    size = 0
    chunks = [specs[i : i + scenario.per_file] for i in range(0, len(specs), scenario.per_file)]
    for number, chunk in enumerate(chunks):
        text = f"# bench.generate {scenario.name} seed {scenario.seed}, part {number}\n"
        text += "".join(_document(spec) for spec in chunk)
        data = text.encode()
        (folder / f"catalog-{number:04d}.yaml").write_bytes(data)
        size += len(data)
    stats = {
        "files": len(chunks),
        "entities": len(specs),
        "depends_on": sum(len(s.depends_on) + len(s.dependency_of) for s in specs),
        "consumes": sum(len(s.consumes) for s in specs),
        "size": size,
        "hub": hub,
        "leaf": leaf,
    }
    (folder / "meta.json").write_text(json.dumps({**expected, "stats": stats}, indent=2))
    return Catalog(scenario, folder, **stats)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Layout:
    """What a generated layered catalog holds, regenerated from its seed (nothing read from disk): its
    services by layer (edge services first), datastores, hubs, and every dependency it declares."""

    layers: tuple[tuple[str, ...], ...]
    stores: tuple[str, ...]
    hubs: tuple[str, ...]
    declared: tuple[tuple[str, str], ...]  # (dependent, dependency) names, without their kinds


def layout(scenario: Scenario) -> Layout:
    """The names and declared dependencies of a layered scenario's catalog, for benchmarks that
    make up traffic between its entities (`bench/observed_bench.py`)."""
    if scenario.shape != "layered":
        raise ValueError(f"{scenario.name}: only layered catalogs have layers")
    specs, _, _ = _layered(scenario.entities, random.Random(scenario.seed))
    layers: dict[int, list[str]] = {}
    for spec in specs:
        if spec.kind == "Component":
            layers.setdefault(int(spec.tags[0].removeprefix("layer-")), []).append(spec.name)

    def bare(ref: str) -> str:
        return ref.rpartition(":")[2]

    declared = [(s.name, bare(d)) for s in specs for d in s.depends_on]
    declared += [(bare(d), s.name) for s in specs for d in s.dependency_of]
    stores = tuple(s.name for s in specs if s.kind == "Resource" and s.name not in HUBS)
    return Layout(tuple(tuple(layers[k]) for k in sorted(layers)), stores, HUBS, tuple(declared))


# --- shapes ---------------------------------------------------------------------------------

LAYER_SHARES = (0.25, 0.2, 0.2, 0.15, 0.12, 0.08)  # edge services first, platform services last
HUBS = ("redis-hub", "postgres-hub", "kafka-hub")


def _org(groups: int, systems: int, rng: random.Random) -> tuple[list[_Spec], list[str], list[str]]:
    """Teams in a tree (four children each) and systems owned by them."""
    teams = [f"team-{i}" for i in range(groups)]
    specs = [_Spec("Group", teams[0], type="business-unit", title="Engineering")]
    for i in range(1, groups):
        specs.append(_Spec("Group", teams[i], type="team", parent=teams[(i - 1) // 4]))
    for i in range(groups):
        specs[i].children = teams[4 * i + 1 : 4 * i + 5]
    names = [f"sys-{i}" for i in range(systems)]
    specs += [
        _Spec("System", name, owner=rng.choice(teams), description=f"System {i}.") for i, name in enumerate(names)
    ]
    return specs, teams, names


def _layered(total: int, rng: random.Random) -> tuple[list[_Spec], str, str]:
    groups, systems = max(4, total // 100), max(3, total // 50)
    resources, apis = total * 12 // 100, total * 8 // 100
    components = total - groups - systems - resources - apis
    org, teams, system_names = _org(groups, systems, rng)

    def owned(spec: _Spec) -> _Spec:
        spec.owner, spec.system = rng.choice(teams), rng.choice(system_names)
        return spec

    hubs = [owned(_Spec("Resource", n, type="cache", title=n.replace("-", " ").title())) for n in HUBS]
    stores = [
        owned(_Spec("Resource", f"db-{i}", type=rng.choice(("database", "cache", "queue"))))
        for i in range(resources - 3)
    ]
    services = [
        owned(_Spec("Component", f"svc-{i}", type="service", pagerduty=f"PS{i:06X}")) for i in range(components)
    ]
    bounds = _layer_bounds(components)
    layer_of = [layer for layer, (lo, hi) in enumerate(bounds) for _ in range(lo, hi)]
    last = len(bounds) - 1
    for i, svc in enumerate(services):
        layer = layer_of[i]
        svc.description = f"Layer {layer} service of {svc.system}."
        svc.tags = [f"layer-{layer}"]
        if layer < last:
            lo, hi = bounds[layer + 1]
            svc.depends_on += [f"component:svc-{j}" for j in rng.sample(range(lo, hi), min(hi - lo, rng.randint(1, 3)))]
        else:
            svc.depends_on.append("resource:redis-hub")
            svc.depends_on += [f"resource:{h}" for h, p in zip(HUBS[1:], (0.5, 0.3), strict=True) if rng.random() < p]
        if layer < last and rng.random() < 0.1:
            svc.depends_on.append(f"resource:{rng.choice(HUBS)}")
        if layer >= 2 and rng.random() < 0.03:  # an upward edge: closes cycles through the layers between
            lo, hi = bounds[rng.randint(1, layer - 1)]
            svc.depends_on.append(f"component:svc-{rng.randrange(lo, hi)}")
        if rng.random() < 0.02:
            svc.soft.append(svc.depends_on[0])
    for store in stores:
        users = rng.sample(services, rng.choice((1, 1, 1, 2, 3)))
        for user in users:
            user.depends_on.append(f"resource:{store.name}")
        if rng.random() < 0.05:
            lo, _ = bounds[last - 1]
            store.dependency_of.append(f"component:svc-{rng.randrange(lo, components)}")
    api_specs = []
    for i in range(apis):
        provider = rng.randrange(bounds[1][0], components)
        api = owned(_Spec("API", f"api-{i}", type=rng.choice(("openapi", "grpc", "asyncapi"))))
        services[provider].provides.append(api.name)
        lo, hi = bounds[layer_of[provider] - 1]
        for consumer in rng.sample(range(lo, hi), min(hi - lo, rng.randint(1, 3))):
            services[consumer].consumes.append(api.name)
        api_specs.append(api)
    return org + hubs + stores + api_specs + services, "resource:default/redis-hub", "component:default/svc-0"


def _layer_bounds(components: int) -> list[tuple[int, int]]:
    bounds, start = [], 0
    for k, share in enumerate(LAYER_SHARES):
        end = components if k == len(LAYER_SHARES) - 1 else start + max(1, round(components * share))
        bounds.append((start, end))
        start = end
    return bounds


# Words for the named shape: names as people write them (`ts-inside-payment-service`), long
# enough that a typo of one is rarely a typo of another, as in real catalogs.
_WORD_TEXT = (
    "account admin alert analytics archive asset audit auth avatar balance basket batch billing booking "
    "brand budget cache calendar campaign cancel card cart catalog checkout claim clearing client cluster "
    "config consent contact content contract coupon credit currency customer dashboard delivery device "
    "discount dispatch document email event export feature feed fraud gateway geo gift identity image "
    "import inbox index inside insurance inventory invoice ledger license loyalty media member merchant "
    "message metric mobile notification offer order partner payment payout pricing profile promo quote "
    "rating receipt refund region reminder report reservation review reward risk route schedule search "
    "seat session settlement shipment shipping signup station stock subscription supplier support tax "
    "ticket token tracking train transfer travel trip user vault voucher wallet warehouse webhook"
)
_WORDS = tuple(_WORD_TEXT.split())
_PREFIXES = ("ts", "acme", "core", "shop", "pay", "ops", "edge", "data", "mobile", "web", "int", "ext")
_SUFFIXES = {
    "Component": ("service", "service", "service", "worker", "consumer", "scheduler"),
    "Resource": ("db", "cache", "queue", "store", "bucket"),
    "API": ("api",),
    "Group": ("team",),
    "System": ("platform",),
}


def _named(total: int, rng: random.Random) -> tuple[list[_Spec], str, str]:
    """The layered shape, every entity but the hubs renamed with words: for name matching, not walks."""
    specs, hub, leaf = _layered(total, rng)
    renamed: dict[str, str] = {}
    taken: set[str] = set(HUBS)
    for spec in specs:
        if spec.name in HUBS:
            continue
        while True:
            words = rng.sample(_WORDS, rng.choice((1, 2, 2, 3)))
            prefix = [rng.choice(_PREFIXES)] if spec.kind == "Component" or rng.random() < 0.3 else []
            name = "-".join([*prefix, *words, rng.choice(_SUFFIXES[spec.kind])])
            if name not in taken:
                break
        taken.add(name)
        renamed[spec.name] = name
    for spec in specs:
        _rename(spec, renamed)
    leaf_kind, leaf_name = leaf.split("/")
    return specs, hub, f"{leaf_kind}/{renamed.get(leaf_name, leaf_name)}"


def _rename(spec: _Spec, renamed: dict[str, str]) -> None:
    def one(name: str) -> str:
        kind, _, bare = name.rpartition(":")
        return f"{kind}:{renamed.get(bare, bare)}" if kind else renamed.get(bare, bare)

    spec.name, spec.owner, spec.system, spec.parent = map(one, (spec.name, spec.owner, spec.system, spec.parent))
    for key in ("soft", "depends_on", "dependency_of", "provides", "consumes", "children", "tags"):
        setattr(spec, key, [one(v) for v in getattr(spec, key)])


def _dense(total: int, rng: random.Random) -> tuple[list[_Spec], str, str]:
    groups = systems = apis = max(3, total // 100)
    resources = max(2, total * 7 // 100)
    components = total - groups - systems - apis - resources
    org, teams, system_names = _org(groups, systems, rng)

    def owned(spec: _Spec) -> _Spec:
        spec.owner, spec.system = rng.choice(teams), rng.choice(system_names)
        return spec

    stores = [owned(_Spec("Resource", "hub-db", type="database", title="Hub DB"))]
    stores += [owned(_Spec("Resource", f"db-{i}", type="database")) for i in range(1, resources)]
    for store in stores[1:]:
        if rng.random() < 0.95:
            store.depends_on.append("resource:hub-db")
    services = [
        owned(_Spec("Component", f"svc-{i}", type="service", pagerduty=f"PS{i:06X}")) for i in range(components)
    ]
    depended = bytearray(components)
    services[0].depends_on.append("resource:hub-db")
    for i in range(1, components):
        targets = rng.sample(range(i), min(i, 10))
        if i < components - 1 and rng.random() < 0.05:  # an edge forward: a cycle
            targets.append(rng.randrange(i + 1, components))
        for j in targets:
            depended[j] = 1
        services[i].depends_on += [f"component:svc-{j}" for j in targets]
        services[i].depends_on.append(f"resource:db-{rng.randrange(1, resources)}")
    api_specs = []
    for i in range(apis):
        api = owned(_Spec("API", f"api-{i}", type="openapi"))
        services[rng.randrange(components)].provides.append(api.name)
        for consumer in rng.sample(range(components), 2):
            services[consumer].consumes.append(api.name)
        api_specs.append(api)
    leaf = max(i for i in range(components) if not depended[i] and not services[i].provides)
    return org + stores + api_specs + services, "resource:default/hub-db", f"component:default/svc-{leaf}"


# --- YAML -----------------------------------------------------------------------------------


def _document(spec: _Spec) -> str:
    return "---\n" + "".join(_lines(spec))


def _lines(spec: _Spec) -> Iterator[str]:
    yield f"apiVersion: {API_VERSION}\nkind: {spec.kind}\nmetadata:\n  name: {spec.name}\n"
    if spec.title:
        yield f"  title: {spec.title}\n"
    if spec.description:
        yield f"  description: {spec.description}\n"
    annotations = {"pagerduty.com/service-id": spec.pagerduty, "oncall-graph/soft-dependencies": ", ".join(spec.soft)}
    if any(annotations.values()):
        yield "  annotations:\n"
        yield from (f"    {key}: {value}\n" for key, value in annotations.items() if value)
    yield from _block("  ", "tags", spec.tags)
    yield "spec:\n"
    scalars = {"type": spec.type, "owner": spec.owner, "system": spec.system, "parent": spec.parent}
    if spec.kind in ("Component", "API"):
        scalars["lifecycle"] = "production"
    if spec.kind == "API":
        scalars["definition"] = '"openapi: 3.0.0"'
    yield from (f"  {key}: {value}\n" for key, value in scalars.items() if value)
    if spec.kind == "Group":
        yield from _block("  ", "children", spec.children, empty=True)
    yield from _block("  ", "providesApis", spec.provides)
    yield from _block("  ", "consumesApis", spec.consumes)
    yield from _block("  ", "dependsOn", spec.depends_on)
    yield from _block("  ", "dependencyOf", spec.dependency_of)


def _block(indent: str, key: str, values: Sequence[str], *, empty: bool = False) -> Iterator[str]:
    if values:
        yield f"{indent}{key}:\n"
        yield from (f"{indent}  - {v}\n" for v in values)
    elif empty:
        yield f"{indent}{key}: []\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "scenarios", nargs="*", metavar="SCENARIO", help=f"any of {', '.join([*SCENARIOS, *NAMED])} (default: all)"
    )
    args = parser.parse_args(argv)
    known = SCENARIOS | NAMED
    if unknown := set(args.scenarios) - set(known):
        parser.error(f"unknown scenario {', '.join(sorted(unknown))}")
    for name in args.scenarios or known:
        catalog = ensure_catalog(known[name])
        print(f"{name}: {catalog.entities} entities, {catalog.depends_on} dependsOn, {catalog.size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
