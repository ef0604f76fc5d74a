"""Waking a replica the moment the graph version moves, whichever replica moved it.

One thread per process. On PostgreSQL it LISTENs for the NOTIFY each version move sends (on a
connection of its own), reconnecting with backoff and polling the version meanwhile; on a SQLite
file it reads the version row every `poll_interval` (several processes may share the file). Either
way it calls `wake`, which follows the version at once, or once the last wake is FOLLOW_GAP old (a
burst of moves is followed as one delta); the regular follow job stays the safety net. Nothing
here raises out of the thread: a failure is logged and the watch goes on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sync.pacing import FOLLOW_GAP, Pace
from sync.store.fact_store import Store
from sync.store.version_signal import VersionListener, VersionPeek, sqlite_file

log = logging.getLogger(__name__)
LISTEN_TICK = 0.5  # seconds between checks for a stop while listening
BACKOFF_FIRST, BACKOFF_MAX = 0.5, 30.0  # seconds before reconnecting, doubled per failure


class VersionWatcher:
    """`start` once, `stop` at shutdown; `wake` runs on the watcher's thread, never on a request's."""

    def __init__(
        self,
        store: Store,
        wake: Callable[[], None],
        *,
        poll_interval: float = 0.25,
        backoff: tuple[float, float] = (BACKOFF_FIRST, BACKOFF_MAX),
        gap: float = FOLLOW_GAP,
    ) -> None:
        # A burst of moves (a push every few milliseconds) is followed a gap at a time: one delta for many steps.
        self._store, self._wake, self._pace, self._poll_interval = store, wake, Pace(gap), poll_interval
        self._backoff = backoff
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._last = -1  # the version last seen by polling

    def start(self) -> None:
        engine = self._store.engine
        if engine.dialect.name == "postgresql":
            target = self._listen
        elif (path := sqlite_file(engine)) is not None:
            peek = VersionPeek(path)
            target = lambda: self._peek(peek)  # noqa: E731
        else:
            return  # an in-memory database has one process: nothing else moves its version
        self._thread = threading.Thread(target=target, name="version-watch", daemon=True)
        self._thread.start()

    @property
    def watching(self) -> bool:
        """Whether a thread follows every version move, this process's own included."""
        return self._thread is not None

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _listen(self) -> None:
        listener = VersionListener(self._store.engine)
        delay = self._backoff[0]
        while not self._stopping.is_set():
            try:
                listener.open()
            except Exception as exc:  # noqa: BLE001 - the server away: poll until it is back
                log.warning(
                    "cannot LISTEN for graph version moves (%s); polling every %g s, reconnecting in %g s",
                    exc, self._poll_interval, delay,
                )  # fmt: skip
                self._poll_for(delay)
                delay = min(delay * 2, self._backoff[1])
                continue
            delay = self._backoff[0]
            log.info("listening for graph version moves")
            try:
                self._call_wake()  # whatever moved while nobody listened
                while not self._stopping.is_set():
                    if listener.wait(LISTEN_TICK):
                        self._call_wake()
            except Exception as exc:  # noqa: BLE001 - a dropped connection: reconnect
                if not self._stopping.is_set():
                    log.warning("lost the LISTEN connection for graph version moves: %s; reconnecting", exc)
            finally:
                listener.close()

    def _poll_for(self, seconds: float) -> None:
        """Poll the version through the store's pool for `seconds` (the listener is away)."""
        rounds = max(1, round(seconds / self._poll_interval))
        for _ in range(rounds):
            if self._stopping.wait(self._poll_interval):
                return
            self._check(self._store.graph_version)

    def _peek(self, peek: VersionPeek) -> None:
        try:
            while not self._stopping.wait(self._poll_interval):
                self._check(peek.version)
        finally:
            peek.close()

    def _check(self, read: Callable[[], int]) -> None:
        try:
            version = read()
        except Exception as exc:  # noqa: BLE001 - the next round reads again
            log.debug("reading the graph version failed: %s", exc)
            return
        if version != self._last:
            self._last = version
            self._call_wake()  # the first read too: `wake` does nothing when the snapshot is current

    def _call_wake(self) -> None:
        self._pace.wait()
        try:
            self._wake()
        except Exception:
            log.exception("following the graph version after a wake failed; the follow job retries")
