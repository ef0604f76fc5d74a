"""The deploy feed: JSON Lines or a JSON array of native events, GitHub `deployment_status`
webhook payloads and PagerDuty Change Events (v2), read into `Deploy` facts."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime

import httpx

from graph.facts import Citation, Deploy, Problem, SourceFacts
from sync.sources.reading.shown import shown
from sync.sources.reading.textfiles import DEFAULT_TIMEOUT, FetchedText, fetch_text

ACCEPT = "application/x-ndjson, application/jsonl, application/json;q=0.9, */*;q=0.1"
PAGERDUTY_SUMMARY_LIMIT = 1024

Record = tuple[str, object]  # (locator, decoded JSON value)
Field = tuple[str, object]  # (path in the event, raw value)


def fetch_deploys(
    location: str, *, timeout: float = DEFAULT_TIMEOUT, transport: httpx.BaseTransport | None = None
) -> FetchedText:
    return fetch_text(location, timeout=timeout, accept=ACCEPT, transport=transport)


def read_deploys(
    source: str,
    location: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    transport: httpx.BaseTransport | None = None,
) -> SourceFacts:
    """Fetch and parse one feed; raises FetchError only when nothing could be read."""
    fetched = fetch_deploys(location, timeout=timeout, transport=transport)
    return parse_deploys(source, fetched.name, fetched.text)


def parse_deploys(source: str, name: str, text: str) -> SourceFacts:
    """Every usable event becomes a Deploy (the last one wins per id); each bad one a Problem."""
    records, problems = _records(name, text)
    kept: dict[str, Deploy] = {}
    for locator, value in records:
        deploy = _parse_event(source, locator, value, problems)
        if deploy is None:
            continue
        earlier = kept.pop(deploy.id, None)
        if earlier is not None:
            message = f"duplicate deploy id {shown(deploy.id)} (also at {earlier.citation.locator}); the last is kept"
            problems.append(Problem(locator, message, field="id"))
        kept[deploy.id] = deploy
    return SourceFacts(source, deploys=tuple(kept.values()), problems=tuple(sorted(problems, key=_position)))


def parse_timestamp(text: str) -> tuple[datetime, bool]:
    """(UTC-aware datetime, True if the text had no offset and UTC was assumed); raises ValueError."""
    text = text.strip().upper()  # RFC 3339 allows a lower-case t and z
    if not re.search(r"\d[T ]\d", text):
        raise ValueError("has no time of day")
    # Python 3.11 reads Z, +00:00, +0000 and any number of fractional digits itself.
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC), True
    return parsed.astimezone(UTC), False


def _position(problem: Problem) -> int:
    found = re.search(r"[:#](\d+)$", problem.where)
    return int(found[1]) if found else 0


def _records(name: str, text: str) -> tuple[list[Record], list[Problem]]:
    body = text.removeprefix("\ufeff")
    try:
        whole = json.loads(body)
    except (ValueError, RecursionError) as exc:
        if body.lstrip().startswith("[") and not _first_line_is_json(body):
            line = getattr(exc, "lineno", 1)
            return [], [Problem(f"{name}:{line}", f"not a valid JSON array: {_reason(exc)}", severity="error")]
        return _json_lines(name, body)
    if isinstance(whole, list):
        return [(f"{name}#{index}", item) for index, item in enumerate(whole, 1)], []
    if isinstance(whole, dict):
        # one event, possibly pretty-printed over several lines (a saved webhook payload)
        return [(f"{name}:{_first_content_line(body)}", whole)], []
    kind = type(whole).__name__
    return [], [Problem(name, f"expected JSON Lines or a JSON array, got a {kind}", severity="error")]


def _json_lines(name: str, body: str) -> tuple[list[Record], list[Problem]]:
    records: list[Record] = []
    problems: list[Problem] = []
    for number, line in enumerate(body.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append((f"{name}:{number}", json.loads(line)))
        except (ValueError, RecursionError) as exc:
            problems.append(Problem(f"{name}:{number}", f"not valid JSON: {_reason(exc)}", severity="error"))
    return records, problems


def _first_line_is_json(body: str) -> bool:
    first = next((line for line in body.splitlines() if line.strip()), "")
    try:
        json.loads(first)
    except (ValueError, RecursionError):
        return False
    return True


def _first_content_line(body: str) -> int:
    return next((n for n, line in enumerate(body.splitlines(), 1) if line.strip()), 1)


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (column {exc.colno})"
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def _parse_event(source: str, where: str, event: object, problems: list[Problem]) -> Deploy | None:
    if not isinstance(event, dict):
        problems.append(Problem(where, f"expected a JSON object, got {_json_kind(event)}", severity="error"))
        return None
    if "deployment_status" in event:
        fields = _github(where, event, problems)
    elif "event_action" in event:
        problems.append(_alert_event(where, event.get("event_action")))
        return None
    elif isinstance(event.get("deployment"), dict) and "repository" in event:
        fields = _github_fields(event)  # a `deployment` event: GitHub's record that a deploy began
    elif "routing_key" in event or ("payload" in event and "id" not in event):
        fields = _pagerduty(where, event, problems)
    else:
        fields = {key: (key, event.get(key)) for key in _NATIVE_KEYS}
    return None if fields is None else _assemble(source, where, fields, problems)


_NATIVE_KEYS = ("id", "service", "deployed_at", "version", "environment", "actor", "url", "summary", "repository")
_REQUIRED = ("id", "service", "deployed_at")
_OPTIONAL = ("version", "environment", "actor", "url", "summary", "repository", "routing_key", "git_ref")
# A deploy needs a service name unless one of these names its entity (graph.deploys.deploy_targets).
_IDENTIFYING = ("repository", "routing_key")
ALERT_ACTIONS = frozenset({"trigger", "acknowledge", "resolve"})
SHORT_SHA = 7


def _alert_event(where: str, action: object) -> Problem:
    """PagerDuty Events API v2 alert events open, acknowledge or resolve incidents: they are no deploys."""
    described = f"event_action {shown(action)}" if isinstance(action, str) else "an event_action"
    known = isinstance(action, str) and action.lower() in ALERT_ACTIONS
    kind = "a PagerDuty alert event" if known else "a PagerDuty event with an event_action"
    message = (
        f"{kind} ({described}), not a change event: alerts belong to PagerDuty's Events API "
        "(/v2/enqueue) and open incidents; a deploy feed takes change events (/v2/change/enqueue, "
        "no event_action): skipped"
    )
    return Problem(where, message, field="event_action", severity="error")


def _github(where: str, event: Mapping[str, object], problems: list[Problem]) -> dict[str, Field] | None:
    state = _dig(event, "deployment_status.state")
    if not isinstance(state, str):
        message = "no state; only 'success' statuses count as deploys"
        problems.append(Problem(where, message, field="deployment_status.state", severity="error"))
        return None
    if state.lower() != "success":
        return None  # queued, in_progress, failure, error, inactive: not a finished deploy
    return _github_fields(event)


def _github_fields(event: Mapping[str, object]) -> dict[str, Field]:
    # A `deployment` event has no `deployment_status`: each field falls through to the deployment's own.
    path, raw_id = _first(event, "deployment.id", "deployment_status.id")
    return {
        "id": (path, f"gh-{raw_id}" if _scalar_text(raw_id) else raw_id),
        "service": _github_service(event),
        "repository": ("repository.full_name", _dig(event, "repository.full_name")),
        "deployed_at": _first(
            event, "deployment_status.created_at", "deployment_status.updated_at", "deployment.created_at"
        ),
        **_github_version(event),
        "environment": _first(event, "deployment_status.environment", "deployment.environment"),
        "actor": _first(event, "deployment.creator.login", "deployment_status.creator.login", "sender.login"),
        "url": _first(
            event,
            "deployment_status.target_url",
            "deployment_status.log_url",
            "deployment_status.environment_url",
        ),
        "summary": _first(event, "deployment_status.description", "deployment.description"),
    }


def _github_version(event: Mapping[str, object]) -> dict[str, Field]:
    """What was deployed is the commit (short sha); the branch or tag it was deployed from beside it."""
    sha, ref = _dig(event, "deployment.sha"), _dig(event, "deployment.ref")
    if isinstance(sha, str) and sha.strip():
        short = sha.strip()[:SHORT_SHA]
        same = isinstance(ref, str) and ref.strip() == sha.strip()  # deployed by sha: no ref beside it
        return {"version": ("deployment.sha", short), "git_ref": ("deployment.ref", None if same else ref)}
    return {"version": ("deployment.ref", ref), "git_ref": ("deployment.ref", None)}


def _github_service(event: Mapping[str, object]) -> Field:
    # A monorepo names the deployed service in the deployment payload; otherwise the repository is it.
    # GitHub keeps `payload` as given: an object, or a JSON string when created from one.
    payload = _dig(event, "deployment.payload")
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except (ValueError, RecursionError):
            payload = None
    service = payload.get("service") if isinstance(payload, dict) else None
    if _scalar_text(service):
        return "deployment.payload.service", service
    return "repository.name", _dig(event, "repository.name")


def _pagerduty(where: str, event: Mapping[str, object], problems: list[Problem]) -> dict[str, Field] | None:
    found = list(_pagerduty_violations(event))
    problems.extend(Problem(where, message, field=field, severity="error") for field, message in found)
    if found:
        return None
    event_id = _first(event, "payload.custom_details.id", "dedup_key")
    if event_id[1] is None:
        event_id = ("payload", _stable_id(event))
    return {
        "id": event_id,
        # The integration key names the PagerDuty service (and so the entity) first; the names after it.
        "routing_key": ("routing_key", event.get("routing_key")),
        "service": _first(event, "payload.custom_details.service", "payload.source"),
        "deployed_at": ("payload.timestamp", _dig(event, "payload.timestamp")),
        "version": _first(event, "payload.custom_details.version", "payload.custom_details.revision"),
        "environment": _first(event, "payload.custom_details.environment"),
        "actor": _first(event, "payload.custom_details.user", "payload.custom_details.actor"),
        "url": ("links.0.href", _dig(event, "links.0.href")),
        "summary": ("payload.summary", _dig(event, "payload.summary")),
    }


def _pagerduty_violations(event: Mapping[str, object]) -> Iterator[tuple[str, str]]:
    # The checks PagerDuty itself makes (Events API v2): it would refuse such an event with a 400.
    key = event.get("routing_key")
    if key is not None and not isinstance(key, str):
        yield "routing_key", "expected a string"
    elif isinstance(key, str) and key.startswith("R"):
        # never echo the key: it is a credential
        yield "routing_key", "a ruleset key (starts with 'R'); change events need a service integration key"
    if not isinstance(event.get("payload"), dict):
        yield "payload", "missing or not an object"
        return
    summary = _dig(event, "payload.summary")
    if not isinstance(summary, str) or not summary.strip():
        yield "payload.summary", "missing or empty; PagerDuty requires a summary"
    elif len(summary) > PAGERDUTY_SUMMARY_LIMIT:
        yield "payload.summary", f"{len(summary)} characters; PagerDuty accepts at most {PAGERDUTY_SUMMARY_LIMIT}"


def _stable_id(event: Mapping[str, object]) -> str:
    # Same event, same id across reads, so re-reading a feed never doubles a deploy.
    content = {key: value for key, value in event.items() if key != "routing_key"}
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()
    return f"pd-{digest[:16]}"


def _assemble(source: str, where: str, fields: dict[str, Field], problems: list[Problem]) -> Deploy | None:
    values: dict[str, str] = {}
    identified = any(_scalar_text(fields[key][1]) for key in _IDENTIFYING if key in fields)
    required = [key for key in _REQUIRED if key != "service" or not identified]
    for key, (path, raw) in fields.items():
        text = _scalar_text(raw)
        if text is None and raw is not None and raw != "":
            severity = "error" if key in required else "warning"
            message = f"expected a string, got {_json_kind(raw)}"
            problems.append(Problem(where, message, field=path, severity=severity))
        elif text is None and key in required:
            problems.append(Problem(where, "missing or empty", field=path, severity="error"))
        values[key] = text or ""
    if not all(values[key] for key in required):
        return None
    deployed_at = _timestamp(where, fields["deployed_at"][0], values["deployed_at"], problems)
    if deployed_at is None:
        return None
    citation = Citation(source, where, origin=f"deploy:{values['id']}")
    optional = {key: values.get(key, "") for key in _OPTIONAL}
    return Deploy(values["id"], values["service"], deployed_at, citation, **optional)


def _timestamp(where: str, path: str, text: str, problems: list[Problem]) -> datetime | None:
    try:
        parsed, assumed_utc = parse_timestamp(text)
    except (ValueError, OverflowError):
        message = f"{shown(text[:80])} is not an ISO 8601 date and time such as 2026-11-29T14:05:00Z"
        problems.append(Problem(where, message, field=path, severity="error"))
        return None
    if assumed_utc:
        problems.append(Problem(where, f"{shown(text)} has no UTC offset; assumed UTC", field=path))
    return parsed


def _scalar_text(value: object) -> str | None:
    """Non-empty stripped text, or an integer as text (numeric ids and build numbers)."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _first(event: Mapping[str, object], *paths: str) -> Field:
    for path in paths:
        value = _dig(event, path)
        if value is not None and value != "":
            return path, value
    return paths[0], None


def _dig(value: object, path: str) -> object:
    for key in path.split("."):
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return None
    return value


def _json_kind(value: object) -> str:
    names = {dict: "an object", list: "an array", bool: "a boolean", float: "a number", int: "a number"}
    return names.get(type(value), "a string" if isinstance(value, str) else "null")
