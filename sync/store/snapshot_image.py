"""The built snapshot as a file image: a restart loads it instead of decoding every fact row.

Layout: a fixed header (magic, format, key length, payload length, SHA-256 over key + payload),
the key as JSON, then the payload (the snapshot pickled, protocol 5, by `image_pickling`'s rules).
The key says which graph it is (database, graph version and when it moved, sources, code); a reader
trusts an image only when its key equals the one expected and the digest matches (the key is
compared first: a stale image is rejected without reading its payload). Written to a temporary file, fsynced,
then renamed over the old one: a reader sees the old image or the new one, never half of one.
A lock file (`fcntl.flock`) lets one process write while the others skip.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import hashlib
import io
import json
import os
import pickle
import struct
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from sqlalchemy import Engine, select

from graph.background import step
from graph.snapshot import Snapshot
from sync.store import schema
from sync.store.image_maps import SnapshotPickler

# Of the layout and its payload (2: slots dataclasses as value tuples; 3: entities and edges pickled
# per key, unpickled when read); part of every key.
FORMAT = 3
MAGIC = b"OGSNAP\x00\x01"
HEADER = struct.Struct(">8sIQ32s")  # magic, key length, payload length, digest of key + payload


class ImageRejected(Exception):
    """The image cannot be trusted: the message says why (missing, stale, corrupt)."""


def encode_key(key: Mapping[str, Any]) -> bytes:
    return json.dumps(dict(key), sort_keys=True, separators=(",", ":")).encode()


def holds(path: Path, key: Mapping[str, Any]) -> bool:
    """Whether the image at `path` is a sound one of `key` (digest checked, nothing unpickled)."""
    try:
        _verified_payload(path, key)
    except ImageRejected:
        return False
    return True


def image_key(path: Path) -> dict[str, Any] | None:
    """The key an image says it has (header and key only read, nothing verified); None if unreadable."""
    try:
        with path.open("rb") as file:
            key_length, _, _ = _header(file)
            return _key_of(file.read(key_length))
    except (OSError, ImageRejected):
        return None


def read_image(path: Path, key: Mapping[str, Any]) -> Snapshot:
    """The snapshot in the image at `path` if its key is `key` and its digest holds; else ImageRejected."""
    payload = _verified_payload(path, key)
    try:
        snapshot = loads(payload)
    except (pickle.UnpicklingError, AttributeError, ImportError, EOFError, TypeError, ValueError) as exc:
        raise ImageRejected(f"cannot unpickle it: {exc}") from None
    if not isinstance(snapshot, Snapshot):
        raise ImageRejected(f"holds a {type(snapshot).__name__}, not a snapshot")
    return snapshot


def loads(payload: bytes | memoryview) -> Any:
    """Unpickled with the collector paused: the millions of objects made would set off its full
    passes again and again, each walking every object made so far (at 100k: 7.7 s of the load,
    1.7 s without). The graph holds no reference cycles, so nothing is left for it meanwhile."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(payload)
    finally:
        if collecting:
            gc.enable()


def _verified_payload(path: Path, key: Mapping[str, Any]) -> memoryview:
    """The payload of a sound image of `key`. Its key is judged first: a stale image (a start behind
    pushed deploys finds one) is neither read whole nor hashed, 0.17 s at 100k entities."""
    try:
        with path.open("rb") as file:
            key_length, payload_length, digest = _header(file)
            key_bytes = file.read(key_length)
            _check_key(_key_of(key_bytes), key)
            payload = file.read(payload_length)
    except FileNotFoundError:
        raise ImageRejected("no image yet") from None
    except OSError as exc:
        raise ImageRejected(f"cannot read it: {exc.strerror or exc}") from None
    digest_found = hashlib.sha256(key_bytes)
    digest_found.update(payload)
    if digest_found.digest() != digest:
        raise ImageRejected("checksum mismatch (corrupt)")
    return memoryview(payload)


def _header(file: BinaryIO) -> tuple[int, int, bytes]:
    """(key length, payload length, digest) of the image open in `file`, whose size they must add up to."""
    size = os.fstat(file.fileno()).st_size
    header = file.read(HEADER.size)
    if len(header) < HEADER.size:
        raise ImageRejected(f"truncated: {size} bytes")
    magic, key_length, payload_length, digest = HEADER.unpack(header)
    if magic != MAGIC:
        raise ImageRejected("not an image of this format")
    if size != HEADER.size + key_length + payload_length:
        raise ImageRejected(
            f"truncated or padded: {size} bytes, the header says {HEADER.size + key_length + payload_length}"
        )
    return key_length, payload_length, digest


def _key_of(key_bytes: bytes) -> dict[str, Any]:
    try:
        found = json.loads(key_bytes)
    except ValueError:
        raise ImageRejected("unreadable key") from None
    if not isinstance(found, dict):
        raise ImageRejected("unreadable key")
    return found


def _check_key(found: dict[str, Any], key: Mapping[str, Any]) -> None:
    if found != json.loads(encode_key(key)):
        differs = sorted(k for k in set(found) | set(key) if found.get(k) != key.get(k))
        raise ImageRejected("stale: " + ", ".join(f"{k} {found.get(k)!r}, now {key.get(k)!r}" for k in differs))


def dumps(snapshot: Snapshot) -> bytes:
    """The snapshot with its derived indexes, pickled (protocol 5) by the image's rules."""
    buffer = _SteppingBuffer()
    SnapshotPickler(buffer).dump(snapshot)
    return buffer.getvalue()


class _SteppingBuffer(io.BytesIO):
    """The pickler writes a frame of 64 KB at a time: a step between frames lets answers go first."""

    def write(self, data: Any) -> int:
        step()
        return super().write(data)


def write_image(path: Path, key: Mapping[str, Any], snapshot: Snapshot) -> None:
    """Atomically: a temporary file beside `path`, fsynced, renamed over it, the folder fsynced."""
    key_bytes = encode_key(key)
    payload = dumps(snapshot)
    digest = hashlib.sha256(key_bytes)
    digest.update(payload)  # not key + payload: a copy of 100 MB at 100k entities
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as file:
            file.write(HEADER.pack(MAGIC, len(key_bytes), len(payload), digest.digest()))
            file.write(key_bytes)
            pause = float(os.environ.get("ONCALL_GRAPH_TEST_IMAGE_WRITE_PAUSE", "0") or 0)
            _write_slowly(file, payload, pause)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def _write_slowly(file: Any, payload: bytes, pause: float) -> None:
    # A test setting only: the payload in pieces with a pause between them, so a test can kill the
    # process while the temporary file is half written.
    if pause <= 0:
        file.write(payload)
        return
    import time

    step = max(1, len(payload) // 8)
    for start in range(0, len(payload), step):
        file.write(payload[start : start + step])
        file.flush()
        time.sleep(pause)


def stale_temporaries(path: Path) -> list[Path]:
    """Temporary files of writers that died before their rename."""
    return sorted(path.parent.glob(f".{path.name}.*.tmp"))


@contextlib.contextmanager
def write_lock(path: Path) -> Iterator[bool]:
    """True while this process holds the image's lock file; False when another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def graph_moment(engine: Engine) -> tuple[int, str]:
    """(graph version, when it last moved): a recreated database starts its versions over, its moments never match."""
    g = schema.graph_state
    with engine.connect() as conn:
        row = conn.execute(select(g.c.version, g.c.changed_at).where(g.c.id == 1)).first()
    if row is None:
        return 0, ""
    return int(row[0]), str(row[1])
