"""The HTTP server's 413, over real sockets: a body over the cap, sent whole by a client that reads its
answer only afterwards (the standard library's http.client, as requests and urllib3 do), gets the 413
and not a reset (plain waitress closes on the unread body: ConnectionResetError); so does a chunked
one; a client that waits on `Expect: 100-continue` gets the 413 at once, never a 100 Continue. The
server keeps serving after each."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from bot.http_server import create_http_server

CAP = 1024 * 1024
HUGE = 64 * 1024 * 1024


def echo_length(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    body = environ["wsgi.input"].read()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [str(len(body)).encode()]


def post(url: str, body: bytes | Iterable[bytes]) -> int:
    """POST `body` (an iterable is sent chunked), the whole of it before reading the answer's status."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request("POST", "/", body=body)
        return conn.getresponse().status
    finally:
        conn.close()


@contextmanager
def serving(server: Any) -> Iterator[str]:
    """The server run on a thread, and closed at the end: closing its sockets from this thread while
    the loop selects on them is a bad file descriptor to that select, which is how the loop ends."""
    closing = threading.Event()

    def run() -> None:
        try:
            server.run()
        except OSError:
            if not closing.is_set():
                raise

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}"
    finally:
        closing.set()
        server.close()
        thread.join(timeout=10)


@pytest.fixture
def server_url() -> Iterator[str]:
    with serving(create_http_server(echo_length, host="127.0.0.1", port=0, threads=2, body_cap=CAP)) as url:
        yield url


def test_a_body_far_over_the_cap_gets_a_413_the_client_reads(server_url: str) -> None:
    assert post(server_url, b"x" * HUGE) == 413
    assert httpx.post(server_url, content=b"x" * 1000).text == "1000"  # and the server still answers


def test_a_chunked_body_over_the_cap_gets_a_413_the_client_reads(server_url: str) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(HUGE // 65536):
            yield b"y" * 65536

    assert post(server_url, chunks()) == 413
    assert httpx.post(server_url, content=b"y" * 10).text == "10"


def test_a_client_that_waits_to_be_invited_gets_the_413_before_it_sends_the_body(server_url: str) -> None:
    host, port = server_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {HUGE}\r\nExpect: 100-continue\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += conn.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_a_body_under_the_cap_reaches_the_app_whole(server_url: str) -> None:
    assert httpx.post(server_url, content=b"z" * (CAP - 1), timeout=30).text == str(CAP - 1)


def test_a_body_past_the_drain_bound_is_cut_off_and_the_server_goes_on() -> None:
    server = create_http_server(echo_length, host="127.0.0.1", port=0, threads=2, body_cap=1024, drain_bytes=4096)
    with serving(server) as url, httpx.Client(timeout=30) as client:
        try:
            answer: int | str = client.post(url, content=b"x" * HUGE).status_code
        except httpx.TransportError as exc:  # the sender sees the close: its body was not read
            answer = type(exc).__name__
        assert answer in (413, "WriteError", "ReadError", "RemoteProtocolError"), answer
        assert client.post(url, content=b"x" * 5).text == "5"
