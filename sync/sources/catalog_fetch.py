"""Backstage catalog I/O: descriptor files, folders or the catalog API, read into (locator, document) pairs.

`fetch_catalog_documents` raises when the catalog cannot be had at all; a body or file that is
not what a catalog holds becomes a `Problem`, and the rest is kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx

from graph.facts import Problem
from graph.naming.refs import RefError, format_ref, split_ref
from sync.sources.catalog_locations import follow_locations, unfollowed_targets
from sync.sources.reading.folder_walk import walk_folder
from sync.sources.reading.shown import shown
from sync.sources.reading.textfiles import FetchError, display_name
from sync.sources.reading.yaml_documents import YamlDocuments, load_yaml, load_yaml_files
from sync.sources.versions import files_version

API_PATH = "/api/catalog/entities"
CATALOG_SUFFIXES = (".yaml", ".yml", ".json")
# Where an API entity was defined, most precise first.
_LOCATION_ANNOTATIONS = ("backstage.io/managed-by-location", "backstage.io/managed-by-origin-location")


@dataclass(frozen=True, slots=True)
class CatalogDocuments:
    """Fetched documents as (locator, document), and what was wrong with the files."""

    documents: tuple[tuple[str, object], ...] = ()
    problems: tuple[Problem, ...] = ()
    from_api: bool = False  # the catalog API's entities (a URL's JSON), not descriptor files


def bearer_headers(token: str) -> dict[str, str]:
    """The Authorization header for a Backstage static token; none for an empty token."""
    # Tokens pasted into .env or a secret file often carry a trailing newline, which httpx refuses.
    token = token.strip()
    return {"Authorization": f"Bearer {token}"} if token else {}


def fetch_catalog_documents(
    location: str, *, timeout: float = 30.0, headers: Mapping[str, str] | None = None
) -> CatalogDocuments:
    """Documents of a file, a folder (recursively, sorted) or a catalog API URL.

    `headers` go only to a URL. Raises FileNotFoundError for a missing path and httpx errors when
    the HTTP request fails; a body that is not a JSON array of entities is a problem.
    """
    if is_catalog_url(location):
        return _fetch_url(location, timeout, headers or {})
    files, refused = catalog_walk(location)
    if not files:
        none = Problem(location, "no *.yaml, *.yml or *.json files found", "", "error")
        return CatalogDocuments(problems=(*refused, none))
    documents = _numbered(load_yaml_files(files))
    return CatalogDocuments(documents.documents, refused + documents.problems)


def is_catalog_url(location: str) -> bool:
    return urlsplit(location).scheme in ("http", "https")


def catalog_files(location: str) -> list[tuple[Path, str]]:
    """(path, name in locators) of the descriptor files of a local file or folder (recursively, sorted).

    Raises FileNotFoundError for a missing path.
    """
    return catalog_walk(location)[0]


def catalog_walk(location: str) -> tuple[list[tuple[Path, str]], tuple[Problem, ...]]:
    """`catalog_files`, and the symlinks refused on the way (out of the folder, loops) as problems.

    The files that `kind: Location` entities name are added after the walk's (`catalog_locations`),
    with what their targets did not read as problems.
    """
    path = Path(location)
    if path.is_dir():
        files, refused = _catalog_files(path)
        prefix = path.resolve().name

        def named(found: Path) -> str:
            relative = found.relative_to(path.resolve()).as_posix()
            return f"{prefix}/{relative}" if prefix else relative

        root = path
    elif path.is_file():
        files, refused = [(path, location)], ()

        def named(found: Path) -> str:
            # Beside the source file, named as it is: `examples/all.yaml` -> `examples/components/a.yaml`.
            return os.path.normpath(os.path.join(os.path.dirname(location), found.relative_to(root.resolve())))

        root = path.parent
    else:
        raise FileNotFoundError(f"catalog {shown(location)}: no such file or folder")
    followed = follow_locations(files, root, named)
    return files + followed.files, refused + followed.problems


def catalog_version(location: str) -> str:
    """The content version of a local catalog: the files the walk finds and those its Locations name
    (a catalog file whose Location names `./components/*.yaml` changes when one of those does), and
    what the walk and the Locations did not read."""
    try:
        files, refused = catalog_walk(location)
        return files_version([(name, path) for path, name in files], refused)
    except OSError as exc:
        raise FetchError(f"cannot read {location}: {exc.strerror or exc}") from exc


def _catalog_files(folder: Path) -> tuple[list[tuple[Path, str]], tuple[Problem, ...]]:
    # Locators are relative to the folder's parent (`catalog/payments.yaml`); hidden folders such
    # as .git and .github hold no descriptors, only YAML that is not a catalog, and node_modules
    # only JSON that is none. `*.json` files are saved catalog API responses.
    prefix = folder.resolve().name

    def named(relative: str) -> str:
        return f"{prefix}/{relative}" if prefix else relative

    walked = walk_folder(folder, _is_descriptor_file, _is_skipped_folder, named)
    found = sorted((named(relative), path) for relative, path in walked.files)
    return [(path, name) for name, path in found], walked.problems


def _is_descriptor_file(name: str) -> bool:
    return not name.startswith(".") and name.lower().endswith(CATALOG_SUFFIXES)


def _is_skipped_folder(name: str) -> bool:
    return name.startswith(".") or name == "node_modules"


def _numbered(files: Iterable[YamlDocuments]) -> CatalogDocuments:
    documents = tuple((f"{file.name}#{index}", doc) for file in files for index, doc in file.documents)
    return CatalogDocuments(documents, tuple(p for file in files for p in file.problems))


def catalog_api_url(location: str) -> str:
    """The URL to GET: a bare `http(s)://host` means that host's `/api/catalog/entities`."""
    parts = urlsplit(location)
    return urlunsplit(parts._replace(path=API_PATH)) if parts.path in ("", "/") else location


