"""Answers as the JSON shapes of the contract (`--json`). Pure: values in, dicts out."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from bot.render.freshness import Freshness
from bot.render.links import web_url
from graph.coverage import DEPENDENCIES, DEPENDENTS, Coverage, nothing_found
from graph.edges import EdgeFacts
from graph.exposure.passages import CitedPassage
from graph.facts import Problem
from graph.health.freshness import OVERDUE, LagReport, SourceLag
from graph.health.hygiene import LintReport
from graph.health.source_problems import SourceProblems, place
from graph.naming.names import Resolution
from graph.questions.ask import Answer, Section
from graph.traffic.drift import Drift
from graph.traffic.live import NOTHING, Incident, LiveBlast, LiveMark, Present
from graph.walks.blast import BlastRadius
from graph.walks.paths import CitedPath
from graph.walks.suspects import SuspectDeploy, Suspects

Json = dict[str, Any]


def edge_json(edge: EdgeFacts) -> Json:
    sources = _opens(edge)
    data: Json = {
        "src": edge.src,
        "rel": edge.rel,
        "dst": edge.dst,
        "weight": edge.weight,
        "sources": list(sources),
        # Beside `sources`, one per source in the same order: where it opens (null: no http(s) URL known).
        "citations": [{"source": source, "url": web_url(url) if url else None} for source, url in sources.items()],
        "extracted": edge.extracted,
        "soft": edge.soft,
        "declared": edge.declared,
        "observed": edge.observed,
    }
    if edge.via:
        data["via"] = list(edge.via)
    return data


def _opens(edge: EdgeFacts) -> dict[str, str]:
    """`graph.citations.cited_sources` as locator -> URL, written out: `--json` at 100k entities
    renders half a million edges, and the receipts as objects cost four times the edge."""
    urls: dict[str, str] = {}
    for c in edge.citations:
        if not urls.get(c.locator):
            urls[c.locator] = c.url
    return urls


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def graph_json(freshness: Freshness) -> Json:
    """The graph an answer came from; `stale` and `warnings` name the sources it must not be trusted on."""
    oldest = freshness.oldest
    return {
        "built_at": _iso(freshness.built_at),
        "entities": freshness.entities,
        "edges": freshness.edges,
        "oldest_source": oldest.name if oldest else None,
        "age_seconds": freshness.age_seconds,
        "stale": freshness.stale,
        "warnings": list(freshness.warnings),
    }


def unresolved_json(query: str, resolution: Resolution) -> Json:
    return {
        "query": query,
        "entity": None,
        "suggestions": list(resolution.suggestions),
        "candidates": list(resolution.candidates),
    }


def blast_json(query: str, result: BlastRadius, live: Present = NOTHING) -> Json:
    """With a live part, entities failing now come first and every entry says how its hop is doing."""
    shown = LiveBlast(result, live)
    impacted = shown.first(result.impacted_count) if live.configured else result.impacted
    data = {
        "query": query,
        "entity": result.failed,
        "suggestions": [],
        "max_depth": result.max_depth,
        "impacted": [
            {
                "entity": i.entity,
                "hops": i.hops,
                "impact": i.impact,
                "path": list(i.path),
                "edges": [edge_json(e) for e in i.edges],
                "owners": list(i.owners),
            }
            | live_entry_json(live, shown.mark(i), i.entity)
            for i in impacted
        ],
        "systems": [{"entity": s.entity, "impacted": s.impacted, "total": s.total} for s in result.systems],
        "survives": list(result.survives),
        "coverage": coverage_json(result.coverage),
        # What an answer that finds nothing knows: "nothing breaks" is never said with more confidence than that.
        "note": nothing_found(result.failed, DEPENDENTS, result.coverage) if not result.impacted else None,
    }
    return data | ({"live": live_json(live, shown.failing)} if live.configured else {})


def live_json(live: Present, failing: int | None = None) -> Json:
    """Where the live part came from, when, over what window, why it is missing (`error`), and how
    many of the entries are failing now (null where the entries are a question's sections)."""
    reading = live.reading
    incidents = {"source": live.incidents_from, "error": live.incidents_error or None} if live.incidents_from else None
    return {
        "source": reading.source if reading else None,
        "at": _iso(reading.at) if reading else None,
        "window": reading.window if reading else None,
        "window_seconds": reading.window_seconds if reading else None,
        "error": (reading.error or None) if reading else None,
        "failing": failing,
        "incidents": incidents,
        "said": live.said(),
    }


def live_entry_json(live: Present, mark: LiveMark | None, ref: str) -> Json:
    """An impacted or dependency entry's `live` (null: its hop was not seen, or nothing was read) and,
    with incidents asked for, its open `incidents`; nothing without a live part."""
    if not live.configured:
        return {}
    entry: Json = {"live": mark_json(mark) if mark is not None else None}
    if live.incidents_from:
        entry["incidents"] = [incident_json(i) for i in live.open_incidents(ref)]
    return entry


def mark_json(mark: LiveMark) -> Json:
    return {
        "failed_share": round(mark.failed_share, 4),
        "calls": mark.calls,
        "failed": mark.failed,
        "failing": mark.failing,
        "edge": edge_json(mark.edge),
        "at": _iso(mark.at),
    }


def incident_json(incident: Incident) -> Json:
    return {
        "number": incident.number,
        "title": incident.title,
        "url": incident.url,
        "status": incident.status,
        "service_id": incident.service_id,
    }


def coverage_json(found: Coverage | None) -> Json | None:
    """How much the graph can know: components, how many declare dependencies, how many had traffic."""
    if found is None:
        return None
    return {
        "components": found.components,
        "declaring_dependencies": found.declaring_dependencies,
        "with_observed_traffic": found.with_observed_traffic,
        "trace_sources": list(found.trace_sources),
    }


def _deploy_json(suspect: SuspectDeploy) -> Json:
    d = suspect.deploy
    return {
        "id": d.id,
        "version": d.version,
        "ref": d.git_ref,  # the branch or tag beside a commit's short sha
        "repository": d.repository,
        "deployed_at": _iso(d.deployed_at),
        "url": d.url,
        "environment": d.environment,
        "actor": d.actor,
        "reason": suspect.reason,
        "suspect": True,
        "sources": [d.citation.locator],
        "citations": [{"source": d.citation.locator, "url": web_url(d.url)}],
    }


def suspects_json(query: str, result: Suspects, live: Present = NOTHING) -> Json:
    """`result` as the query layer ranked it: with a live part, dependencies failing now first."""
    marks = [live.mark(d.edges, d.entity) for d in result.dependencies]
    data = {
        "query": query,
        "entity": result.entity,
        "suggestions": [],
        "since": _iso(result.since),
        "now": _iso(result.now),
        "dependencies": [
            {
                "entity": d.entity,
                "hops": d.hops,
                "path": list(d.path),
                "edges": [edge_json(e) for e in d.edges],
                "owners": list(d.owners),
                "deploys": [_deploy_json(s) for s in d.deploys],
            }
            | live_entry_json(live, mark, d.entity)
            for d, mark in zip(result.dependencies, marks, strict=True)
        ],
        "own_deploys": [_deploy_json(s) for s in result.own_deploys],
        "coverage": coverage_json(result.coverage),
        "note": nothing_found(result.entity, DEPENDENCIES, result.coverage) if not result.dependencies else None,
    }
    failing = sum(1 for mark in marks if mark is not None and mark.failing)
    return data | ({"live": live_json(live, failing)} if live.configured else {})


def passages_json(passages: Sequence[CitedPassage]) -> list[Json]:
    """The runbook passages quoted beside an answer (the `passages` key)."""
    return [
        {
            "locator": c.locator,
            "entity": c.entity,
            "text": c.text,
            "document": c.passage.document,
            "heading": c.passage.heading,
            "line": c.passage.line,
        }
        for c in passages
    ]


def path_json(result: CitedPath) -> Json:
    return {
        "from": result.src,
        "to": result.dst,
        "path": list(result.path),
        "edges": [edge_json(e) for e in result.edges],
    }


def resolve_json(resolution: Resolution) -> Json:
    return {
        "query": resolution.query,
        "entity": resolution.entity,
        "suggestions": list(resolution.suggestions),
        "candidates": list(resolution.candidates),
        "matched_by": resolution.matched_by,
    }


def ask_json(answer: Answer) -> Json:
    return {
        "question": answer.question,
        "intent": answer.intent,
        "entities": list(answer.entities),
        "mentions": [{"text": m.text, "entity": m.entity, "candidates": list(m.candidates)} for m in answer.mentions],
        "answer": "\n".join(answer.sentences),
        "cited": list(answer.cited_lines),
        "edges": [edge_json(e) for e in answer.edges],
        "asks": [{"kind": a.kind, "entities": list(a.entities), "window_hours": _hours(a.window)} for a in answer.asks],
        "notes": list(answer.notes),
        "sections": [section_json(s) for s in answer.sections],
    }


def section_json(section: Section) -> Json:
    """One ask's answer for one entity (two for a path, none for the whole graph), as the fronts show it."""
    return {
        "kind": section.kind,
        "title": section.title,
        "entities": list(section.entities),
        "window_hours": _hours(section.window),
        "lines": list(section.lines),
        "cited": list(section.cited_lines),
        "edges": [edge_json(e) for e in section.edges],
    }


def _hours(window: timedelta | None) -> float | None:
    return window.total_seconds() / 3600 if window is not None else None


def lint_json(report: LintReport) -> Json:
    return {
        "clean": report.clean,
        "dangling_refs": [str(p) for p in report.dangling],
        "kindless_refs": [str(p) for p in report.kindless],
        "unknown_owners": [str(p) for p in report.unknown_owners],
        "alias_collisions": [{"key": c.key, "tier": c.tier, "entities": list(c.refs)} for c in report.alias_collisions],
        "without_owner": [str(p) for p in report.without_owner],
        "unresolved_deploys": [str(p) for p in report.unresolved_deploys],
        "input_problems": [str(p) for p in report.input_problems],
        "not_descriptors": [p.where for p in report.not_descriptors],
        "failed_sources": [{"name": m.name, "error": m.last_error} for m in report.failed_sources],
        "drift": _drift_counts(report.drift),
    }


def _drift_counts(found: Drift | None) -> Json | None:
    """Lint's line on drift: how many of each (`oncall-graph drift --json` lists them)."""
    if found is None:
        return None
    undeclared, unobserved, unknown = found.totals
    return {
        "undeclared": undeclared,
        "unobserved": unobserved,
        "unknown_services": unknown,
        "coverage": coverage_json(found.coverage),
    }


def drift_json(report: Drift) -> Json:
    """`oncall-graph drift --json` and the MCP drift tool, in the contract's shape."""
    return {
        "undeclared": [
            {"src": u.edge.src, "dst": u.edge.dst, "rel": u.edge.rel, "calls": u.calls, "sources": list(u.edge.sources)}
            for u in report.undeclared
        ],
        "unobserved": [
            {"src": e.src, "dst": e.dst, "rel": e.rel, "sources": list(e.sources)} for e in report.unobserved
        ],
        "unknown_services": [
            {"name": u.name, "calls": u.calls, "side": u.side, "sources": list(u.sources)}
            for u in report.unknown_services
        ],
        "coverage": coverage_json(report.coverage),
        "totals": dict(zip(("undeclared", "unobserved", "unknown_services"), report.totals, strict=True)),
        "limit": report.limit,
    }


def lag_json(report: LagReport) -> Json:
    """`oncall-graph lag --json` and the MCP lag tool: each source judged, then those configured that never
    synced. Times as Python writes them (`+00:00`), as this report always has.

    `problems` are a held change's; `read_problems` those of the applied read (bounded: `shown`, and
    `more` not shown); `never_synced` marks a source with nothing applied yet (its `last_error` says why
    when the first attempt failed)."""
    sources = [_source_lag_json(s) for s in report.sources] + [
        {"name": n, "last_success": None, "last_error": "never synced", "age_seconds": None, "stale": True,
         "state": OVERDUE, "threshold_seconds": None, "held": "", "problems": [], "never_synced": True,
         "read_problems": read_problems_json(None)}
        for n in report.never_synced
    ]  # fmt: skip
    return {"sources": sources, "stale": report.stale}


def read_problems_json(found: SourceProblems | None) -> Json:
    if found is None:
        return {"total": 0, "errors": 0, "skipped": 0, "more": 0, "shown": []}
    return {"total": found.total, "errors": found.errors, "skipped": found.skipped, "more": found.more,
            "shown": [problem_json(p) for p in found.shown]}  # fmt: skip


def problem_json(problem: Problem) -> Json:
    at = place(problem.where)
    return {"where": problem.where, "file": at.file, "line": at.line, "document": at.document,
            "field": problem.field, "severity": problem.severity, "message": problem.message}  # fmt: skip


def _source_lag_json(s: SourceLag) -> Json:
    judged: Json = {"name": s.name, "last_success": _isoformat(s.last_success), "last_error": s.last_error,
                    "age_seconds": s.age_seconds, "stale": not s.ok, "state": s.state,
                    "threshold_seconds": s.threshold_seconds, "held": s.held_reason,
                    "problems": list(s.problems), "never_synced": s.never_synced,
                    "read_problems": read_problems_json(s.read_problems)}  # fmt: skip
    if s.pushed:
        refused = {"at": _isoformat(s.last_refused_at), "why": s.last_refused} if s.last_refused else None
        seen = s.unproven
        unproven = {"count": seen.count, "at": _isoformat(seen.last_at), "why": seen.last_why} if seen else None
        judged |= {"pushed": True, "last_event": _isoformat(s.last_success), "last_refused": refused,
                   "refused_unauthenticated": unproven}  # fmt: skip
    return judged


def _isoformat(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None
