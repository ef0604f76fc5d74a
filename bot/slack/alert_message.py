"""PagerDuty alerts as the PagerDuty Slack app posts them into a watched channel.

No captured payload of the real app is known (slack-bolt-facts §2), so nothing here trusts one
layout: every text and link of the message is read (top-level `text`, legacy attachment fields,
Block Kit blocks at any depth), and each field of `Alert` comes from the first of several clues.
Pure: no client, no I/O, the event is never mutated, and no input shape makes it raise.
"""

from __future__ import annotations

import colorsys
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass

DEFAULT_ALERT_BOTS: tuple[str, ...] = ("PagerDuty",)
STATUSES: tuple[str, ...] = ("triggered", "acknowledged", "resolved")

# `(?:[\w-]+\.)+` rather than one label: EU accounts live on `<subdomain>.eu.pagerduty.com`.
# The lookahead refuses a half-read id rather than cutting `Q1ABCdef` down to `Q1ABC`.
INCIDENT_URL = re.compile(r"https?://(?:[\w-]+\.)+pagerduty\.com/incidents/([A-Z0-9]+)(?![\w-])")
SERVICE_URL = re.compile(r"https?://(?:[\w-]+\.)+pagerduty\.com/(?:service-directory|services)/([A-Z0-9]+)(?![\w-])")

_SERVICE_LABELS = frozenset({"service", "services", "service name", "impacted service", "affected service"})
_TITLE_LABELS = frozenset({"title", "summary", "incident title"})
_STATUS_LABELS = frozenset({"status", "state", "incident status"})
_MAX_DEPTH = 32

_LINK = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")
_URL_LINK = re.compile(r"<(https?://[^<>|]+)\|([^<>]+)>")
_EMOJI = re.compile(r":[a-z0-9_+'-]+:")
_LABEL_LINE = re.compile(r"^\s*([^\W\d_][\w #/&.-]{0,38}?)\s*:\s*(.*?)\s*$")
_BOLD_LINE = re.compile(r"^\s*\*([^*]+)\*\s*$")
# "Triggered via <Datadog>" names the alert's source on every card, whatever its status.
_STATUS_ANYWHERE = re.compile(r"\b(triggered|acknowledged|resolved)\b(?!\s+via\b)", re.IGNORECASE)
_STATUS_FIRST = re.compile(
    r"^\W*(?:incident\W*)?(?:#?\d+\W*)?(triggered|acknowledged|resolved)\b(?!\s+via\b)", re.IGNORECASE
)
_URGENCY_TEXT = re.compile(r"\b(high|low)[- ]urgency\b|\burgency\W{0,3}(high|low)\b", re.IGNORECASE)
# "Resolved: #4521: Disk full" -> "Disk full"; a leading number without `#` is kept ("500 errors on cart").
_TITLE_PREFIX = re.compile(
    r"^[^\w#]*(?:(?:triggered|acknowledged|resolved)\b[^\w#]*)?(?:(?:incident\s*)?#\d+\b\W*)?", re.IGNORECASE
)
_GENERIC_TITLE = re.compile(r"^(?:(?:view|open)\b.*|pagerduty|#?\d+|(?:p\d+\s+)?incident)$", re.IGNORECASE)
_NAMED_COLOURS = {"danger": "triggered", "warning": "acknowledged", "good": "resolved"}


@dataclass(frozen=True, slots=True)
class Alert:
    """What one PagerDuty message says; every field is `""` when the message does not say it.

    `urgency` is `high`/`low` and `status` one of `STATUSES`, lower-case as in PagerDuty's API.
    """

    incident_id: str
    incident_url: str
    service_name: str
    service_id: str
    title: str
    urgency: str
    status: str
    channel: str
    ts: str
    text_blob: str


@dataclass(frozen=True, slots=True)
class _Piece:
    role: str  # where the text sat: "text", "pretext", "title", "fallback", "header", "context", "block", ...
    text: str


def is_alert(event: Mapping[str, object], *, alert_bots: Collection[str] = DEFAULT_ALERT_BOTS) -> bool:
    """True for a new top-level message posted by an allowed bot; never for replies, edits or deletions.

    A bot matches by `bot_id`, `app_id`, `bot_profile.{id,app_id,name}` or `username`, case-insensitively.
    """
    if not isinstance(event, Mapping) or event.get("type", "message") != "message":
        return False
    if event.get("subtype") not in (None, "bot_message"):
        return False
    return _is_top_level(event) and not _identities(event).isdisjoint(_allowlist(alert_bots))


