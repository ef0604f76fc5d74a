"""While an answer waits for live data it holds no work slot: a slow live source never queues the
other answers' walks behind it, in slash commands, alert replies and mentions alike."""

from __future__ import annotations

import threading

from bot.query.alert import answer_alert
from bot.query.ask import answer_ask
from bot.query.bundle import AlertQuery
from bot.query.live import Pending
from bot.slack.answer_slots import AnswerSlots
from bot.slack.replies import BLAST, SUSPECTS, reply_to_command
from graph.exposure.visibility import Viewer
from graph.health.freshness import StalePolicy
from graph.traffic.live import LiveNow, LiveReading
from tests.bot.slack.test_handlers import NOW, make_deps
from tests.graph.builders import chain


class SlotProbe:
    """A live port that, while an answer waits on it, checks another answer could take a work slot."""

    def __init__(self, slots: AnswerSlots) -> None:
        self.slots, self.free = slots, []

    def begin(self) -> Pending:
        def wait() -> LiveNow:
            taken = threading.Event()

            def other_answer() -> None:
                with self.slots:
                    taken.set()

            threading.Thread(target=other_answer, daemon=True).start()
            self.free.append(taken.wait(5))
            return LiveNow(LiveReading("probe:9090", NOW, 300))

        return wait


def test_no_answer_holds_a_work_slot_while_it_waits_for_live_data() -> None:
    slots = AnswerSlots(1)  # one slot: any slot held across the wait would block the other answer
    probe = SlotProbe(slots)
    deps = make_deps(work_slots=slots, live=probe)
    viewer = Viewer(channel="COPS")
    blast = reply_to_command(deps, deps.snapshot(), BLAST, "redis", viewer)
    suspects = reply_to_command(deps, deps.snapshot(), SUSPECTS, "checkout", viewer)
    assert "live: probe:9090" in str(blast.blocks) and "live: probe:9090" in str(suspects.blocks)
    snap = chain("checkout", "payments", "redis")
    alert = answer_alert(snap, AlertQuery("", "payments"), viewer, NOW, StalePolicy(), cpu=slots, live=probe)
    asked = answer_ask(snap, "what breaks if redis goes down?", viewer, NOW, StalePolicy(), cpu=slots, live=probe)
    assert alert.live.configured and asked.live.configured
    assert probe.free == [True, True, True, True]
