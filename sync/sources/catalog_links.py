"""Where a catalog descriptor opens, as its annotations say: Backstage's own `backstage.io/view-url`,
else `backstage.io/source-location` when it names a folder at a ref (`url:https://…/tree/main/`)
joined with the document's path under the catalog root; else, where ONCALL_GRAPH_BACKSTAGE_URL is
set, the entity's page there. Only http(s) URLs are kept; the renderers check again where they link."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

VIEW_URL = "backstage.io/view-url"
SOURCE_LOCATION = "backstage.io/source-location"
_WEB = ("https://", "http://")
# A folder at a ref, as GitHub (`/tree/main/`), GitLab (`/-/tree/main/`) and Bitbucket (`/src/main/`)
# browse one: only such a location has files under it. A repository's root URL names no ref, and a
# path joined to it opens nothing (a catalog folder describing many repositories says so for each).
_FOLDER_AT_REF = re.compile(r"/(?:-/)?(?:tree|blob|src)/[^/]+")


def descriptor_url(annotations: Mapping[str, str], relative: str | None) -> str:
    """The descriptor's file URL, or "". `relative`: the document's file under the catalog root
    (None where the catalog root is no folder of files, a catalog API's answer)."""
    view = annotations.get(VIEW_URL, "").strip()
    if view.startswith(_WEB):
        return view
    target = annotations.get(SOURCE_LOCATION, "").strip()
    folder = target[4:] if target.startswith("url:") else ""
    if relative and folder.startswith(_WEB) and _FOLDER_AT_REF.search(folder):
        return _joined(folder.rstrip("/"), relative)
    return ""


def _joined(folder: str, relative: str) -> str:
    """`relative` under `folder`, less the folders the location already ends with: Backstage writes a
    descriptor's own folder as its source location (`…/tree/main/payments/` for
    `payments/catalog-info.yaml` under the catalog root), which the path under the root repeats."""
    parts = relative.split("/")
    for cut in range(len(parts) - 1, 0, -1):
        if folder.endswith("/" + "/".join(parts[:cut])):
            return f"{folder}/{'/'.join(parts[cut:])}"
    return f"{folder}/{relative}"


def entity_page(base: str, namespace: str, kind: str, name: str) -> str:
    """The entity's page in the Backstage app at `base` (its catalog plugin's route,
    `/catalog/:namespace/:kind/:name`, kind and namespace lower-case as Backstage links them); ""
    without a base."""
    if not base:
        return ""
    parts = (namespace.lower(), kind.lower(), name)
    return f"{base}/catalog/" + "/".join(quote(part, safe="") for part in parts)


def catalog_root(location: str) -> str:
    """The prefix of a local catalog's locators that stands for its root (`catalog_walk` names files
    so): a folder's own name, or a file's folder as written."""
    path = Path(location)
    if path.is_dir():
        name = path.resolve().name
        return f"{name}/" if name else ""
    folder = os.path.dirname(location)
    return f"{os.path.normpath(folder)}/" if folder else ""


def relative_path(locator: str, root: str) -> str:
    """`catalog/teams/payments.yaml#3` under `catalog/` is `teams/payments.yaml`; "" outside the root."""
    file = locator.rpartition("#")[0] or locator
    if not file.startswith(root):
        return ""
    relative = file[len(root) :]
    return "" if relative.startswith(("../", "/")) else relative
