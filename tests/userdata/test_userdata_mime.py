"""Go MIME semantics: Karpenter's byte-exact mime fixtures and the quirks a faithful port must keep."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from userdata_support import GOLDEN

from nodewright.userdata.al2 import user_parts
from nodewright.userdata.gomime import (
    GoMIMEError,
    Part,
    canonical_header_key,
    go_quote,
    parse_media_type,
    read_multipart,
    write_multipart,
)
from nodewright.userdata.options import UserDataError

MIME = GOLDEN / "mime"
CT = (("Content-Type", 'text/x-shellscript; charset="us-ascii"'),)


def _read(name: str) -> str:
    path = MIME / name
    assert path.exists(), f"missing MIME fixture {path}"
    return path.read_text()


def test_serialize_matches_upstream_mime_valid_byte_for_byte() -> None:
    """aws/karpenter-provider-aws v1.14.1 pkg/providers/amifamily/bootstrap/mime/suite_test.go:
    "should successfully serialize a MIME archive"."""
    parts = [
        Part(headers=(("Content-Type", "application/node.eks.aws"),), body=_read("nodeconfig.txt")),
        Part(headers=CT, body=_read("shell.txt")),
    ]
    assert write_multipart(parts) == _read("mime_valid.txt")


def test_parse_upstream_mime_valid_gives_back_the_bodies() -> None:
    """bootstrap/mime/suite_test.go: "should successfully parse a valid MIME archive"."""
    parts = read_multipart(_read("mime_valid.txt"))
    assert [p.body for p in parts] == [_read("nodeconfig.txt"), _read("shell.txt")]
    assert [p.get("content-type") for p in parts] == ["application/node.eks.aws", CT[0][1]]


def test_upstream_bad_header_fails() -> None:
    """bootstrap/mime/suite_test.go: "should fail to parse MIME archive with a malformed header"."""
    with pytest.raises(GoMIMEError, match=r'missing colon: "MIME_VERSION = 1.0"'):
        read_multipart(_read("mime_bad_header.txt"))


def test_missing_blank_line_gets_karpenters_exact_error() -> None:
    text = 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="BOUNDARY"\n--BOUNDARY\nContent-Type: text/x-shellscript\n\necho\n--BOUNDARY--\n'
    with pytest.raises(UserDataError) as info:
        user_parts(text)
    assert info.value.message.startswith(
        'parsing custom user data input unreadable user data malformed MIME header: missing colon: "--BOUNDARY"'
    )


def test_leading_blank_line_has_no_content_type() -> None:
    with pytest.raises(
        UserDataError, match="user data does not define a content-type header mime: no media type"
    ):
        user_parts('\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\n\nx\n--B--\n')


def test_not_multipart() -> None:
    with pytest.raises(UserDataError, match="user data is not in multipart MIME format"):
        user_parts("Content-Type: text/x-shellscript\n\necho hi\n")


def test_unterminated_archive_is_accepted() -> None:
    parts = read_multipart(
        'Content-Type: multipart/mixed; boundary="//"\n\n--//\nContent-Type: a/b\n\nbody\n--//\n'
    )
    assert [p.body for p in parts] == ["body"]


def test_closing_boundary_without_newline_is_accepted() -> None:
    """Karpenter's e2e hugepage user data (aws/karpenter-provider-aws v1.14.1
    test/suites/consolidation/testdata/hugepage_userdata_input.sh, used by
    "should consolidate a node that matches hugepages resource requests") ends with
    ``--==MYBOUNDARY==`` and no newline: Go's NextPart returns a wrapped io.EOF, which Karpenter's
    ``errors.Is(err, io.EOF)`` loop treats as the end."""
    text = (MIME / "hugepage_userdata_input.sh").read_text()
    assert text.endswith("--==MYBOUNDARY==")
    (part,) = read_multipart(text)
    assert part.body.startswith("#!/bin/bash -e\n") and part.body.endswith('finished successfully."')
    for tail in ("", "\n", "--", "--\n"):
        assert [p.body for p in read_multipart(text + tail)] == [part.body]
    with pytest.raises(GoMIMEError, match="unexpected EOF"):
        read_multipart(text + "-")


def test_body_ending_without_a_boundary_is_unexpected_eof() -> None:
    with pytest.raises(GoMIMEError, match="unexpected EOF"):
        read_multipart(
            'Content-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: a/b\n\nbody with no end\n'
        )


def test_fake_boundary_inside_a_body_is_data() -> None:
    text = 'Content-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: a/b\n\nline\n--Bogus line\nend\n--B--\n'
    assert read_multipart(text)[0].body == "line\n--Bogus line\nend"


def test_crlf_quoted_printable_and_continuation_lines() -> None:
    text = (
        'Content-Type: multipart/mixed;\r\n boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n'
        "Content-Transfer-Encoding: quoted-printable\r\nx-custom:  v\r\n\r\ncaf=C3=A9 =\r\nsoft\r\n--B--\r\n"
    )
    (part,) = read_multipart(text)
    assert part.headers == (("Content-Type", "text/plain"), ("X-Custom", "v"))
    assert part.body == "café soft"


def test_empty_part_without_newline() -> None:
    parts = read_multipart('Content-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: a/b\n\n--B--\n')
    assert parts == [Part(headers=(("Content-Type", "a/b"),), body="")]


def test_unexpected_line_between_parts() -> None:
    text = 'Content-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: a/b\n\nx\n--B--tail\n'
    with pytest.raises(GoMIMEError, match=re.escape('expecting a new Part; got line "--B--tail\\n"')):
        read_multipart(text)


def test_header_keys_and_media_types() -> None:
    assert canonical_header_key("content-type") == "Content-Type"
    # Go's textproto has no exception for MIME-Version / Content-ID (commonHeader interns the
    # canonical spellings "Mime-Version" and "Content-Id"): Karpenter's AL2 merge writes them so.
    assert canonical_header_key("mime-version") == "Mime-Version"
    assert canonical_header_key("MIME-Version") == "Mime-Version"
    assert canonical_header_key("Content-ID") == "Content-Id"
    assert canonical_header_key("X-Custom Key") == "X-Custom Key"
    assert parse_media_type('multipart/mixed; boundary="//"') == ("multipart/mixed", {"boundary": "//"})
    for bad, message in [
        ("", "no media type"),
        ("text/", "expected token after slash"),
        ("a/b; =x", "invalid media parameter"),
    ]:
        with pytest.raises(GoMIMEError, match=message):
            parse_media_type(bad)
    assert go_quote('a"b\n') == '"a\\"b\\n"'


def test_writer_sorts_header_keys_and_strips_cr() -> None:
    part = Part(headers=(("Z-Last", "1"), ("Content-Type", "a/b"), ("Z-Last", "2")), body="x\r\ny")
    assert write_multipart([part]) == (
        'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n'
        "--//\nContent-Type: a/b\nZ-Last: 1\nZ-Last: 2\n\nx\ny\n--//--\n"
    )


def test_fixture_files_exist() -> None:
    for name in ("mime_valid.txt", "mime_bad_header.txt", "nodeconfig.txt", "shell.txt"):
        assert Path(MIME / name).exists(), name