def parse_alert(event: Mapping[str, object]) -> Alert | None:
    """The alert a message carries, or None when it has no readable text at all."""
    if not isinstance(event, Mapping):
        return None
    attachments = list(_mappings(event.get("attachments")))
    pieces = _pieces(event, attachments)
    if not pieces:
        return None
    blob = "\n".join(piece.text for piece in pieces)
    pairs = _pairs(pieces, attachments)
    incident = INCIDENT_URL.search(blob)
    service = SERVICE_URL.search(blob)
    incident_id = incident.group(1) if incident else ""
    return Alert(
        incident_id=incident_id,
        incident_url=incident.group(0) if incident else "",
        service_name=_service_name(pairs, blob),
        service_id=service.group(1) if service else "",
        title=_title(pieces, attachments, pairs, incident_id),
        urgency=_urgency(pairs, blob),
        status=_status(pieces, pairs, attachments),
        channel=_text(event.get("channel")),
        ts=_text(event.get("ts")),
        text_blob=blob,
    )


def incident_key(alert: Alert) -> str:
    """The deduplication key: the incident id, so its acknowledge and resolve updates share the trigger's key;
    `channel:ts` of the message when the incident is unknown (ids never contain `:`, so the two never meet)."""
    return alert.incident_id or f"{alert.channel}:{alert.ts}"


def _is_top_level(event: Mapping[str, object]) -> bool:
    ts = event.get("ts")
    return isinstance(ts, str) and bool(ts) and event.get("thread_ts") in (None, "", ts)


def _identities(event: Mapping[str, object]) -> set[str]:
    profile = event.get("bot_profile")
    profile = profile if isinstance(profile, Mapping) else {}
    found = (event.get(k) for k in ("bot_id", "app_id", "username"))
    named = (profile.get(k) for k in ("id", "app_id", "name"))
    return {value.strip().casefold() for value in (*found, *named) if isinstance(value, str) and value.strip()}


def _allowlist(alert_bots: Collection[str]) -> set[str]:
    # A bare string is a Collection[str] too; read it as the comma-separated env value, not as letters.
    names = alert_bots.split(",") if isinstance(alert_bots, str) else alert_bots
    return {name.strip().casefold() for name in names if isinstance(name, str) and name.strip()}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _mappings(value: object) -> Iterator[Mapping[str, object]]:
    if isinstance(value, list | tuple):
        yield from (item for item in value if isinstance(item, Mapping))


def _pieces(event: Mapping[str, object], attachments: list[Mapping[str, object]]) -> list[_Piece]:
    out: list[_Piece] = []
    _add(out, "text", event.get("text"))
    _walk(event.get("blocks"), "block", out, 0)
    for attachment in attachments:
        for key in ("pretext", "author_name", "title", "title_link", "text", "fallback", "footer"):
            _add(out, key, attachment.get(key))
        for field in _mappings(attachment.get("fields")):
            _add(out, "field", field.get("title"))
            _add(out, "field", field.get("value"))
        _walk(attachment.get("blocks"), "block", out, 0)
    return out


def _add(out: list[_Piece], role: str, value: object) -> None:
    if isinstance(value, str) and value.strip():
        out.append(_Piece(role, value))


def _walk(node: object, role: str, out: list[_Piece], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, list | tuple):
        for item in node:
            _walk(item, role, out, depth + 1)
        return
    if not isinstance(node, Mapping):
        return
    kind = node.get("type")
    role = kind if isinstance(kind, str) and kind in ("header", "context") else role
    text, url = node.get("text"), node.get("url")
    # A rich-text link keeps its label next to its target, as mrkdwn `<url|label>` would.
    if isinstance(text, str) and isinstance(url, str):
        _add(out, role, f"<{url}|{text}>")
    else:
        _add(out, role, text)
        _add(out, role, url)
    for value in node.values():
        if isinstance(value, list | tuple | Mapping):
            _walk(value, role, out, depth + 1)


