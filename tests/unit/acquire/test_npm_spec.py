"""`npm:NAME@VERSION` read: one exact version of a (scoped) package, anything else one line."""

from __future__ import annotations

import pytest

from replicate.acquire.npm import is_npm_spec, parse_npm_pin
from replicate.errors import ReplicateError


@pytest.mark.parametrize(
    ("spec", "pin"),
    [
        ("npm:minimist@1.2.8", ("minimist", "1.2.8")),
        (" npm:qs@6.13.0 ", ("qs", "6.13.0")),
        ("npm:@scope/pkg.js@2.0.0-beta.1", ("@scope/pkg.js", "2.0.0-beta.1")),
    ],
)
def test_a_pin_is_read(spec: str, pin: tuple[str, str]) -> None:
    assert is_npm_spec(spec)
    assert parse_npm_pin(spec) == pin


@pytest.mark.parametrize(
    "spec",
    ["npm:", "npm:x@", "npm:x", "npm:@1.0.0", "npm:x@^1.0.0", "npm:x@latest", "npm:X Y@1.0.0"],
)
def test_anything_else_is_one_line(spec: str) -> None:
    with pytest.raises(ReplicateError, match="npm:NAME@VERSION") as caught:
        parse_npm_pin(spec)
    assert "\n" not in str(caught.value)


def test_other_sources_are_not_npm() -> None:
    assert not is_npm_spec("pypi:tomli==2.0.1")
    assert not is_npm_spec("/some/npm:path")
