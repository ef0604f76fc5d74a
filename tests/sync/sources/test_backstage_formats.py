"""Backstage's field formats, value by value: each table holds what `@backstage/catalog-model`'s own
validators (KubernetesValidatorFunctions, makeValidator's defaults) accept and refuse."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sync.sources.backstage_formats import (
    is_valid_annotation_key,
    is_valid_annotation_value,
    is_valid_api_version,
    is_valid_kind,
    is_valid_label_key,
    is_valid_label_value,
    is_valid_namespace,
    is_valid_object_name,
    is_valid_tag,
    is_valid_url,
)

Check = Callable[[object], bool]

VALID: list[tuple[Check, object]] = [
    (is_valid_object_name, "a"),
    (is_valid_object_name, "A1"),
    (is_valid_object_name, "dev--portal"),  # runs of separators are fine
    (is_valid_object_name, "a.b_c-d"),
    (is_valid_object_name, "double__underscore"),
    (is_valid_object_name, "a..b"),
    (is_valid_object_name, "Payments_API.v2"),
    (is_valid_object_name, "x" * 63),
    (is_valid_namespace, "default"),
    (is_valid_namespace, "team-a"),
    (is_valid_namespace, "team--a"),
    (is_valid_namespace, "123"),
    (is_valid_namespace, "n" * 63),
    (is_valid_kind, "Component"),
    (is_valid_kind, "component"),  # a valid format: the kind schemas refuse it, not this rule
    (is_valid_kind, "API"),
    (is_valid_kind, "X1"),
    (is_valid_kind, "k" * 63),
    (is_valid_api_version, "backstage.io/v1alpha1"),
    (is_valid_api_version, "backstage.io/v1"),  # a valid format: the kind schemas refuse it
    (is_valid_api_version, "v1"),
    (is_valid_api_version, "scaffolder.backstage.io/v1beta3"),
    (is_valid_label_key, "tier"),
    (is_valid_label_key, "example.com/tier"),
    (is_valid_label_key, "example.com/Tier_1"),
    (is_valid_label_value, ""),
    (is_valid_label_value, "gold"),
    (is_valid_label_value, "Gold-1.2_b"),
    (is_valid_annotation_key, "backstage.io/techdocs-ref"),
    (is_valid_annotation_key, "github.com/project-slug"),
    (is_valid_annotation_key, "oncall-graph/aliases"),
    (is_valid_annotation_key, "plain"),
    (is_valid_annotation_value, ""),
    (is_valid_annotation_value, "url:https://x.example/a b"),
    (is_valid_tag, "java"),
    (is_valid_tag, "c++"),
    (is_valid_tag, "c#"),
    (is_valid_tag, "tier:1"),
    (is_valid_tag, "data-platform"),
    (is_valid_tag, "t" * 63),
    (is_valid_url, "https://example.com/a?b=c"),
    (is_valid_url, "http://localhost:3000"),
    (is_valid_url, "mailto:team@example.com"),
    (is_valid_url, "slack:channel"),
]

INVALID: list[tuple[Check, object]] = [
    (is_valid_object_name, ""),
    (is_valid_object_name, "x" * 64),
    (is_valid_object_name, "-leading"),
    (is_valid_object_name, "trailing-"),
    (is_valid_object_name, "trailing."),
    (is_valid_object_name, "_under"),
    (is_valid_object_name, "bad name"),
    (is_valid_object_name, "bad!"),
    (is_valid_object_name, "a/b"),
    (is_valid_object_name, "name\n"),  # JavaScript's `$` does not match before a final newline
    (is_valid_object_name, "naïve"),
    (is_valid_object_name, 12),
    (is_valid_object_name, None),
    (is_valid_namespace, "Payments"),  # lower-case only
    (is_valid_namespace, "team_a"),
    (is_valid_namespace, "team.a"),
    (is_valid_namespace, "-a"),
    (is_valid_namespace, "a-"),
    (is_valid_namespace, ""),
    (is_valid_namespace, "n" * 64),
    (is_valid_kind, ""),
    (is_valid_kind, "1Component"),
    (is_valid_kind, "My-Kind"),
    (is_valid_kind, "k" * 64),
    (is_valid_api_version, "backstage.io/"),
    (is_valid_api_version, "Backstage.io/v1alpha1"),  # the prefix is a DNS subdomain: lower-case
    (is_valid_api_version, "backstage.io/v1/alpha"),
    (is_valid_api_version, "backstage.io/v1-alpha"),
    (is_valid_api_version, ""),
    (is_valid_label_key, ""),
    (is_valid_label_key, "a/b/c"),
    (is_valid_label_key, "Example.com/tier"),
    (is_valid_label_key, "example.com/"),
    (is_valid_label_key, "tier!"),
    (is_valid_label_value, "gold plated"),
    (is_valid_label_value, "-gold"),
    (is_valid_label_value, 3),
    (is_valid_label_value, None),
    (is_valid_annotation_key, "backstage.io/"),
    (is_valid_annotation_key, "has space"),
    (is_valid_annotation_key, "a/b/c"),
    (is_valid_annotation_key, "Backstage.io/x"),
    (is_valid_annotation_key, "example.com/-x"),
    (is_valid_annotation_value, 3),
    (is_valid_annotation_value, None),
    (is_valid_tag, ""),
    (is_valid_tag, "Java"),
    (is_valid_tag, "data_platform"),
    (is_valid_tag, "a--b"),
    (is_valid_tag, "-a"),
    (is_valid_tag, "with space"),
    (is_valid_tag, "t" * 64),
    (is_valid_tag, 1),
    (is_valid_url, "example.com"),
    (is_valid_url, "/relative/path"),
    (is_valid_url, "http://"),
    (is_valid_url, ""),
    (is_valid_url, None),
]


@pytest.mark.parametrize(("check", "value"), VALID, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_backstage_accepts(check: Check, value: object) -> None:
    assert check(value)


@pytest.mark.parametrize(("check", "value"), INVALID, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_backstage_refuses(check: Check, value: object) -> None:
    assert not check(value)
