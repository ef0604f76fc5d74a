"""Run a request handler on a real loopback socket (port 0) for the length of a `with` block."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    # socketserver's listen backlog is 5: a burst of 50 answers posted at once had its connections
    # past the fifth dropped and retried by TCP a second later (bench: 50 at once, post p99 1.4 s),
    # where Slack's servers accept them all.
    request_queue_size = 128


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Yields `http://127.0.0.1:PORT`; stops the server afterwards."""
    server = _Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    # A short poll interval keeps shutdown (and so each test's teardown) quick.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str, headers: dict[str, str]) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers.items():
        handler.send_header(name, value)
    try:
        handler.end_headers()
        handler.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):
        # The client hung up first, as a reader past its size limit or its timeout does on purpose:
        # the test's point, not the fake's failure (socketserver printed a traceback for it).
        handler.close_connection = True
