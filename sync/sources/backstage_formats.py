"""Backstage's field formats, as `@backstage/catalog-model` checks them (`KubernetesValidatorFunctions`,
`CommonValidatorFunctions` and `makeValidator`'s defaults, which its `FieldFormatEntityPolicy` applies
to every entity the catalog processes). A value failing one of these is refused by Backstage.

Pure. The patterns are JavaScript's, anchored the same way (`fullmatch`: a trailing newline does not
match, as in JavaScript). Lengths count characters; a value that passes a pattern is ASCII, where
JavaScript's UTF-16 length is the same.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

_OBJECT_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS_LABEL = re.compile(r"[a-z0-9]+(?:-+[a-z0-9]+)*")
_KIND = re.compile(r"[a-zA-Z][a-z0-9A-Z]*")
_API_VERSION_SUFFIX = re.compile(r"[a-z0-9A-Z]+")
# makeValidator's tag rule, which the catalog applies (CommonValidatorFunctions.isValidTag, deprecated,
# has no `:`).
_TAG = re.compile(r"[a-z0-9:+#]+(?:-[a-z0-9:+#]+)*")
_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
# WHATWG URL "special" schemes: `new URL` refuses them without a host.
_HOSTED_SCHEMES = frozenset({"http", "https", "ftp", "ws", "wss"})
# WHATWG's forbidden domain code points (control characters aside).
_FORBIDDEN_IN_HOST = frozenset(" \t\n\r#%/:<>?@[\\]^|")
_AUTHORITY_END = re.compile(r"[/\\?#]")


def is_valid_object_name(value: object) -> bool:
    """`metadata.name`: 1-63 of `[A-Za-z0-9-_.]`, starting and ending with a letter or digit."""
    return isinstance(value, str) and 1 <= len(value) <= 63 and _OBJECT_NAME.fullmatch(value) is not None


def is_valid_dns_label(value: object) -> bool:
    """RFC 1123 label: 1-63 of lower-case letters and digits, runs joined by hyphens."""
    return isinstance(value, str) and 1 <= len(value) <= 63 and _DNS_LABEL.fullmatch(value) is not None


def is_valid_dns_subdomain(value: object) -> bool:
    """RFC 1123 subdomain: at most 253 characters of dot-separated DNS labels."""
    return isinstance(value, str) and 1 <= len(value) <= 253 and all(map(is_valid_dns_label, value.split(".")))


def is_valid_namespace(value: object) -> bool:
    """`metadata.namespace`: a DNS label, so lower-case only."""
    return is_valid_dns_label(value)


def is_valid_kind(value: object) -> bool:
    """`kind`: 1-63 letters and digits, starting with a letter (case is kept: `Component`)."""
    return isinstance(value, str) and 1 <= len(value) <= 63 and _KIND.fullmatch(value) is not None


def is_valid_api_version(value: object) -> bool:
    """`apiVersion`: `[DNS subdomain/]version`, the version 1-63 letters and digits."""
    return _prefix_and_or_suffix(value, is_valid_dns_subdomain, _is_version)


def is_valid_label_key(value: object) -> bool:
    """A label key: `[DNS subdomain/]name`."""
    return _prefix_and_or_suffix(value, is_valid_dns_subdomain, is_valid_object_name)


def is_valid_label_value(value: object) -> bool:
    """A label value: empty, or an object name."""
    return value == "" or is_valid_object_name(value)


def is_valid_annotation_key(value: object) -> bool:
    """An annotation key: `[DNS subdomain/]name`, as a label key."""
    return _prefix_and_or_suffix(value, is_valid_dns_subdomain, is_valid_object_name)


def is_valid_annotation_value(value: object) -> bool:
    """An annotation value: any text."""
    return isinstance(value, str)


def is_valid_tag(value: object) -> bool:
    """A tag: 1-63 of lower-case letters, digits, `:`, `+` and `#`, runs joined by single hyphens."""
    return isinstance(value, str) and 1 <= len(value) <= 63 and _TAG.fullmatch(value) is not None


def is_valid_url(value: object) -> bool:
    """A link's `url`: what `new URL(value)` accepts, near enough: an absolute URL with a scheme, and
    a host with a valid port for the web's schemes (`http://` alone is refused, `mailto:a@b` accepted).
    Fuzzed against Backstage's own check, it differs only on hosts nobody writes (`.1`, which WHATWG
    reads as an IPv4 address and refuses; brackets after a scheme that is not a web one)."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    scheme, colon, rest = text.partition(":")
    if not colon or _URL_SCHEME.fullmatch(scheme) is None:
        return False
    if scheme.lower() not in _HOSTED_SCHEMES:
        return True
    authority = _AUTHORITY_END.split(rest.lstrip("/\\"), maxsplit=1)[0]
    host, port = _host_and_port(authority.rpartition("@")[2])
    return _is_host(host) and (not port or (port.isdigit() and int(port) <= 65535))


def is_non_empty_text(value: object) -> bool:
    """A link's `title` or `icon`: text that is not blank."""
    return isinstance(value, str) and bool(value.strip())


def _is_host(host: str) -> bool:
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host.removeprefix("[").removesuffix("]"))
        except ValueError:
            return False
        return host.endswith("]")
    return bool(host) and _FORBIDDEN_IN_HOST.isdisjoint(host)


def _host_and_port(text: str) -> tuple[str, str]:
    if text.startswith("["):  # an IPv6 address: its colons are no port
        host, _, after = text.partition("]")
        return host + "]", after.removeprefix(":")
    host, colon, port = text.rpartition(":")
    return (host, port) if colon else (text, "")


def _is_version(value: str) -> bool:
    return 1 <= len(value) <= 63 and _API_VERSION_SUFFIX.fullmatch(value) is not None


def _prefix_and_or_suffix(value: object, prefix: Callable[[str], bool], suffix: Callable[[str], bool]) -> bool:
    """`suffix` or `prefix/suffix`, each part checked alone; more than one `/` is refused."""
    if not isinstance(value, str):
        return False
    parts = value.split("/")
    if len(parts) == 1:
        return suffix(parts[0])
    return len(parts) == 2 and prefix(parts[0]) and suffix(parts[1])
