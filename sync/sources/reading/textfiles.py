"""Read a source's text from a local file or an http(s) URL, failing with one clear error."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx

DEFAULT_TIMEOUT = 10.0


class FetchError(OSError):
    """A source could not be read at all (missing file, not UTF-8, HTTP error, timeout)."""


@dataclass(frozen=True, slots=True)
class FetchedText:
    """The text of one source; `name` is what problems and citations call it.

    For a URL the name drops credentials and the query string, which often carry tokens.
    """

    name: str
    text: str


def is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


def display_name(location: str) -> str:
    if not is_url(location):
        return location
    parts = urlsplit(location)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def fetch_text(
    location: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    accept: str = "*/*",
    transport: httpx.BaseTransport | None = None,
) -> FetchedText:
    """The whole text at `location`; raises FetchError naming it when it cannot be read."""
    if is_url(location):
        return _fetch_url(location, timeout=timeout, accept=accept, transport=transport)
    return _read_file(location)


def _read_file(location: str) -> FetchedText:
    try:
        # utf-8-sig: files saved by some Windows editors start with a byte-order mark
        text = Path(location).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FetchError(f"cannot read {location}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise FetchError(f"cannot read {location}: {exc.strerror or exc}") from exc
    return FetchedText(location, text)


def _fetch_url(url: str, *, timeout: float, accept: str, transport: httpx.BaseTransport | None) -> FetchedText:
    name = display_name(url)
    try:
        with httpx.Client(timeout=timeout, follow_redirects=True, transport=transport) as client:
            response = client.get(url, headers={"Accept": accept})
            response.raise_for_status()
            return FetchedText(name, response.text)
    except httpx.HTTPStatusError as exc:
        status = exc.response
        raise FetchError(f"GET {name}: HTTP {status.status_code} {status.reason_phrase}") from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise FetchError(f"GET {name}: {type(exc).__name__}: {str(exc) or 'no detail'}") from exc
