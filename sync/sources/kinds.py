"""Every source kind, declared once: its name, reader, option, setting, help and secret.

The command-line parser and the settings are built from this table at run time; `.env.example`
and the README's tables are generated from it (`python -m sync.sources.kinds_docs`, which the
tests run with `--check`). Adding a kind is one entry here plus its reader module.

A plain declaration on purpose: the standard library only, no `graph`, no I/O. `bot`'s parser and
settings read it without reaching `sync`'s readers (import-linter allows `bot` this one module);
readers are named as `module:function` inside `sync.sources` and bound by `sync.sources.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Secret:
    """A credential a kind needs: a setting of its own, never a command-line option."""

    setting: str  # the `Settings` field
    env: str  # the environment variable (and `.env` key)
    doc: str  # its `.env.example` comment and README settings row


@dataclass(frozen=True, slots=True)
class SourceKind:
    name: str  # SourceSpec.kind, the `--NAME` option, the `NAME:location` prefix of source names
    env: str  # the environment variable listing locations (comma-separated when repeatable)
    help: str  # the option's `--help` line
    placeholder: str  # what the README's command-line table shows after the option (`--help` shows SRC)
    reads: str  # the README's command-line table: what the option reads
    doc: str  # the `.env.example` comment and the README settings row
    example: str = ""  # the value `.env.example` gives (the bundled example's)
    # Readers, as `module:function` in sync.sources. A kind has `read` or `walk`, never both.
    read: str = ""  # (source, location) -> facts, for a local file or folder
    parse_fetched: str = ""  # (source, name, body) -> facts: set when a location may be a URL
    fetch_url: str = ""  # location -> the URL to GET, when it is not the location itself
    walk: str = ""  # (source, location, *, token, timeout) -> facts: the reader walks an API itself
    # Appended to a local source's content version when its reader learns to read more from the
    # same files, so that sources synced before are read once more.
    revision: str = ""
    # location -> the content version of a local source whose reader reads more than a walk of its
    # folder finds (a catalog's Locations name files beside it); a hash of that walk by default.
    version: str = ""
    token: Secret | None = None  # sent as `Authorization: Bearer` to a URL, or given to `walk`
    repeatable: bool = True  # the option may be given again; the setting is a comma-separated list
    # Reads traces: its reader or walk also takes `traces=` (sync.sources.trace_options.TraceOptions)
    # and `now=` (the sync's clock: the end of the window calls are counted over).
    traces: bool = False
    # Describes Backstage entities: its reader or parser also takes `pages=` (ONCALL_GRAPH_BACKSTAGE_URL),
    # the Backstage app whose entity pages a descriptor is cited by where no file URL is known.
    pages: bool = False

    def __post_init__(self) -> None:
        if bool(self.read) == bool(self.walk):
            raise ValueError(f"source kind {self.name!r}: give exactly one of read and walk")
        if self.walk and (self.parse_fetched or self.fetch_url):
            raise ValueError(f"source kind {self.name!r}: a walk fetches for itself")

    @property
    def dest(self) -> str:
        """The argparse destination and the `Settings` field."""
        return self.name.replace("-", "_")

    @property
    def option(self) -> str:
        return f"--{self.name}"

    @property
    def takes_urls(self) -> bool:
        return bool(self.parse_fetched or self.walk)


SOURCE_KINDS: tuple[SourceKind, ...] = (
    SourceKind(
        name="catalog",
        env="ONCALL_GRAPH_CATALOG",
        help="Backstage descriptor file, folder or catalog API URL",
        placeholder="SRC",
        reads="Backstage descriptors: a `catalog-info.yaml`, a folder (recursive `*.yaml`/`*.yml`/`*.json`), "
        'or a catalog API URL; a saved API response (`entities.json`: a JSON array, or `{"items": [...]}` as '
        "`/entities/by-query` answers) reads from a file or folder as from the URL, computed `relations` included",
        doc="Backstage descriptors: catalog-info.yaml files, folders (searched recursively) or a catalog API URL.",
        example="examples/acme/catalog",
        read="catalog:read_catalog_rows",
        # +relations: catalog API responses and computed relations were not read before; +rules: names,
        # namespaces and fields are checked against Backstage's own rules; +locations: Location
        # targets are read.
        revision="+relations+rules+locations+links",  # descriptors cite where they open
        version="catalog_fetch:catalog_version",
        pages=True,
        parse_fetched="catalog:parse_catalog_api",
        fetch_url="catalog_fetch:catalog_api_url",
        token=Secret(
            "catalog_token",
            "ONCALL_GRAPH_CATALOG_TOKEN",
            "Backstage static access token for a catalog API URL (sent as Authorization: Bearer).",
        ),
    ),
    SourceKind(
        name="deploys",
        env="ONCALL_GRAPH_DEPLOYS",
        help="deploy feed: JSON Lines file or URL",
        placeholder="SRC",
        reads="deploy feed: JSON Lines or JSON array, file or URL; native events, GitHub `deployment_status` "
        "payloads, PagerDuty Change Events (alert events, with `event_action`, are refused line by line: they "
        "belong to PagerDuty)",
        doc="Deploy feed: JSON Lines file or URL (native events, GitHub deployment_status, PagerDuty Change Events).",
        example="examples/acme/deploys.jsonl",
        read="deploys:read_deploys",
        revision="+targets",  # deploys now carry their repository and ref
        parse_fetched="deploys:parse_deploys",
    ),
    SourceKind(
        name="docs",
        env="ONCALL_GRAPH_DOCS",
        help="runbook file or folder",
        placeholder="PATH",
        reads="runbooks (Markdown/text); relations are extracted from sentences",
        doc="Runbooks (Markdown/text files or folders); relations are extracted from their sentences.",
        example="examples/acme/runbooks",
        read="runbooks:read_runbooks",
        revision="+passages",  # runbooks gave no passages before
    ),
    SourceKind(
        name="untrusted-docs",
        env="ONCALL_GRAPH_UNTRUSTED_DOCS",
        help="outside documents: their edges are held for review",
        placeholder="PATH",
        reads="outside documents: their edges are held for review, never answered from",
        doc="Outside documents: their edges are held for review and never create an owner on their own.",
        read="runbooks:read_untrusted_runbooks",
    ),
    SourceKind(
        name="triples",
        env="ONCALL_GRAPH_TRIPLES",
        help="triples JSON file",
        placeholder="FILE",
        reads='`[{"subject", "relation", "object", "source_text"}]`',
        doc='Triples JSON files: [{"subject", "relation", "object", "source_text"}].',
        example="examples/acme/triples.json",
        read="triples:read_triples",
        parse_fetched="triples:parse_triples",
    ),
    SourceKind(
        name="aliases",
        env="ONCALL_GRAPH_ALIASES",
        help="aliases YAML file",
        placeholder="FILE",
        reads="YAML: canonical name → aliases (`postgresql: [postgres, pg]`)",
        doc="Aliases YAML files: canonical name -> list of aliases.",
        example="examples/acme/aliases.yaml",
        read="aliases:read_aliases",
        parse_fetched="aliases:parse_aliases",
    ),
    SourceKind(
        name="pagerduty",
        env="ONCALL_GRAPH_PAGERDUTY",
        help="PagerDuty API URL for service dependencies (?services=ID,... to start from)",
        placeholder="URL",
        reads="PagerDuty service dependencies (REST v2), `?services=PID1,PID2` to start the walk from; "
        "needs `PAGERDUTY_API_TOKEN`",
        doc="PagerDuty service dependencies: API base URL, optionally ?services=PID1,PID2 to start the walk from.",
        walk="pagerduty:read_pagerduty",
        token=Secret(
            "pagerduty_token",
            "PAGERDUTY_API_TOKEN",
            "PagerDuty REST API key (read-only is enough) for ONCALL_GRAPH_PAGERDUTY, and for the open incidents "
            "answers name (ONCALL_GRAPH_PAGERDUTY_API_URL).",
        ),
    ),
    SourceKind(
        name="service-graph",
        env="ONCALL_GRAPH_SERVICE_GRAPH",
        help="Prometheus-compatible API URL holding service-graph metrics (observed calls)",
        placeholder="URL",
        reads="observed calls: the service-graph metrics Tempo, Alloy or the OpenTelemetry Collector write "
        "(`traces_service_graph_request_total`, `…_request_failed_total`), one instant query to a "
        "Prometheus-compatible API (Prometheus, Thanos, Mimir, VictoriaMetrics; a path prefix such as "
        "`/prometheus` is kept)",
        doc="Service-graph metrics: the base URL of a Prometheus-compatible API (Prometheus, Thanos, Mimir, "
        "VictoriaMetrics); calls and failed calls per client and server over ONCALL_GRAPH_OBSERVED_WINDOW.",
        walk="service_graph:read_service_graph",
        token=Secret(
            "service_graph_token",
            "ONCALL_GRAPH_SERVICE_GRAPH_TOKEN",
            "Bearer token for ONCALL_GRAPH_SERVICE_GRAPH (a Mimir or Grafana Cloud gateway); the tenant is "
            "ONCALL_GRAPH_SERVICE_GRAPH_TENANT.",
        ),
        traces=True,
    ),
    SourceKind(
        name="jaeger",
        env="ONCALL_GRAPH_JAEGER",
        help="Jaeger query service URL: its dependency links (observed calls)",
        placeholder="URL",
        reads="observed calls: a Jaeger query service's dependency links (`/api/dependencies`) over the window; "
        "Jaeger counts calls, not failures",
        doc="Jaeger query service base URL: its dependency links (/api/dependencies) over "
        "ONCALL_GRAPH_OBSERVED_WINDOW. Jaeger counts calls, not failures.",
        walk="jaeger:read_jaeger",
        token=Secret(
            "jaeger_token",
            "ONCALL_GRAPH_JAEGER_TOKEN",
            "Bearer token for ONCALL_GRAPH_JAEGER, when a proxy in front of Jaeger asks for one.",
        ),
        traces=True,
    ),
    SourceKind(
        name="otlp",
        env="ONCALL_GRAPH_OTLP",
        help="OTLP/JSON trace file or folder: calls paired from client and server spans",
        placeholder="PATH",
        reads="OTLP/JSON traces: one document, or JSON Lines as the Collector's file exporter writes them "
        '(also Jaeger\'s `{"result": ...}` and Tempo\'s `{"batches": [...]}`), or a folder (recursive `*.json`/'
        "`*.jsonl`/`*.ndjson`); client and server spans paired into calls, counted over the window ending at "
        "the newest span",
        doc="OTLP/JSON trace files or folders (JSON Lines as the Collector's file exporter writes them); calls are "
        "counted over ONCALL_GRAPH_OBSERVED_WINDOW ending at the newest span read.",
        read="otlp:read_otlp",
        traces=True,
    ),
)


def source_kind(name: str) -> SourceKind:
    """The declared kind called `name`; raises KeyError naming the known kinds."""
    for kind in SOURCE_KINDS:
        if kind.name == name:
            return kind
    raise KeyError(f"no source kind {name!r} (known: {', '.join(k.name for k in SOURCE_KINDS)})")
