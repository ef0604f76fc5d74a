"""Deploy webhook signatures and tokens: HMAC-SHA256 over the raw body, any of several secrets."""

from __future__ import annotations

import hashlib
import hmac

from bot.webhooks.auth import bearer_of, sign, signed_by_any, token_matches

BODY = b'{"id": "r1", "service": "antifraud", "deployed_at": "2026-12-01T10:00:00Z"}'


def test_a_signature_is_hmac_sha256_of_the_raw_body_as_github_sends_it() -> None:
    assert sign(BODY, "s3cret") == "sha256=" + hmac.new(b"s3cret", BODY, hashlib.sha256).hexdigest()


def test_any_secret_of_a_rotation_verifies_and_a_changed_body_does_not() -> None:
    header = sign(BODY, "old")
    assert signed_by_any(BODY, header, ["new", "old"])
    assert signed_by_any(BODY, header.upper().replace("SHA256=", "sha256="), ["old"])  # hex case is free
    assert not signed_by_any(BODY + b" ", header, ["new", "old"])
    assert not signed_by_any(BODY, header, ["new"])
    assert not signed_by_any(BODY, "sha256=é", ["old"])  # non-ASCII never raises
    assert not signed_by_any(BODY, None, ["old"]) and not signed_by_any(BODY, header, [])


def test_bearer_tokens_are_read_from_the_authorization_header() -> None:
    assert bearer_of("Bearer abc") == "abc" and bearer_of("bearer  abc ") == "abc"
    assert bearer_of("Basic abc") == "" and bearer_of(None) == ""
    assert token_matches("abc", ["zzz", "abc"]) and not token_matches("abd", ["abc"])
    assert not token_matches("", ["abc"]) and not token_matches("abc", [])
