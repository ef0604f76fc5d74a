"""X-PagerDuty-Signature: HMAC-SHA256 of the raw body, one or more `v1=<hex>`, any match accepts."""

from __future__ import annotations

import hashlib
import hmac
import json

from bot.pagerduty.signature import sign, signatures, verify

BODY = b'{"event":{"id":"01","event_type":"incident.triggered"}}'


def hmac_v1(body: bytes, secret: str) -> str:
    """Written here from PagerDuty's docs, independently of the code under test."""
    return "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_sign_is_pagerdutys_v1_hmac_sha256_of_the_body() -> None:
    assert sign(BODY, "s3cret") == hmac_v1(BODY, "s3cret")
    assert len(sign(BODY, "s3cret")) == len("v1=") + 64


def test_a_single_matching_signature_is_accepted() -> None:
    assert verify(BODY, hmac_v1(BODY, "s3cret"), ["s3cret"])


def test_during_a_rotation_any_signature_matching_any_secret_is_accepted() -> None:
    header = f"{hmac_v1(BODY, 'old-secret')},{hmac_v1(BODY, 'new-secret')}"
    assert verify(BODY, header, ["new-secret"])
    assert verify(BODY, header, ["old-secret"])
    assert verify(BODY, hmac_v1(BODY, "new-secret"), ["old-secret", "new-secret"])
    assert verify(BODY, f"{hmac_v1(BODY, 'old-secret')} , {hmac_v1(BODY, 'new-secret')}", ["new-secret"])


def test_a_tampered_body_or_a_wrong_secret_is_refused() -> None:
    header = hmac_v1(BODY, "s3cret")
    assert not verify(BODY.replace(b"triggered", b"resolved"), header, ["s3cret"])
    assert not verify(BODY + b" ", header, ["s3cret"])
    assert not verify(BODY, header, ["other"])


def test_no_header_no_secret_or_no_v1_signature_is_refused() -> None:
    header = hmac_v1(BODY, "s3cret")
    assert not verify(BODY, None, ["s3cret"])
    assert not verify(BODY, "", ["s3cret"])
    assert not verify(BODY, header, [])
    assert not verify(BODY, header, [""])
    assert not verify(BODY, header.replace("v1=", "v2="), ["s3cret"])
    assert not verify(BODY, header.removeprefix("v1="), ["s3cret"])


def test_garbage_and_non_ascii_headers_are_refused_without_raising() -> None:
    for header in ("v1=", "v1=é✓", ",,,", "v1=zz,=,v1", "v1=" + "0" * 64):
        assert not verify(BODY, header, ["s3cret"])
    assert signatures("v1=AB, v2=cd ,v1=ef") == (b"v1=ab", b"v1=ef")


def test_a_unicode_body_is_verified_over_its_raw_utf8_bytes() -> None:
    event = {"event": {"event_type": "incident.triggered", "data": {"title": "Zahlungsdienst gestört ⚠ 支付"}}}
    raw = json.dumps(event, ensure_ascii=False).encode("utf-8")
    header = hmac_v1(raw, "s3cret")
    assert verify(raw, header, ["s3cret"])
    reencoded = json.dumps(json.loads(raw)).encode()  # same JSON, \u escapes: not the bytes PagerDuty signed
    assert reencoded != raw and not verify(reencoded, header, ["s3cret"])
