"""PagerDuty v3 webhook signatures (`X-PagerDuty-Signature`), checked over the raw request body.

PagerDuty signs the body it sent, byte for byte, with HMAC-SHA256 under each of the
subscription's secrets and sends every result as `v1=<hex>`, comma-separated — several while a
secret is being rotated. A delivery is authentic when any signature matches any secret we hold.
Pure: no I/O; comparisons are constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

HEADER = "X-PagerDuty-Signature"
VERSION = "v1"


def sign(body: bytes, secret: str) -> str:
    """The `v1=<hex>` signature PagerDuty sends for `body` under `secret`."""
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return f"{VERSION}={digest}"


def signatures(header: str) -> tuple[bytes, ...]:
    """The `v1` signatures of a header value, as bytes (other versions are skipped, as PagerDuty asks)."""
    found = []
    for item in header.split(","):
        version, sep, value = item.strip().partition("=")
        if sep and version == VERSION and value:
            # Bytes, so that compare_digest never meets a non-ASCII str (it raises TypeError on one).
            found.append(f"{VERSION}={value.strip().lower()}".encode("utf-8", "replace"))
    return tuple(found)


def verify(body: bytes, header: str | None, secrets: Sequence[str]) -> bool:
    """True when one of the header's signatures is `body` signed with one of `secrets`."""
    if not header or not secrets:
        return False
    given = signatures(header)
    expected = [sign(body, secret).encode("ascii") for secret in secrets if secret]
    matched = False
    for candidate in given:
        for wanted in expected:
            # No early exit: the time taken does not tell which signature or secret matched.
            matched |= hmac.compare_digest(candidate, wanted)
    return matched