def _fetch_url(location: str, timeout: float, headers: Mapping[str, str]) -> CatalogDocuments:
    url = catalog_api_url(location)
    response = httpx.get(url, timeout=timeout, follow_redirects=True, headers={"Accept": "application/json", **headers})
    response.raise_for_status()
    return parse_catalog_body(display_name(url), response.text)


def parse_catalog_body(name: str, body: str) -> CatalogDocuments:
    """Documents of a fetched body: a JSON array of entities (or `{"items": [...]}`), YAML for .yaml/.yml."""
    if urlsplit(name).path.lower().endswith((".yaml", ".yml")):
        read = _numbered([load_yaml(body, name)])
        reason = "a catalog read from a URL follows no Location; give its targets as --catalog sources"
        unfollowed = (p for where, doc in read.documents for p in unfollowed_targets(where, doc, reason))
        return CatalogDocuments(read.documents, read.problems + tuple(unfollowed))
    try:
        entities = json.loads(body)
    except ValueError as exc:
        return CatalogDocuments(problems=(Problem(name, f"the catalog API answered with no JSON: {exc}", "", "error"),))
    if isinstance(entities, Mapping) and isinstance(entities.get("items"), list):
        entities = entities["items"]  # the paginated `by-query` endpoint
    if not isinstance(entities, list):
        message = f"the catalog API answered with a JSON {type(entities).__name__}, not an array of entities"
        return CatalogDocuments(problems=(Problem(name, message, "", "error"),))
    documents = tuple((_api_locator(index, entity), entity) for index, entity in enumerate(entities))
    return CatalogDocuments(documents, from_api=True)


def entity_list(document: object) -> list[object] | None:
    """The entities of a saved catalog API response: a JSON array, or `{"items": [...]}` as
    `/entities/by-query` answers; None for anything else (a descriptor)."""
    if type(document) is dict and "kind" in document:
        return None  # a descriptor, as nearly every document is: no ABC checks for it
    if isinstance(document, Mapping) and isinstance(document.get("items"), list) and "kind" not in document:
        document = document["items"]
    if isinstance(document, list) and document and all(isinstance(item, Mapping) for item in document):
        return document
    return None


def entity_documents(documents: Iterable[tuple[str, object]]) -> Iterator[tuple[str, object, bool]]:
    """(locator, document, from the API) with each catalog API response in a file replaced by its entities.

    A file's response is cited as the API's would be (the entity's managed-by location, when it
    says one), else as `entities.json#component:default/name`: files and URLs read the same bytes
    the same way. Every document of a `.json` file is taken as the API's (a saved response: one
    entity, as `/entities/by-name/...` answers, or many).
    """
    for locator, document in documents:
        entities = entity_list(document)
        if entities is None:
            yield locator, document, locator.rsplit("#", 1)[0].lower().endswith(".json")
            continue
        file = locator.rsplit("#", 1)[0]
        for index, entity in enumerate(entities):
            cited = _api_locator(index, entity)
            yield (cited if "#" in cited else f"{file}#{cited}"), entity, True


def _api_locator(index: int, entity: object) -> str:
    if not isinstance(entity, Mapping) or not isinstance(entity.get("metadata"), Mapping):
        return f"entity[{index}]"
    metadata = entity["metadata"]
    try:
        ref = format_ref(*split_ref({**metadata, "kind": entity.get("kind")}))
    except (RefError, AttributeError):
        ref = f"entity[{index}]"
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        for key in _LOCATION_ANNOTATIONS:
            if isinstance(annotations.get(key), str):
                return f"{annotations[key]}#{ref}"
    return ref
