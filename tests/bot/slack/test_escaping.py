"""The one escaping boundary: no source text pings a channel or disguises a link, in blocks or in `text`."""

from __future__ import annotations

import re
import unicodedata
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
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
    named_hosts,
    safe_url,
    section,
)
from bot.slack.blocks.messages import format_answer, format_blast_radius, format_lag_alert, format_suspects
from graph.exposure.passages import CitedPassage
from graph.facts import Passage
from graph.health.freshness import LagTransition, SourceLag
from graph.questions.ask import ask
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects
from tests.bot.slack.test_blocks import NOW, assert_within_limits, c, deploy, fresh, judged, texts
from tests.graph.builders import dep, entity, snapshot

CONTROL = ["<!channel>", "<!here>", "<!everyone>", "<@U024BE7LH>", "<#C024BE7LH>", "<!subteam^S1>",
           "<https://evil.example/phish|CI run>", "https://ok.example/a|b", "&", "<", ">", "|", "`", "*",
           "https://ci.example.com/r-9999", "ci.example.com", "\uff43\uff49\uff0eexample\uff0ecom", "10.0.0.7",
           "https://ci.ex\u0430mple.com/r-1"]  # fmt: skip
hostile = st.lists(st.sampled_from(CONTROL) | st.text(max_size=8), max_size=5).map("".join)
# A link the renderer built: an http(s) URL with nothing that could end it, a label with no `<` or `>`.
BUILT = re.compile(r"<(https?://[^\s<>|]+)\|([^<>]*)>")


# Read as a reader reads a link's label: what looks like a domain or an IPv4 address, in any width.
_DOMAIN = re.compile(r"[\w-]+(?:\.[\w-]+)*\.[^\W\d_][\w-]+|\d+\.\d+\.\d+\.\d+")


def assert_label_names_its_own_host(url: str, label: str) -> None:
    """A link's label names no host but the one it goes to, a host in another script in its IDNA
    form (`ci.xn--exmple-4nf.com`), which no reader takes for the ASCII host it imitates."""
    host = urlsplit(url).hostname or ""
    ascii_host = host.encode("idna").decode() if not host.isascii() else host
    seen = unicodedata.normalize("NFKC", label.replace("&amp;", "&")).casefold()
    for named in _DOMAIN.findall(seen):
        assert named == ascii_host, (label, url)


def assert_no_raw_control(text: str, urls: set[str]) -> None:
    """Every `<` opens a link the bot built, to a URL a source gave, labelled by nothing that reads
    as another host; no other `<` or `>` remains raw."""
    rest = text
    for found in BUILT.finditer(text):
        url = found.group(1).replace("&amp;", "&").replace("%7C", "|").replace("%3C", "<").replace("%3E", ">")
        assert url in urls, (url, urls)
        assert_label_names_its_own_host(url, found.group(2))
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
    assert labelled_link("https://ci.example.com/r-1", "r-1") == "<https://ci.example.com/r-1|r-1> (ci.example.com)"
    assert labelled_link("not a url", "r-1") == "r-1"


def test_a_label_that_reads_as_another_host_never_labels_a_link() -> None:
    """The id is shown as plain text and the link beside it is labelled by the host it goes to."""
    disguised = labelled_link("https://evil.example/phish", "https://ci.example.com/r-9999")
    assert disguised == "https://ci.example.com/r-9999 (<https://evil.example/phish|evil.example>)"
    assert (
        link("https://evil.example/phish", "ci.example.com")
        == "ci.example.com (<https://evil.example/phish|evil.example>)"
    )
    for label in (
        "ci.example.com/r-1",
        "\uff43\uff49\uff0e\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45\uff0e\uff43\uff4f\uff4d",  # fullwidth
        "ci\u3002example\u3002com",  # ideographic full stops, dots in an address bar
        "ci.exam\u200bple.com",  # a zero-width space a reader never sees
        "see http://intranet/r-1",
        "10.0.0.7",
        "deploy by alice@ci.example.com",
    ):
        built = link("https://evil.example/x", label)
        assert built.endswith(" (<https://evil.example/x|evil.example>)"), label
        assert_no_raw_control(built, {"https://evil.example/x"})


def test_a_label_naming_its_own_host_or_none_keeps_its_link() -> None:
    same = "https://ci.example.com/r-1"
    assert link(same, same) == f"<{same}|{same}>"
    assert link(same, "CI.Example.com run 1") == f"<{same}|CI.Example.com run 1>"
    for label in ("r-8812", "v2.3.1", "deploy #42 (prod)", "e.g. a run"):
        assert link(same, label) == f"<{same}|{label}>", label


def test_a_link_to_a_host_in_another_script_is_shown_by_its_punycode() -> None:
    homograph = "https://ci.ex\u0430mple.com/r-1"  # a Cyrillic a
    assert labelled_link(homograph, "r-1") == f"<{homograph}|r-1> (ci.xn--exmple-4nf.com)"
    shown = link(homograph, "ci.ex\u0430mple.com")  # even its own name reads as ci.example.com
    assert shown == f"ci.ex\u0430mple.com (<{homograph}|ci.xn--exmple-4nf.com>)"
    assert link("https://a|b.example/", "x") == "x"  # a host that is no host name is not linked


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


@pytest.mark.parametrize(
    ("label", "hosts"),
    [("10.0.0.7A", {"10.0.0.7"}), ("1.2.3.4.5", {"1.2.3.4"}), ("r-10.0.0", set()), ("v1.2.3", set())],
)
def test_four_dotted_numbers_read_as_an_address_even_with_more_after_them(label: str, hosts: set[str]) -> None:
    assert named_hosts(label) == hosts
