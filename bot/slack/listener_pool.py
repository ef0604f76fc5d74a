"""Bolt's listener pool, and the ack that lets a request's thread go as soon as its listener acks.

Bolt runs each listener on its pool and has the request's thread look for the ack every 10 ms
(`time.sleep(0.01)`), so every request was acknowledged 10 ms late or later even when its answer was
posted in 5 (bench: a 100k hub answer, traced). `signal_acks` (a global middleware) gives each
request an `Ack` that also sets an event; the pool's `submit`, called on the request's thread, waits
for that event (or for the listener to end), so Bolt finds the ack there at its first look.

Each listener also runs in the context it was submitted from: the request's span, so one trace holds
a whole answer (`bot/telemetry/tracing.py`).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from slack_bolt import BoltContext
from slack_bolt.context.ack import Ack
from slack_bolt.response import BoltResponse

ACK_WAIT = 3.0  # seconds: Slack's own limit for an ack; Bolt gives up at the same
_acked: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("oncall_graph_acked", default=None)


class _SignallingAck(Ack):
    def __init__(self, acked: threading.Event) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # Bolt's own, untyped
        self._acked = acked

    def __call__(self, *args: Any, **kwargs: Any) -> BoltResponse:
        try:
            return super().__call__(*args, **kwargs)
        finally:
            self._acked.set()


def signal_acks(context: BoltContext, next: Callable[[], None]) -> None:  # Bolt passes `next` by its name
    """Every request's ack, told to the pool when it is called."""
    acked = threading.Event()
    context["ack"] = _SignallingAck(acked)
    _acked.set(acked)  # the request's own thread: it submits the listener next
    next()


class ListenerPool(ThreadPoolExecutor):
    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = super().submit(contextvars.copy_context().run, fn, *args, **kwargs)
        acked = _acked.get()
        if acked is not None and not acked.is_set():
            future.add_done_callback(lambda _: acked.set())  # a listener that ends without an ack
            acked.wait(ACK_WAIT)
        return future
