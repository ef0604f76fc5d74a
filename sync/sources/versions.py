"""Content versions, so a source unchanged since its last success is not parsed again.

Local files and folders: a hash of names and contents. URLs: the server's ETag or Last-Modified,
asked for with a conditional GET (a 304 costs no parsing), else a hash of the body.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from graph.facts import Problem
from sync.sources.reading.bounded_http import bounded_body
from sync.sources.reading.folder_walk import walk_folder
from sync.sources.reading.limits import current_limits
from sync.sources.reading.textfiles import FetchError, display_name

_CHUNK = 1 << 20


def local_version(location: str) -> str:
    """`sha:<hex>` over every non-hidden file under `location`; raises FetchError when missing."""
    path = Path(location)
    if not path.exists():
        raise FetchError(f"cannot read {location}: no such file or folder")
    if path.is_file():
        return files_version([(path.name, path)])
    # The same walk the readers make: symlinks inside the folder followed once, loops and links out not.
    walked = walk_folder(path, _not_hidden, _hidden_name, str)
    return files_version(sorted(walked.files), walked.problems)


def files_version(files: Sequence[tuple[str, Path]], refused: Sequence[Problem] = ()) -> str:
    """`sha:<hex>` over (name, path) files, names and contents, in the order given, and what the walk
    refused (a symlink loop or a link out added is a change: the read that says so must happen)."""
    digest = hashlib.blake2b(digest_size=20)
    for name, file in files:
        digest.update(name.encode() + b"\0")
        with file.open("rb") as handle:
            while block := handle.read(_CHUNK):
                digest.update(block)
        digest.update(b"\0")
    for problem in sorted(refused, key=str):
        digest.update(b"refused\0" + str(problem).encode() + b"\0")
    return f"sha:{digest.hexdigest()}"


def _hidden_name(name: str) -> bool:
    return name.startswith(".")


def _not_hidden(name: str) -> bool:
    return not name.startswith(".")


def body_version(body: bytes) -> str:
    return f"sha:{hashlib.blake2b(body, digest_size=20).hexdigest()}"


@dataclass(frozen=True, slots=True)
class Fetched:
    """A URL's body and its version; `body` is None when the server said 304 Not Modified."""

    name: str
    body: str | None
    version: str


def fetch_if_changed(
    url: str, previous: str, *, timeout: float, accept: str = "*/*", headers: Mapping[str, str] | None = None
) -> Fetched:
    """Conditional GET against the previous version; raises FetchError on any failure."""
    name = display_name(url)
    headers = {"Accept": accept, **(headers or {})}
    if previous.startswith("etag:"):
        headers["If-None-Match"] = previous[5:]
    elif previous.startswith("modified:"):
        headers["If-Modified-Since"] = previous[9:]
    limits = current_limits()
    deadline = time.monotonic() + limits.deadline_seconds
    try:
        with (
            httpx.Client(timeout=min(timeout, limits.deadline_seconds), follow_redirects=True) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            if response.status_code == 304:
                return Fetched(name, None, previous)
            if response.status_code >= 400:
                raise FetchError(f"GET {name}: HTTP {response.status_code} {response.reason_phrase}")
            content = bounded_body(response, name, deadline, limits.max_file_bytes, limits.deadline_seconds)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise FetchError(f"GET {name}: {type(exc).__name__}: {str(exc) or 'no detail'}") from exc
    try:
        body = content.decode(response.encoding or "utf-8")
    except (UnicodeDecodeError, LookupError) as exc:
        raise FetchError(f"GET {name}: body is not text ({exc})") from exc
    if etag := response.headers.get("ETag"):
        version = f"etag:{etag}"
    elif modified := response.headers.get("Last-Modified"):
        version = f"modified:{modified}"
    else:
        version = body_version(content)
    return Fetched(name, None if version == previous else body, version)
