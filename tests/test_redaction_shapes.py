"""The shapes the one redactor recognises, at their edges (docs/cli.md lists them): a GitHub token
is ``gh[pousr]_`` and 36 or more alphanumerics; a password assignment's value counts from 6
characters."""

from __future__ import annotations

import pytest

from nodewright.redact import contains_secret, redact

GH36 = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"  # 36 after the prefix


@pytest.mark.parametrize("prefix", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"])
def test_github_tokens_of_36_characters_are_redacted(prefix: str) -> None:
    token = prefix + GH36[4:]
    assert len(token) == 40
    out = redact(f"token: {token}\n")
    assert token not in out and contains_secret(token)


def test_a_shorter_github_lookalike_is_left_alone() -> None:
    text = "ghp_" + "a" * 20
    assert redact(text) == text


@pytest.mark.parametrize("value", ["s3cr3t", "hunter22", "correct-horse-battery"])
def test_short_passwords_from_six_characters_are_redacted(value: str) -> None:
    for line in (f"password={value}", f'password: "{value}"', f"PASSWD = {value}"):
        assert value not in redact(line), line


def test_a_five_character_password_value_is_not_a_secret_shape() -> None:
    assert "abcde" in redact("password=abcde")