def _plain(text: str) -> str:
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = re.sub(r"[*~`]", "", text)
    text = re.sub(r"(?<!\w)_|_(?!\w)", "", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


def _label(text: str) -> str:
    return " ".join(_plain(text).rstrip(":").split()).casefold()


def _pairs(pieces: list[_Piece], attachments: list[Mapping[str, object]]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for attachment in attachments:
        for field in _mappings(attachment.get("fields")):
            title, value = field.get("title"), field.get("value")
            if isinstance(title, str) and isinstance(value, str):
                pairs.append((_label(title), _plain(value)))
    for piece in pieces:
        if piece.role != "field":
            pairs.extend(_line_pairs(piece.text))
    return pairs


def _line_pairs(text: str) -> Iterator[tuple[str, str]]:
    """`*Service:* cart`, `Service: cart`, and a label line (`*Service:*` or `*Service*`) over its value."""
    raw = text.splitlines()
    lines = [_plain(line) for line in raw]
    for i, line in enumerate(lines):
        after = lines[i + 1] if i + 1 < len(lines) else ""
        match = _LABEL_LINE.match(line)
        if match:
            yield _label(match.group(1)), match.group(2) or after
        elif _BOLD_LINE.match(raw[i]) and after:
            yield _label(line), after


def _pair_value(pairs: Iterable[tuple[str, str]], labels: frozenset[str]) -> str:
    return next((" ".join(value.split()) for label, value in pairs if label in labels and value.strip()), "")


def _service_name(pairs: list[tuple[str, str]], blob: str) -> str:
    named = _pair_value(pairs, _SERVICE_LABELS)
    if named:
        return named
    linked = (_plain(label) for url, label in _URL_LINK.findall(blob) if SERVICE_URL.match(url))
    return next((label for label in linked if label), "")


def _urgency(pairs: list[tuple[str, str]], blob: str) -> str:
    words = _pair_value(pairs, frozenset({"urgency"})).casefold().split()
    if words and words[0] in ("high", "low"):
        return words[0]
    match = _URGENCY_TEXT.search(_plain(blob))
    return (match.group(1) or match.group(2)).casefold() if match else ""


def _title(
    pieces: list[_Piece], attachments: list[Mapping[str, object]], pairs: list[tuple[str, str]], incident_id: str
) -> str:
    def links_to_incident(url: object) -> bool:
        match = INCIDENT_URL.match(url) if isinstance(url, str) else None
        return bool(incident_id) and match is not None and match.group(1) == incident_id

    candidates = [_pair_value(pairs, _TITLE_LABELS)]
    candidates += [_text(a.get("title")) for a in attachments if links_to_incident(a.get("title_link"))]
    candidates += [label for p in pieces for url, label in _URL_LINK.findall(p.text) if links_to_incident(url)]
    candidates += [p.text for p in pieces if p.role in ("title", "text", "fallback")]
    cleaned = (_clean_title(candidate) for candidate in candidates)
    return next((title for title in cleaned if title), "")


def _clean_title(text: str) -> str:
    lines = (_EMOJI.sub("", _plain(line)).strip() for line in text.splitlines())
    first = next((line for line in lines if line), "")
    title = " ".join(_TITLE_PREFIX.sub("", first, count=1).split())
    return "" if _GENERIC_TITLE.match(title) else title


def _status(pieces: list[_Piece], pairs: list[tuple[str, str]], attachments: list[Mapping[str, object]]) -> str:
    """Headers first, then a Status field, then the opening words of the message, then the colour."""
    clues = [(p.text, _STATUS_ANYWHERE) for p in pieces if p.role == "header"]
    clues.append((_pair_value(pairs, _STATUS_LABELS), _STATUS_FIRST))
    clues += [(p.text, _STATUS_FIRST) for p in pieces if p.role in ("pretext", "title", "text", "fallback")]
    clues += [(p.text, _STATUS_ANYWHERE) for p in pieces if p.role == "context"]
    for text, pattern in clues:
        match = pattern.search(_EMOJI.sub("", _plain(text)))
        if match:
            return match.group(1).casefold()
    colours = (_colour_status(a.get("color")) for a in attachments)
    return next((status for status in colours if status), "")


def _colour_status(colour: object) -> str:
    """Red is triggered, amber acknowledged, green resolved; anything else says nothing."""
    if not isinstance(colour, str):
        return ""
    named = _NAMED_COLOURS.get(colour.strip().casefold())
    hexa = colour.strip().lstrip("#")
    if named or not re.fullmatch(r"[0-9a-fA-F]{6}|[0-9a-fA-F]{3}", hexa):
        return named or ""
    hexa = hexa if len(hexa) == 6 else "".join(c * 2 for c in hexa)
    red, green, blue = (int(hexa[i : i + 2], 16) / 255 for i in (0, 2, 4))
    hue, saturation, value = colorsys.rgb_to_hsv(red, green, blue)
    degrees = hue * 360
    if saturation < 0.3 or value < 0.25:
        return ""
    if degrees < 20 or degrees >= 330:
        return "triggered"
    if degrees < 65:
        return "acknowledged"
    return "resolved" if 75 <= degrees < 170 else ""
