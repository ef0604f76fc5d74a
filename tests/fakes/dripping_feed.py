"""A local HTTP server that promises a big deploy feed and sends it one byte at a time, forever."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def dripping_feed(every: float, *, reading: threading.Event | None = None) -> Iterator[str]:
    """Serve `/deploys.jsonl` on 127.0.0.1: headers at once, then one byte every `every` seconds.
    `reading` is set once a reader has its headers and is waiting for the rest."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    def drip(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n")
            if reading is not None:
                reading.set()
            try:
                while not stop.wait(every):
                    conn.sendall(b"{")
            except OSError:
                return  # the reader gave up: what we want

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/deploys.jsonl"
    finally:
        stop.set()
        thread.join()
        listener.close()
