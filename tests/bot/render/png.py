"""Reading a PNG's header with the standard library: enough to know a picture is a real image."""

from __future__ import annotations

import struct

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR chunk, which a valid PNG has right after its signature."""
    assert data[:8] == PNG_SIGNATURE, f"not a PNG: starts with {data[:8]!r}"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13, f"first chunk is {kind!r} ({length} bytes), not IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height
