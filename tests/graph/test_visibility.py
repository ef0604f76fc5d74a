from __future__ import annotations

import pickle

from graph.exposure.visibility import HIDDEN, Viewer, resolve_for
from graph.questions.ask import ask
from graph.walks.blast import blast_radius, recent_walks
from graph.walks.paths import find_path
from graph.walks.suspects import suspects
from tests.graph.builders import BUILT_AT, dep, entity, snapshot

SECRET = {
    "oncall-graph/visibility": "restricted",
    "oncall-graph/allowed-channels": "C-SEC",
    "oncall-graph/allowed-users": "U-CISO",
}
OUTSIDER = Viewer(channel="C-OPS", user="U-SRE")


def c(name: str) -> str:
    return f"component:default/{name}"


def snap():  # type: ignore[no-untyped-def]
    # web -> vault-proxy (restricted) -> redis; billing -> redis; lonely; vault-proxy owned by a restricted team
    return snapshot(
        [entity(c("web")), entity(c("vault-proxy"), annotations=SECRET), entity(c("redis")), entity(c("billing")),
         entity(c("lonely")), entity(c("hsm"), annotations=SECRET),
         entity("group:default/secops", annotations=SECRET), entity("group:default/web-team")],
        [dep(c("web"), c("vault-proxy")), dep(c("vault-proxy"), c("redis")), dep(c("billing"), c("redis")),
         dep(c("vault-proxy"), "group:default/secops", rel="owned_by"),
         dep(c("web"), "group:default/secops", rel="owned_by"),
         dep(c("web"), "group:default/web-team", rel="owned_by")],
    )  # fmt: skip


def test_restricted_entity_never_appears_to_an_outsider_but_the_chain_stays_true() -> None:
    result = blast_radius(snap(), c("redis"), viewer=OUTSIDER)
    names = {i.entity for i in result.impacted}
    assert names == {c("web"), c("billing")}
    assert result.hidden_count == 1
    web = next(i for i in result.impacted if i.entity == c("web"))
    assert web.path == (c("redis"), HIDDEN, c("web")) and web.hidden == 1
    assert all(c("vault-proxy") not in (e.src, e.dst) for e in web.edges)
    assert web.owners == ("group:default/web-team",)
    assert c("hsm") not in result.survives and c("lonely") in result.survives
    # Counted and named the way a reply does, without listing every survivor: hidden ones left out too.
    assert result.survivors_count == len(result.survives)
    assert result.first_survivors(1) == result.survives[:1]


def test_allowed_channel_and_allowed_user_see_everything() -> None:
    for viewer in (Viewer(channel="C-SEC"), Viewer(user="U-CISO")):
        result = blast_radius(snap(), c("redis"), viewer=viewer)
        assert c("hsm") in result.survives and result.survivors_count == len(result.survives)
        assert c("vault-proxy") in {i.entity for i in result.impacted}
        assert result.hidden_count == 0


def test_restricted_names_do_not_resolve_or_get_suggested_for_outsiders() -> None:
    s = snap()
    assert resolve_for(s, "vault-proxy", OUTSIDER).entity is None
    assert c("vault-proxy") not in resolve_for(s, "vault-prox", OUTSIDER).suggestions
    assert resolve_for(s, "vault-proxy", Viewer(channel="C-SEC")).entity == c("vault-proxy")


def test_suspects_and_paths_hide_restricted_hops() -> None:
    s = snap()
    found = suspects(s, c("web"), now=BUILT_AT, viewer=OUTSIDER)
    assert [d.entity for d in found.dependencies] == [c("redis")]
    assert found.hidden == 1 and found.dependencies[0].path == (c("web"), HIDDEN, c("redis"))
    # A chain that exists only through a hidden entity is no chain for an outsider: saying one
    # exists would tell them of the entity (the contract grants outsiders nothing about it).
    path = find_path(s, c("web"), c("redis"), viewer=OUTSIDER)
    assert path.path == () and path.edges == () and path.hidden == 0
    inside = find_path(s, c("web"), c("redis"), viewer=Viewer(channel="C-SEC"))
    assert inside.path == (c("web"), c("vault-proxy"), c("redis")) and len(inside.edges) == 2


def test_ask_never_names_a_restricted_entity_to_an_outsider() -> None:
    answer = ask(snap(), "what breaks if redis goes down?", now=BUILT_AT, viewer=OUTSIDER)
    assert "vault" not in answer.text and "secops" not in answer.text
    assert "1 more impacted entities are not visible here." in answer.sentences


def test_an_edge_through_a_restricted_api_does_not_name_it() -> None:
    from graph.facts import Assertion, Citation

    api = "api:default/secret-api"
    derived = Assertion(c("web"), "depends_on", c("billing"), Citation("t", "catalog/web.yaml#1"), via=api)
    s = snapshot([entity(c("web")), entity(c("billing")), entity(api, annotations=SECRET)], [derived])
    [impact] = blast_radius(s, c("billing"), viewer=OUTSIDER).impacted
    assert impact.edges[0].via == ()
    [insider] = blast_radius(s, c("billing"), viewer=Viewer(channel="C-SEC")).impacted
    assert insider.edges[0].via == (api,)


def test_a_text_naming_a_hidden_entity_is_redacted_whole_for_an_outsider_only() -> None:
    from graph.exposure.redaction import HIDDEN_TEXT, redact_text

    graph = snap()
    for title in ("Vault Proxy: 5xx above 5%", "token errors on VAULT-PROXY", "secops paged"):
        assert redact_text(graph, title, OUTSIDER) == HIDDEN_TEXT
        assert redact_text(graph, title, Viewer(channel="C-SEC")) == title
    assert redact_text(graph, "billing latency high", OUTSIDER) == "billing latency high"
    assert "vault" not in HIDDEN_TEXT and "secops" not in HIDDEN_TEXT


def test_a_failure_walked_for_one_viewer_is_listed_for_the_next_as_they_may_see_it() -> None:
    s = snap()
    outsider = blast_radius(s, c("redis"), viewer=OUTSIDER)
    assert c("vault-proxy") not in {i.entity for i in outsider.impacted} and outsider.hidden_count == 1
    insider = blast_radius(s, c("redis"), viewer=Viewer(channel="C-SEC"))
    assert c("vault-proxy") in {i.entity for i in insider.impacted} and insider.hidden_count == 0
    assert list(recent_walks(s)) == [(c("redis"), None)]  # walked once, for both
    assert pickle.loads(pickle.dumps(recent_walks(s))) == {}  # never saved with the snapshot's image
