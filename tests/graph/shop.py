"""A small shop for tests of the model's context and answers: a chain with owners and deploys."""

from __future__ import annotations

from dataclasses import replace

from graph.snapshot import Snapshot
from tests.graph.builders import dep, deploy, entity, snapshot


def c(name: str) -> str:
    return f"component:default/{name}"


def shop() -> Snapshot:
    """checkout -> payments -> ledger -> postgres, payments -> antifraud; owners; one recent deploy."""
    g = "group:default/"
    entities = [
        replace(entity(c("checkout"), owner=f"{g}web"), description="The checkout page."),
        replace(entity(c("payments"), owner=f"{g}payments-team"), description="Authorizes card payments."),
        entity(c("ledger"), owner=f"{g}finance"),
        entity(c("postgres"), owner=f"{g}dba"),
        entity(c("antifraud"), owner=f"{g}risk"),
        entity(c("search")),  # not in any answer below
        *(entity(f"{g}{team}") for team in ("web", "payments-team", "finance", "dba", "risk")),
    ]
    edges = [
        dep(c("checkout"), c("payments")),
        dep(c("payments"), c("ledger")),
        dep(c("ledger"), c("postgres")),
        dep(c("payments"), c("antifraud")),
        dep(c("ledger"), c("postgres"), at="runbooks/ledger.md:4", extracted=True),
        *(dep(c(n), f"{g}{t}", rel="owned_by") for n, t in (("checkout", "web"), ("payments", "payments-team"),
          ("ledger", "finance"), ("postgres", "dba"), ("antifraud", "risk"))),
    ]  # fmt: skip
    deploys = [deploy("r-1", "antifraud", "2026-11-29T14:05:00Z"), deploy("r-0", "ledger", "2026-11-20T10:00:00Z")]
    return snapshot(entities, edges, deploys)
