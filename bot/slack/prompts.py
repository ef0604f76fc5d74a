"""The assistant pane's suggested prompts, made from the graph and where the person came from.

Pure: the recent alert (if any) is found by the handler and passed in. At most four prompts, as
Slack takes (assistant.threads.setSuggestedPrompts).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from bot.slack.blocks.kit import file_title
from graph.exposure.visibility import Viewer, can_see
from graph.naming.refs import short_name
from graph.questions.rollups import ranking
from graph.snapshot import Snapshot

MAX_PROMPTS = 4
TITLE_CHARS = 75  # a prompt's title is a button's label
MESSAGE_CHARS = 300
TOP_ENTITIES = 2  # the most depended-on entities offered when no alert says where to look
PROMPTS_TITLE = "Ask about the dependency graph"
RECENT_DEPLOYS = "What was deployed in the last hour?"


@dataclass(frozen=True, slots=True)
class Prompt:
    title: str
    message: str

    def as_slack(self) -> dict[str, str]:
        return {"title": self.title, "message": self.message}


def prompt(question: str) -> Prompt:
    """Slack documents no formatting for a prompt, and its message is sent as the person's own: it
    carries entity names from the sources, so nothing in it may read as a control sequence."""
    return Prompt(file_title(question, TITLE_CHARS), file_title(question, MESSAGE_CHARS))


def alert_prompts(service: str) -> tuple[Prompt, ...]:
    """From an alert channel whose recent alert names `service` (an entity the person may see)."""
    return (
        prompt(f"What breaks if {service} goes down?"),
        prompt(f"What changed around {service} in the last 6 h?"),
        prompt(f"What does {service} depend on?"),
    )


def graph_prompts(snapshot: Snapshot, viewer: Viewer) -> tuple[Prompt, ...]:
    """Anywhere else: the most depended-on entities the person may see, and the last hour's deploys."""
    seen = (e.entity for e in ranking(snapshot).exposures if can_see(snapshot, e.entity, viewer))
    top = list(islice(seen, TOP_ENTITIES))  # the first few the person may see, not all 100k checked
    asked = [prompt(f"What breaks if {short_name(ref)} goes down?") for ref in top]
    return (*asked, prompt(RECENT_DEPLOYS))[:MAX_PROMPTS]
