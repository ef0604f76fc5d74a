"""The HTTP server: waitress, answering a body over its cap with a 413 the client can read.

waitress refuses a body over `max_request_body_size` as soon as it sees the Content-Length (or, for
a chunked body, once it has read that much), answers 413 and closes the connection. The client
is still sending: closing a socket with unread bytes in it makes the kernel send a reset, and a
client that reads its answer only once it has sent its body (most do: requests, httpx, curl
without `Expect`) sees the reset, not the 413. So a refused body is read to its end and thrown
away as it arrives, nothing kept, up to DRAIN_BYTES; then the 413 goes out and the connection
closes with nothing left unread. A client that sent `Expect: 100-continue` has sent no body yet:
it gets the 413 at once, and never a `100 Continue` that would invite the body.

A body larger still gets the 413 and the close right away: the reset is its sender's to see.
"""

from __future__ import annotations

from waitress.buffers import OverflowableBuffer
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.receiver import ChunkedReceiver, FixedStreamReceiver
from waitress.server import BaseWSGIServer, MultiSocketServer, create_server
from waitress.utilities import RequestEntityTooLarge

from bot.http import WsgiApp

DRAIN_BYTES = 256 * 1024 * 1024  # read and thrown away at most, per refused body


class _Dropped(OverflowableBuffer):
    """A body buffer that keeps nothing: a refused body is counted as it arrives, and dropped."""

    def __init__(self) -> None:
        super().__init__(0)
        self.dropped = 0

    def append(self, s: bytes) -> None:
        self.dropped += len(s)


class DrainingParser(HTTPRequestParser):
    """A request whose body is over the cap completes (with its 413) only once the body is read."""

    drain_bytes = DRAIN_BYTES
    _rest: FixedStreamReceiver | ChunkedReceiver | None = None
    _dropped: _Dropped | None = None

    def received(self, data: bytes) -> int:
        if self._rest is not None:
            return self._drain(data)
        consumed = super().received(data)
        if self.completed and isinstance(self.error, RequestEntityTooLarge):
            self._start_draining()
        return consumed

    def _start_draining(self) -> None:
        if self.expect_continue:
            self.expect_continue = False  # the body is not sent yet: refuse it before it is
            return
        self._dropped = _Dropped()
        if self.chunked and isinstance(self.body_rcv, ChunkedReceiver):
            self.body_rcv.buf.close()  # what was kept of it so far goes too
            self.body_rcv.buf = self._dropped
            self._rest = self.body_rcv
        elif not self.chunked and 0 < self.content_length <= self.drain_bytes:
            self._rest = FixedStreamReceiver(self.content_length, self._dropped)
        else:
            return
        self.completed = False

    def _drain(self, data: bytes) -> int:
        rest, dropped = self._rest, self._dropped
        assert rest is not None and dropped is not None
        taken = rest.received(data)
        if rest.completed or rest.error is not None or dropped.dropped >= self.drain_bytes:
            self.completed, self._rest = True, None
            return len(data)  # past this body's end nothing is read: the connection closes on the 413
        return taken


def create_http_server(
    app: WsgiApp, *, host: str, port: int, threads: int, body_cap: int, drain_bytes: int = DRAIN_BYTES
) -> BaseWSGIServer:
    """A waitress server on `host:port` whose refused bodies are read to their end, up to `drain_bytes`."""
    server = create_server(app, host=host, port=port, threads=threads, max_request_body_size=body_cap)
    assert not isinstance(server, MultiSocketServer), "one host and port: one listening socket"
    parser = type("DrainingParser", (DrainingParser,), {"drain_bytes": drain_bytes})
    server.channel_class = type("DrainingChannel", (HTTPChannel,), {"parser_class": parser})
    return server
