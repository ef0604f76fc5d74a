"""The problems stored with each source's applied read, counted and the first few decoded: what the
lag fronts show (`oncall-graph lag`, /graph-lag, the MCP lag tool, `/metrics`).

Read at every /metrics scrape, so a catalog with thousands of warnings is counted in SQL and only
its first rows are decoded.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from graph.health.source_problems import SourceProblems, gather
from sync.store import schema
from sync.store.fact_codec import PROBLEM, FactDecoder

PROBLEMS_DECODED = 2000  # per source; the rest are counted (notes among them counted as problems)


def live_problems(conn: Connection) -> dict[str, SourceProblems]:
    """Each source with problems in its live facts -> those problems, counted, errors first."""
    f = schema.facts
    live = (f.c.kind == PROBLEM, f.c.valid_to.is_(None))
    counts = conn.execute(select(f.c.source, func.count()).where(*live).group_by(f.c.source)).all()
    found = {}
    for source, count in counts:
        query = select(f.c.kind, f.c.payload).where(f.c.source == source, *live).order_by(f.c.id)
        decoder = FactDecoder(source)
        decoder.add((kind, payload) for kind, payload in conn.execute(query.limit(PROBLEMS_DECODED)))
        problems = decoder.facts().problems
        found[source] = gather(problems, unread=max(int(count) - len(problems), 0))
    return found
