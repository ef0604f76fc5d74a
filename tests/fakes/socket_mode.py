"""A fake Slack Socket Mode server: a real WebSocket on 127.0.0.1:0.

The fake Web API (tests/fakes/slack_api.py) hands out its `url` from `apps.connections.open`.
When the bot connects, it gets Slack's `hello`; tests then push envelopes (slash commands, events,
interactions) down the socket and wait for the bot's acknowledgement of each `envelope_id`, as
Slack does before it would retry.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

Json = dict[str, Any]


@dataclass
class FakeSocketMode:
    url: str = ""
    acks: dict[str, Json] = field(default_factory=dict)
    connections: int = 0
    _socket: ServerConnection | None = None
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def _serve(self, socket: ServerConnection) -> None:
        socket.send(json.dumps({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "AOG"}}))
        with self._changed:
            self._socket, self.connections = socket, self.connections + 1
            self._changed.notify_all()
        try:
            for message in socket:
                ack = json.loads(message)
                with self._changed:
                    self.acks[str(ack.get("envelope_id"))] = ack
                    self._changed.notify_all()
        except ConnectionClosed:
            pass

    def wait_connected(self, timeout: float = 30) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: self._socket is not None, timeout=timeout):
                raise AssertionError("the bot never opened a Socket Mode connection")

    def push(self, kind: str, payload: Json, *, accepts_response_payload: bool = False) -> str:
        """Send one envelope (`slash_commands`, `events_api`, `interactive`); returns its id."""
        self.wait_connected()
        envelope_id = f"env-{next(self._ids)}"
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": accepts_response_payload,
            "retry_attempt": 0,
            "retry_reason": "",
        }
        assert self._socket is not None
        self._socket.send(json.dumps(envelope))
        return envelope_id

    def wait_ack(self, envelope_id: str, timeout: float = 10) -> Json:
        with self._changed:
            if not self._changed.wait_for(lambda: envelope_id in self.acks, timeout=timeout):
                raise AssertionError(f"envelope {envelope_id} was never acknowledged; acks: {list(self.acks)}")
            return self.acks[envelope_id]


@contextmanager
def socket_mode_server() -> Iterator[FakeSocketMode]:
    fake = FakeSocketMode()
    with serve(fake._serve, "127.0.0.1", 0, compression=None) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        fake.url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}/link/?ticket=fake"
        try:
            yield fake
        finally:
            server.shutdown()
            thread.join(timeout=5)
