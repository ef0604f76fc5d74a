"""The one escaping boundary: no source text pings a channel or disguises a link, in blocks or in `text`."""

from __future__ import annotations

import re
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.pagerduty.incident_post import format_incident_post
from bot.pagerduty.payload import Incident
from bot.slack.blocks.kit import (
    button,
    escape,
    file_title,
    guard,
    header,
    labelled_link,
    link,
    message,
    safe_url,
    section,
)
from bot.slack.blocks.messages import format_answer, format_blast_radius, format_lag_alert, format_suspects
from graph.blast import blast_radius
from graph.facts import Passage
from graph.freshness import LagTransition, SourceLag
from graph.passages import CitedPassage
from graph.questions.ask import ask
from graph.suspects import suspects
from tests.bot.slack.test_blocks import NOW, assert_within_limits, c, deploy, fresh, judged, texts
from tests.graph.builders import dep, entity, snapshot

CONTROL = ["<!channel>", "<!here>", "<!everyone>", "<@U024BE7LH>", "<#C024BE7LH>", "<!subteam^S1>",
           "<https://evil.example/phish|CI run>", "https://ok.example/a|b", "&", "<", ">", "|", "`", "*"]  # fmt: skip
hostile = st.lists(st.sampled_from(CONTROL) | st.text(max_size=8), max_size=5).map("".join)
# A link the renderer built: an http(s) URL with nothing that could end it, a label with no `<` or `>`.
BUILT = re.compile(r"<(https?://[^\s<>|]+)\|([^<>]*)>")


def assert_no_raw_control(text: str, urls: set[str]) -> None:
    """Every `<` opens a link the bot built, to a URL a source gave; no other `<` or `>` remains raw."""
    rest = text
    for found in BUILT.finditer(text):
        url = found.group(1).replace("&amp;", "&").replace("%7C", "|").replace("%3C", "<").replace("%3E", ">")
        assert url in urls, (url, urls)
        rest = rest.replace(found.group(), "")
    assert "<" not in rest, text
    for seq in ("<!channel", "<!here", "<!everyone", "<@", "<#", "<!subteam"):
        assert seq not in rest


def check(msg: object, urls: set[str]) -> None:
    assert_within_limits(msg)  # type: ignore[arg-type]
    for piece in [msg.text, *texts(list(msg.blocks))]:  # type: ignore[attr-defined]
        assert_no_raw_control(piece, urls)


def hostile_graph(name: str, title: str, owner: str, text: str, version: str, actor: str, url: str, did: str):  # type: ignore[no-untyped-def]
    ref = c("pay" + re.sub(r"[^a-z0-9-]", "", name.lower())[:20])
    snap = snapshot(
        [entity(ref, owner="group:default/team", title=title), entity(c("db")), entity("group:default/team")],
        [dep(ref, c("db"), at=f"catalog/{owner}.yaml#1"), dep(ref, "group:default/team", rel="owned_by")],
        [deploy(did or "d", "db", NOW - timedelta(minutes=5), url=url, actor=actor, version=version)],
    )
    passage = CitedPassage(c("db"), Passage("docs", f"runbooks/{owner}.md §{title}", title, text, 1, "runbooks/db.md"))
    return fresh(snap), ref, passage


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile, hostile, hostile, hostile, hostile, hostile, hostile | st.sampled_from(CONTROL), hostile)
def test_every_source_field_in_every_front_reaches_slack_escaped(  # type: ignore[no-untyped-def]
    name, title, owner, text, version, actor, url, did
) -> None:
    snap, ref, passage = hostile_graph(name, title, owner, text, version, actor, url, did)
    urls = {url}
    fresh_now = judged(snap)
    found = suspects(snap, ref, now=NOW)
    check(format_suspects(found, fresh_now, passages=[passage]), urls)
    impact = blast_radius(snap, c("db"))
    check(format_blast_radius(impact, fresh_now, passages=[passage]), urls)
    check(format_answer(ask(snap, f"what breaks if {title} {c('db')} fails", now=NOW), fresh_now), urls)
    incident = Incident("Q1", title + text, "high", url, "P1", owner)
    check(format_incident_post(incident, format_suspects(found, fresh_now)), urls | {url})
    lag = SourceLag(title or "s", NOW, text, 5.0, 1.0, True, held_reason=version, problems=(actor,))
    check(format_lag_alert(LagTransition(title or "s", True, NOW, lag)), set())


def test_escape_turns_every_slack_control_character_into_an_entity() -> None:
    assert escape("<!channel> & <@U1>") == "&lt;!channel&gt; &amp; &lt;@U1&gt;"


def test_message_escapes_the_notification_text() -> None:
    assert message("<!here> deploy by <@U1>", []).text == "&lt;!here&gt; deploy by &lt;@U1&gt;"


def test_guard_keeps_built_links_and_escapes_every_other_angle_bracket() -> None:
    built = link("https://ci.example.com/r-1", "r-1")
    assert guard(f"{built} <!channel>") == f"{built} &lt;!channel>"
    assert section("<!everyone>")["text"]["text"] == "&lt;!everyone>"


def test_link_refuses_what_is_not_a_parsed_http_url() -> None:
    for url in (
        "javascript:alert(1)",
        "https://",
        "http//x",
        "https://a.example/ x",
        "https://a.example/\x07",
        "ftp://a",
    ):
        assert link(url, "<x>") == "&lt;x&gt;", url
    assert safe_url("HTTPS://a.example/p") == "HTTPS://a.example/p"


def test_link_encodes_what_would_end_it_and_escapes_its_label() -> None:
    built = link("https://evil.example/p|CI run<>&q=1", "<!here>|x")
    assert built == "<https://evil.example/p%7CCI%20run%3C%3E&amp;q=1|&lt;!here&gt;/x>" or built.startswith("&lt;")
    assert link("https://a.example/p|q<r>&s", "id|x") == "<https://a.example/p%7Cq%3Cr%3E&amp;s|id/x>"


def test_a_deploy_link_shows_its_id_and_the_host_it_goes_to() -> None:
    shown = labelled_link("https://evil.example/r-1", "https://ci.example.com/r-9999")
    assert shown == "<https://evil.example/r-1|https://ci.example.com/r-9999> (evil.example)"
    assert labelled_link("not a url", "r-1") == "r-1"


def test_bidi_controls_never_leave_in_mrkdwn_plain_text_or_a_title() -> None:
    rlo = "r-1\u202e\u2066moc.elpmaxe\u2069"
    assert "\u202e" not in labelled_link("https://ci.example.com/r-1", rlo)
    assert escape(rlo) == "r-1\ufffd\ufffdmoc.elpmaxe\ufffd"
    assert guard("a\u202eb\nc\td") == "a\ufffdb\nc\td"
    assert header(rlo)["text"]["text"] == "r-1\ufffd\ufffdmoc.elpmaxe\ufffd"
    built = button("<!here> \u202ex", "a", {})
    assert built is not None and built["text"]["text"] == "<!here> \ufffdx"  # plain_text: shown as written
    assert file_title("Alert on <!channel>\x1b[31m") == "Alert on \u2039!channel\u203a\ufffd[31m"


def test_plain_text_objects_are_never_entity_escaped() -> None:
    assert header("a & b <c>")["text"]["text"] == "a & b <c>"
