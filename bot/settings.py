"""Settings, read once from the environment and `.env`, then passed down as plain values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, create_model, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graph.health.freshness import StalePolicy
from sync.sources.kinds import SOURCE_KINDS, SourceKind

DEFAULT_DATABASE_URL = "sqlite:///oncall-graph.db"
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5"
# The reader needs a forced tool call, which Haiku 4.5 supports (the 5.5 models refuse forced tool use).
DEFAULT_ANTHROPIC_READER_MODEL = "claude-haiku-4-5"
DEFAULT_EXTRACT_MODEL = "claude-haiku-4-5"


def split_list(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _source_fields() -> dict[str, Any]:
    """One string setting per declared source kind, then one per secret a kind needs, in table order."""
    locations = {kind.dest: (str, Field("", validation_alias=kind.env)) for kind in SOURCE_KINDS}
    secrets = {k.token.setting: (str, Field("", validation_alias=k.token.env)) for k in SOURCE_KINDS if k.token}
    return locations | secrets


_KINDS_BY_DEST: dict[str, SourceKind] = {kind.dest: kind for kind in SOURCE_KINDS}


# The source settings are fields like any other (read from the environment and `.env`), declared by
# the kinds table rather than by hand; mypy sees a plain BaseSettings, reached through `sources()`.
if TYPE_CHECKING:
    _SourceSettings = BaseSettings
else:
    _SourceSettings = create_model("_SourceSettings", __base__=BaseSettings, **_source_fields())


class Settings(_SourceSettings):
    """Every setting oncall-graph reads; `.env.example` documents each one."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", frozen=True)

    database_url: str = Field(DEFAULT_DATABASE_URL, validation_alias="DATABASE_URL")
    sync_interval: float = Field(300, ge=1, validation_alias="ONCALL_GRAPH_SYNC_INTERVAL")
    http_timeout: float = Field(10.0, gt=0, validation_alias="ONCALL_GRAPH_HTTP_TIMEOUT")
    max_file_bytes: int = Field(10 * 1024 * 1024, ge=1024, validation_alias="ONCALL_GRAPH_MAX_FILE_BYTES")
    source_deadline: float = Field(120.0, gt=0, validation_alias="ONCALL_GRAPH_SOURCE_DEADLINE")
    poll_interval: float = Field(10.0, gt=0, validation_alias="ONCALL_GRAPH_POLL_INTERVAL")
    # SQLite only (PostgreSQL is told by NOTIFY): seconds between reads of the graph version row.
    wake_poll_interval: float = Field(0.25, gt=0, validation_alias="ONCALL_GRAPH_WAKE_POLL_INTERVAL")
    max_drop: float = Field(0.5, gt=0, le=1, validation_alias="ONCALL_GRAPH_MAX_DROP")
    stale_after: str = Field("", validation_alias="ONCALL_GRAPH_STALE_AFTER")
    observed_window: str = Field("7d", validation_alias="ONCALL_GRAPH_OBSERVED_WINDOW")
    observed_min_calls: int = Field(10, ge=1, validation_alias="ONCALL_GRAPH_OBSERVED_MIN_CALLS")
    service_graph_prefix: str = Field("traces_service_graph", validation_alias="ONCALL_GRAPH_SERVICE_GRAPH_PREFIX")
    service_graph_tenant: str = Field("", validation_alias="ONCALL_GRAPH_SERVICE_GRAPH_TENANT")
    # The present beside each answer: the service graph's calls over this window, each look at most
    # this many seconds, one reading shared by every answer for this long (0: every answer reads).
    live_window: str = Field("5m", validation_alias="ONCALL_GRAPH_LIVE_WINDOW")
    live_deadline: float = Field(1.0, gt=0, le=60, validation_alias="ONCALL_GRAPH_LIVE_DEADLINE")
    live_cache: float = Field(30.0, ge=0, validation_alias="ONCALL_GRAPH_LIVE_CACHE")
    # Open incidents are read from here with PAGERDUTY_API_TOKEN; empty: the --pagerduty source's URL, else PagerDuty's.
    pagerduty_api_url: str = Field("", validation_alias="ONCALL_GRAPH_PAGERDUTY_API_URL")
    # The Backstage app's base URL: links to its entity pages (`/catalog/<namespace>/<kind>/<name>`) are
    # unfurled, and a cited descriptor with no file URL links to its entity page there.
    backstage_url: str = Field("", validation_alias="ONCALL_GRAPH_BACKSTAGE_URL")
    # Where the snapshot image is kept: empty = beside a SQLite file, else the user's cache folder; "off" = none.
    snapshot_dir: str = Field("", validation_alias="ONCALL_GRAPH_SNAPSHOT_DIR")

    slack_bot_token: str = Field("", validation_alias="SLACK_BOT_TOKEN")
    slack_signing_secret: str = Field("", validation_alias="SLACK_SIGNING_SECRET")
    slack_app_token: str = Field("", validation_alias="SLACK_APP_TOKEN")
    slack_api_url: str = Field("https://slack.com/api/", validation_alias="SLACK_API_URL")
    admins: str = Field("", validation_alias="ONCALL_GRAPH_ADMINS")
    alert_channel: str = Field("", validation_alias="ONCALL_GRAPH_ALERT_CHANNEL")
    watch_channels: str = Field("", validation_alias="ONCALL_GRAPH_WATCH_CHANNELS")
    alert_bots: str = Field("PagerDuty", validation_alias="ONCALL_GRAPH_ALERT_BOTS")
    port: int = Field(3000, validation_alias="PORT")
    # Unset: /metrics on PORT with everything else. Set: /metrics only there, and PORT no longer serves it.
    metrics_port: int | None = Field(None, ge=0, le=65535, validation_alias="ONCALL_GRAPH_METRICS_PORT")
    anthropic_api_key: str = Field("", validation_alias="ANTHROPIC_API_KEY")
    anthropic_base_url: str = Field("", validation_alias="ANTHROPIC_BASE_URL")
    # `oncall-graph extract` only: it forces one tool call per chunk, so the model must accept a forced tool choice.
    extract_model: str = Field(DEFAULT_EXTRACT_MODEL, min_length=1, validation_alias="ONCALL_GRAPH_EXTRACT_MODEL")
    pagerduty_webhook_secrets: str = Field("", validation_alias="PAGERDUTY_WEBHOOK_SECRETS")
    pagerduty_channels: str = Field("", validation_alias="ONCALL_GRAPH_PAGERDUTY_CHANNELS")
    github_webhook_secrets: str = Field("", validation_alias="GITHUB_WEBHOOK_SECRETS")
    deploy_webhook_secrets: str = Field("", validation_alias="ONCALL_GRAPH_DEPLOY_WEBHOOK_SECRETS")
    deploy_webhook_tokens: str = Field("", validation_alias="ONCALL_GRAPH_DEPLOY_WEBHOOK_TOKENS")
    log_format: str = Field("text", validation_alias="ONCALL_GRAPH_LOG_FORMAT")
    # Who the MCP server answers as (`mcp --as-user` / `--as-channel` override); neither: an outsider.
    mcp_as_user: str = Field("", validation_alias="ONCALL_GRAPH_MCP_AS_USER")
    mcp_as_channel: str = Field("", validation_alias="ONCALL_GRAPH_MCP_AS_CHANNEL")
    otel_endpoint: str = Field("", validation_alias="OTEL_EXPORTER_OTLP_ENDPOINT")
    otel_service_name: str = Field("oncall-graph", validation_alias="OTEL_SERVICE_NAME")
    anthropic_model: str = Field(DEFAULT_ANTHROPIC_MODEL, min_length=1, validation_alias="ANTHROPIC_MODEL")
    anthropic_reader_model: str = Field(
        DEFAULT_ANTHROPIC_READER_MODEL, min_length=1, validation_alias="ANTHROPIC_READER_MODEL"
    )
    anthropic_timeout: float = Field(8.0, gt=0, validation_alias="ANTHROPIC_TIMEOUT")
    anthropic_max_context_tokens: int = Field(4000, ge=200, validation_alias="ANTHROPIC_MAX_CONTEXT_TOKENS")
    anthropic_max_tokens: int = Field(800, ge=16, validation_alias="ANTHROPIC_MAX_TOKENS")

    @field_validator("backstage_url")
    @classmethod
    def _backstage_base(cls, value: str) -> str:
        """An http(s) base URL (a host, no query or fragment), or nothing: any other value would link and
        unfurl nothing, silently. Read once here for the readers, the renderers and the unfurls."""
        value = value.strip()
        parts = urlsplit(value)
        if value and (
            parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.query or parts.fragment
        ):
            raise ValueError(f"expected the Backstage base URL, like https://backstage.example.com, got {value!r}")
        return value.rstrip("/")

    def sources(self, dest: str) -> tuple[str, ...]:
        """The locations set for the source kind whose `dest` this is (`docs`, `untrusted_docs`)."""
        kind = _KINDS_BY_DEST[dest]
        value = str(getattr(self, kind.dest)).strip()
        return split_list(value) if kind.repeatable else (value,) if value else ()

    def source_tokens(self) -> dict[str, str]:
        """Each kind's secret (kind name -> value, stripped: pasted tokens often end in a newline)."""
        return {k.name: str(getattr(self, k.token.setting)).strip() for k in SOURCE_KINDS if k.token}

    def stale_after_map(self) -> dict[str, float]:
        """`SOURCE=SECONDS,...`: a source's own stale threshold instead of three sync intervals."""
        pairs = [item.rsplit("=", 1) for item in split_list(self.stale_after)]
        bad = [item for item in pairs if len(item) != 2 or not item[1].replace(".", "", 1).isdigit()]
        if bad:
            raise ValueError(f"ONCALL_GRAPH_STALE_AFTER: expected SOURCE=SECONDS pairs, got {bad[0]!r}")
        return {name.strip(): float(seconds) for name, seconds in pairs}

    def stale_policy(self) -> StalePolicy:
        """The limits every freshness verdict (answers, lag, metrics, alerts) is judged by."""
        return StalePolicy(self.sync_interval, self.stale_after_map())


def read_settings() -> Settings:
    """The settings from the environment; a bad value raises ValueError naming each variable and what
    is wrong with it, in one line each (pydantic's own report is a traceback's worth of text)."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg'].removeprefix('Value error, ')}"
            for error in exc.errors()
        ]
        raise ValueError("; ".join(problems)) from None
