"""A file's bytes as text, as indexing reads it and ``/view`` shows it: UTF-8; UTF-16 and
UTF-32 by their byte order mark; a legacy code page (``legacy_text``) for bytes that are
mostly not UTF-8; and binary files told apart, UTF-16 without its mark among them.
"""

from __future__ import annotations

import codecs
import re

from kb_qa.ingest.legacy_text import decode_legacy

__all__ = ["HEAD_BYTES", "binary_reason", "decode", "is_binary"]

HEAD_BYTES = 8192  # how much of a file is_binary and binary_reason read

# Byte order marks, longest first: UTF-32 LE's (FF FE 00 00) opens with UTF-16 LE's.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_NOT_ASCII = re.compile("[^\x00-\x7f\ufffd]")  # a character UTF-8 decoded, not replaced


def is_binary(data: bytes) -> bool:
    """Whether a file's bytes are not text: a NUL in its first 8 KB, unless it opens with
    UTF-16's byte order mark (Notepad's "Unicode") or UTF-32's."""
    return b"\x00" in data[:HEAD_BYTES] and not _bom_codec(data)


def _bom_codec(data: bytes) -> str:
    """The codec a byte order mark at the start of ``data`` names ("" when none does)."""
    return next((codec for bom, codec in _BOMS if data.startswith(bom)), "")


def binary_reason(data: bytes) -> str:
    """Why a binary file is not read: UTF-16 without its byte order mark (ASCII's NULs on
    every other byte) is told apart from bytes that are no text at all."""
    head = data[:HEAD_BYTES]
    odd, even = head[1::2].count(0), head[0::2].count(0)
    half = len(head) // 2
    if len(head) >= 4 and ((even == 0 and odd * 2 >= half) or (odd == 0 and even * 2 >= half)):
        return (
            "UTF-16 text without a byte order mark: save it as UTF-8 (or as UTF-16 with a "
            'byte order mark, Notepad\'s "Unicode") to index it'
        )
    return "binary file with a Markdown extension (contains NUL bytes)"


def decode(data: bytes) -> tuple[str, str]:
    """A file's text, and a warning when it is not UTF-8 ("" when it is), as indexing reads
    it and ``/view`` shows it: UTF-16 and UTF-32 by their byte order mark; bytes that are mostly not
    UTF-8 in the legacy code page they are written in (``legacy_text``: Windows-1252,
    Notepad's "ANSI" in Western Europe and the Americas, unless they read as Cyrillic,
    Greek, Japanese, Chinese or Korean in another); UTF-8 with a few damaged bytes as
    UTF-8, those bytes replaced with U+FFFD."""
    codec = _bom_codec(data) or "utf-8"
    try:
        return data.decode(codec), ""
    except UnicodeDecodeError as exc:
        text = data.decode(codec, errors="replace")
        # More bytes no UTF-8 than letters of it (Shift JIS pairs may read as UTF-8 by chance)
        if codec == "utf-8" and text.count("\ufffd") > len(_NOT_ASCII.findall(text)):
            legacy, name = decode_legacy(data)
            return legacy, f"not UTF-8, read as {name}: if its letters show wrong, save it as UTF-8"
        return text, (
            f"invalid {codec.upper()} at byte {exc.start}; undecodable bytes were "
            "replaced with U+FFFD"
        )
