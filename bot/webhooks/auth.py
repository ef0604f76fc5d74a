"""Who may push deploys: `sha256=<hex>` HMAC signatures over the raw body (GitHub's
`X-Hub-Signature-256`, our `X-Signature-256`) and bearer tokens. Pure; every comparison is
constant-time and runs over every secret, so the time taken tells nothing of which matched.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

PREFIX = "sha256="


def sign(body: bytes, secret: str) -> str:
    """The `sha256=<hex>` header value for `body` under `secret`."""
    return PREFIX + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def signed_by_any(body: bytes, header: str | None, secrets: Sequence[str]) -> bool:
    """True when the header is `body` signed with one of `secrets` (several during a rotation)."""
    if not header or not secrets:
        return False
    # Bytes, so that compare_digest never meets a non-ASCII str (it raises TypeError on one).
    given = header.strip().lower().encode("utf-8", "replace")
    matched = False
    for secret in secrets:
        matched |= hmac.compare_digest(given, sign(body, secret).encode("ascii"))
    return matched


def bearer_of(header: str | None) -> str:
    """The token of an `Authorization: Bearer TOKEN` header; empty when there is none."""
    scheme, _, token = (header or "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def token_matches(token: str, tokens: Sequence[str]) -> bool:
    if not token or not tokens:
        return False
    given = token.encode("utf-8", "replace")
    matched = False
    for wanted in tokens:
        matched |= hmac.compare_digest(given, wanted.encode("utf-8"))
    return matched
