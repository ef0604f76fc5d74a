"""Passages linked to the entities they name, ranked, chosen for an answer and filtered for the viewer."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given
from hypothesis import strategies as st

from graph.exposure.passages import (
    cite_passages,
    passage_index,
    passages_for,
    prose,
    prose_words,
    snippet,
    top_passages,
)
from graph.exposure.visibility import Viewer
from graph.facts import Entity, Passage, SourceFacts, SourceMark
from graph.naming.names import name_words
from graph.snapshot import Snapshot
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects
from tests.graph.builders import BUILT_AT, dep, entity, said, snapshot

DOCS = "docs:runbooks"
REDIS, TOKENS, AUTH = "resource:default/redis", "component:default/token-cache", "component:default/auth-service"
LOGIN, LOGIN_FLOW = "component:default/login", "component:default/login-flow"
ALIASES = "oncall-graph/aliases"


def passage(text: str, *headings: str, doc: str = "runbooks/redis.md", line: int = 1) -> Passage:
    heading = headings[-1] if headings else ""
    locator = f"{doc} §{heading}" if heading else f"{doc}:{line}"
    return Passage(DOCS, locator, heading, text, line, doc, tuple(headings))


def graph(passages: Iterable[Passage], entities: Iterable[Entity] = (), **kw: object) -> Snapshot:
    base = [
        entity(REDIS),
        entity(TOKENS, annotations={ALIASES: "tok store"}),
        entity(AUTH, title="The Auth Service"),
        entity(LOGIN),
        entity(LOGIN_FLOW),
        *entities,
    ]
    docs = SourceFacts(DOCS, passages=tuple(passages))
    return snapshot(base, [dep(TOKENS, REDIS), dep(AUTH, TOKENS), dep(LOGIN_FLOW, AUTH)], (), docs)


def linked(snap: Snapshot, ref: str) -> list[str]:
    return [p.text for p in passages_for(snap, ref)]


def test_names_aliases_and_titles_in_any_spelling_link_a_passage() -> None:
    snap = graph(
        [
            passage("Flush the token cache first."),
            passage("The Tok-Store keeps sessions.", line=3),
            passage("AuthService answers slowly.", line=5),
            passage("svc-auth is down.", line=7),
        ]
    )
    assert linked(snap, TOKENS) == ["Flush the token cache first.", "The Tok-Store keeps sessions."]
    assert linked(snap, AUTH) == ["AuthService answers slowly.", "svc-auth is down."]


def test_a_name_only_a_runbook_uses_links_to_its_placeholder_entity() -> None:
    facts = SourceFacts(
        DOCS,
        assertions=(said("the session store", "backed_by", "Redis", "runbooks/redis.md:1"),),
        passages=(passage("Restart the session store after a failover.", "Failover"),),
    )
    snap = snapshot([entity(REDIS)], [], (), facts)
    assert linked(snap, "component:default/session-store") == ["Restart the session store after a failover."]


def test_the_longest_name_wins_and_a_shorter_one_inside_it_is_not_linked() -> None:
    snap = graph([passage("The login flow breaks."), passage("Login is slow.", line=3)])
    assert linked(snap, LOGIN_FLOW) == ["The login flow breaks."]
    assert linked(snap, LOGIN) == ["Login is slow."]


def test_fenced_code_names_nothing_but_inline_code_does() -> None:
    text = "Run this:\n```sh\n# flush the token cache\nredis-cli flushall\n```"
    snap = graph([passage(text), passage("Check `redis_up` on the dashboard.", line=9)])
    assert linked(snap, TOKENS) == []
    assert linked(snap, REDIS) == ["Check `redis_up` on the dashboard."]
    assert prose(text) == "Run this:"


def test_a_name_two_entities_share_links_neither() -> None:
    twins = [entity("component:default/cache-a", title="Cache"), entity("component:default/cache-b", title="Cache")]
    snap = graph([passage("Warm the cache.")], twins)
    assert linked(snap, "component:default/cache-a") == linked(snap, "component:default/cache-b") == []


def test_a_heading_that_names_an_entity_links_the_passages_under_it() -> None:
    snap = graph([passage("Promote the replica by hand.", "Platform runbook", "Redis", "Failover")])
    [failover] = passages_for(snap, REDIS)
    assert failover.locator == "runbooks/redis.md §Failover"


def test_passages_rank_own_heading_then_title_then_the_most_specific() -> None:
    snap = graph(
        [
            passage("Redis, the token cache and the auth service all go down.", "Redis runbook", "Why", line=1),
            passage("Check redis memory.", "Redis runbook", "Symptoms", line=5),
            passage("Owner: SRE.", "Redis runbook", line=3),
            passage("Page the redis team.", "Redis runbook", "Escalation", line=9),
            passage("The token cache uses Redis.", "Auth runbook", "Redis", doc="runbooks/auth.md", line=4),
            passage("Everything about redis and the auth service.", doc="runbooks/misc.md", line=2),
        ]
    )
    assert [p.locator for p in passages_for(snap, REDIS)] == [
        "runbooks/auth.md §Redis",  # its own section's heading names it
        "runbooks/redis.md §Escalation",  # under a title naming it, and names it: one entity only
        "runbooks/redis.md §Symptoms",  # same specificity: by locator
        "runbooks/redis.md §Why",  # names three entities
        "runbooks/redis.md §Redis runbook",  # under the title, never named in its text
        "runbooks/misc.md:2",  # named in the text only
    ]


def test_an_answer_quotes_the_asked_entity_first_then_the_next_ones_one_section_each() -> None:
    snap = graph(
        [
            passage("Failover: promote a redis replica.", "Redis", "Failover", line=1),
            passage("More redis failover notes.", "Redis", "Failover", line=3),
            passage("Redis memory alerts.", "Redis", "Symptoms", line=5),
            passage("Redis escalation.", "Redis", "Escalation", line=7),
            passage("Token cache misses climb.", "Token cache", "Symptoms", doc="runbooks/tokens.md", line=2),
        ]
    )
    result = blast_radius(snap, REDIS)
    assert result.subjects()[:2] == (REDIS, TOKENS)
    chosen = cite_passages(snap, result.subjects(), limit=3)
    assert [(c.entity, c.locator) for c in chosen] == [
        (REDIS, "runbooks/redis.md §Escalation"),
        (REDIS, "runbooks/redis.md §Failover"),
        (TOKENS, "runbooks/tokens.md §Symptoms"),
    ]
    assert top_passages(snap, [REDIS], 2) == tuple(passages_for(snap, REDIS)[i] for i in (0, 1))
    assert cite_passages(snap, ["component:default/nothing-said"]) == ()


def test_suspects_quote_dependencies_with_a_deploy_first() -> None:
    snap = graph([])
    found = suspects(snap, LOGIN_FLOW, now=BUILT_AT)
    assert found.subjects() == (LOGIN_FLOW, AUTH, TOKENS)


def test_a_passage_naming_an_entity_the_viewer_may_not_see_is_not_quoted_to_them() -> None:
    secret = {"oncall-graph/visibility": "restricted", "oncall-graph/allowed-channels": "C-SEC"}
    vault = entity("component:default/vault", annotations=secret)
    snap = graph(
        [
            passage("Redis keys are encrypted with vault.", "Redis", "Keys", line=1),
            passage("Restart redis.", "Redis", "Restart", line=5),
        ],
        [vault],
    )
    outsider, insider = Viewer(channel="C-OPS"), Viewer(channel="C-SEC")
    assert [c.locator for c in cite_passages(snap, [REDIS], viewer=outsider)] == ["runbooks/redis.md §Restart"]
    assert [c.locator for c in cite_passages(snap, [REDIS], viewer=insider)] == [
        "runbooks/redis.md §Restart",  # fewer entities named: more specific
        "runbooks/redis.md §Keys",
    ]
    assert len(cite_passages(snap, [REDIS])) == 2  # the command line sees everything


def test_the_link_index_is_built_once_and_kept_when_only_marks_move() -> None:
    snap = graph([passage("Restart redis.")])
    index = passage_index(snap)
    fresher = snap.with_marks({"docs": SourceMark("docs", last_success=BUILT_AT)})
    assert passage_index(fresher) is index


def test_the_same_passage_from_two_sources_is_kept_once() -> None:
    one = passage("Restart redis.")
    snap = snapshot([entity(REDIS)], [], (), SourceFacts("a", passages=(one,)), SourceFacts("b", passages=(one,)))
    assert snap.passages == (one,)


def test_a_snippet_is_the_prose_on_one_line_cut_at_a_word() -> None:
    text = "Run:\n```\nredis-cli failover\n```\nThen " + "wait " * 60
    cut = snippet(passage(text), 40)
    assert cut == "Run: Then wait wait wait wait wait…"
    assert snippet(passage("Short.\nTwo lines.")) == "Short. Two lines."


def test_a_numbered_service_is_linked_only_beside_its_affix() -> None:
    svc = entity("component:default/svc-42")
    snap = graph([passage("svc-42 is down."), passage("Wait 42 seconds.", line=3)], [svc])
    assert linked(snap, "component:default/svc-42") == ["svc-42 is down."]


@given(st.text(alphabet=st.sampled_from("abcXYZ09 -_./Ééß"), max_size=40))
def test_prose_is_cut_into_words_exactly_as_names_are(text: str) -> None:
    assert prose_words(text) == name_words(text)
