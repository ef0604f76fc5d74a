"""Open PagerDuty incidents (REST API v2), read at answer time: `GET /incidents` with the statuses
`triggered` and `acknowledged`, paged by `limit` and `offset` while the answer says `more`.

Never a source of facts: an incident is as old as the answer that shows it. Each incident names its
service; `graph.traffic.live.present` maps the service to the entity carrying `pagerduty.com/service-id`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from graph.traffic.live import Incident
from sync.sources.pagerduty import ACCEPT, PAGE_SIZE, PagerDutyError, error_text
from sync.sources.reading.bounded_http import bounded_get, json_answer
from sync.sources.reading.textfiles import display_name

OPEN_STATUSES = ("triggered", "acknowledged")
MAX_PAGES = 10  # a thousand open incidents: past that, no answer needs more of them
TOKEN = "PAGERDUTY_API_TOKEN"
API = "the PagerDuty REST API"


def fetch_open_incidents(base_url: str, *, token: str, timeout: float) -> tuple[Incident, ...]:
    """Every open incident, newest pages last, within `timeout` seconds in all.

    Raises PagerDutyError when the API cannot be read: refused token, an error answer, not JSON,
    out of time between pages."""
    if not token.strip():
        raise PagerDutyError(f"no PagerDuty API token ({TOKEN})")
    url = f"{base_url.rstrip('/')}/incidents"
    headers = {"Accept": ACCEPT, "Authorization": f"Token token={token.strip()}"}
    deadline = time.monotonic() + timeout
    found: list[Incident] = []
    offset = 0
    for _ in range(MAX_PAGES):
        left = deadline - time.monotonic()
        if left <= 0:
            raise PagerDutyError(f"GET {display_name(url)}: not every page within {timeout:g} s")
        params = {"statuses[]": OPEN_STATUSES, "limit": str(PAGE_SIZE), "offset": str(offset)}
        answer = bounded_get(url, params=params, headers=headers, timeout=left)
        body = json_answer(display_name(url), answer, PagerDutyError, api=API, token_setting=TOKEN, told=error_text)
        items = body.get("incidents") if isinstance(body, Mapping) else None
        if not isinstance(items, list):
            raise PagerDutyError(f"GET {display_name(url)}: expected an object with an incidents array")
        found += (incident for item in items if (incident := parse_incident(item)) is not None)
        if not isinstance(body, Mapping) or body.get("more") is not True or not items:
            break
        offset += len(items)
    return tuple(found)


def parse_incident(item: object) -> Incident | None:
    """One incident of the list, or None when it lacks what a line needs (number, service, status)."""
    if not isinstance(item, Mapping):
        return None
    number, status, service = item.get("incident_number"), item.get("status"), item.get("service")
    service_id = service.get("id") if isinstance(service, Mapping) else None
    if isinstance(number, bool) or not isinstance(number, int) or status not in OPEN_STATUSES:
        return None
    if not isinstance(service_id, str) or not service_id.strip():
        return None
    title = item.get("title") if isinstance(item.get("title"), str) else item.get("summary")
    url = item.get("html_url")
    return Incident(
        number,
        " ".join(title.split()) if isinstance(title, str) else "",
        url if isinstance(url, str) else "",
        status,
        service_id.strip(),
    )
