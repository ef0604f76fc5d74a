"""One GET within the read's bounds: the byte cap and the total deadline of `limits`, whatever
the status, so an API's error answer is read (for its message) under the same limits as its data."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx

from sync.sources.reading.limits import current_limits, too_big_message
from sync.sources.reading.shown import shown
from sync.sources.reading.textfiles import FetchError, display_name


@dataclass(frozen=True, slots=True)
class Answer:
    """A server's whole answer: its status, and its body as bytes (read within the limits)."""

    status: int
    reason: str
    body: bytes


def bounded_get(
    url: str, *, params: Mapping[str, str | Sequence[str]], headers: Mapping[str, str], timeout: float
) -> Answer:
    """GET `url` (a parameter given a list is sent once per value: `statuses[]=a&statuses[]=b`);
    raises FetchError naming it (never its credentials or query) when no answer came whole:
    refused, timed out, over the byte cap, past the read's deadline."""
    name = display_name(url)
    limits = current_limits()
    deadline = time.monotonic() + limits.deadline_seconds
    try:
        with (
            httpx.Client(timeout=min(timeout, limits.deadline_seconds), follow_redirects=True) as client,
            client.stream("GET", url, params=params, headers=headers) as response,
        ):
            body = bounded_body(response, name, deadline, limits.max_file_bytes, limits.deadline_seconds)
            return Answer(response.status_code, response.reason_phrase, body)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise FetchError(f"GET {name}: {type(exc).__name__}: {str(exc) or 'no detail'}") from exc


def bounded_body(response: httpx.Response, name: str, deadline: float, max_bytes: int, seconds: float) -> bytes:
    """The body, cut at the byte cap and the read's total deadline: the per-read timeout alone lets a
    server that drips a byte a second hold the read (and every sync behind it) for ever."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchError(f"GET {name}: body {too_big_message(int(declared), max_bytes)}")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise FetchError(f"GET {name}: body {too_big_message(size, max_bytes)}")
        if time.monotonic() > deadline:
            raise FetchError(f"GET {name}: body not received within the read deadline of {seconds:g} s")
        chunks.append(chunk)
    return b"".join(chunks)


def api_endpoint(location: str, path: str, reserved: Collection[str]) -> tuple[str, dict[str, str]]:
    """The URL of an API's `path` under a base URL that may carry a path prefix (`/prometheus`
    behind Mimir or Grafana), and the base's own query parameters but those the reader sets.

    The whole endpoint pasted as the base is taken as it is. Raises ValueError for anything but an
    http(s) URL with a host.
    """
    parts = urlsplit(location.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{shown(display_name(location))} is not an http(s) URL")
    base = parts.path.rstrip("/").removesuffix(f"/{path}")
    params = {key: value for key, value in parse_qsl(parts.query, keep_blank_values=True) if key not in reserved}
    return urlunsplit((parts.scheme, parts.netloc, f"{base}/{path}", "", "")), params


def json_answer(
    name: str, answer: Answer, error: type[FetchError], *, api: str, token_setting: str, told: Callable[[object], str]
) -> object:
    """The answer's JSON when it succeeded; otherwise raises `error` saying what went wrong as the API
    said it: `told` reads the API's own error message from a decoded body ("" when it holds none,
    and a body with one is a failure whatever its status)."""
    try:
        body: object = json.loads(answer.body)
    except ValueError:
        body = None
    said = f"GET {name}: HTTP {answer.status} {answer.reason}".rstrip()
    message = _cut(told(body))
    detail = f": {message}" if message else ""
    if answer.status in (401, 403):
        raise error(f"{said}: the token was refused ({token_setting}){detail}")
    if answer.status == 404:
        raise error(f"{said}: nothing answers as {api} there; does the URL need a path prefix?{detail}")
    if answer.status >= 400 or message:
        raise error(f"{said}{detail}")
    if body is None:
        raise error(f"GET {name}: the answer is not JSON; is this {api}?")
    return body


def _cut(text: str, most: int = 300) -> str:
    """A server's own message, kept to a few lines in ours."""
    return text if len(text) <= most else text[: most - 3] + "..."
