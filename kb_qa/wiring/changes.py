"""File changes that keep each file as it was stored: its encoding (a Latin-1 page stays
Latin-1, UTF-16 keeps its BOM) and its line endings (CRLF stays), shown as a diff and
applied all or nothing by ``kb_qa.wiring.plan.Plan``.
"""

from __future__ import annotations

import codecs
import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from kb_qa.errors import ConfigError


@dataclass(frozen=True)
class Encoding:
    """How a file's text is stored: its codec and whether its lines end in CRLF."""

    codec: str = "utf-8"
    crlf: bool = False
    html: bool = False  # characters the codec lacks become character references

    def encode(self, text: str) -> bytes:
        """``text`` (LF line ends) as the file's bytes."""
        if self.crlf:
            text = text.replace("\n", "\r\n")
        return text.encode(self.codec, errors="xmlcharrefreplace" if self.html else "strict")


_CHARSET_RE = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_.:-]+)", re.IGNORECASE)


def read_text(path: Path, *, page: bool = False) -> tuple[str, Encoding]:
    """A file's text with LF line ends, and how to write it back the same way.

    Configs must be UTF-8 (or UTF-16/UTF-8 with a BOM), as MkDocs and Zensical read them;
    a page that is not UTF-8 is read in the charset its ``<meta>`` declares, else Latin-1
    (which gives every byte back unchanged)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    if data.startswith(codecs.BOM_UTF8):
        codec = "utf-8-sig"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        codec = "utf-16"
    else:
        codec = "utf-8"
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        if not page:
            raise ConfigError(
                f"{path} is not UTF-8 (byte {exc.start} cannot be read), so kb-qa init "
                "would corrupt it, and MkDocs and Zensical read it as UTF-8. Save it as "
                "UTF-8 and run again."
            ) from exc
        codec, text = _page_text(data)
    crlf = text.count("\r\n") * 2 > text.count("\n")
    return text.replace("\r\n", "\n") if crlf else text, Encoding(codec, crlf, page)


def _page_text(data: bytes) -> tuple[str, str]:
    """(codec, text) of a page that is not UTF-8."""
    declared = _CHARSET_RE.search(data[:4096])
    if declared:
        name = declared.group(1).decode("ascii")
        try:
            codecs.lookup(name)
            return name, data.decode(name)
        except (LookupError, UnicodeDecodeError):
            pass
    return "latin-1", data.decode("latin-1")


@dataclass
class Change:
    """One file as it is and as ``init`` would leave it (``before`` None: a new file)."""

    path: Path
    before: str | None
    after: str
    encoding: Encoding = field(default_factory=Encoding)

    def diff(self, root: Path) -> str:
        """A unified diff relative to ``root``."""
        name = (
            self.path.relative_to(root).as_posix()
            if self.path.is_relative_to(root)
            else str(self.path)
        )
        before = (self.before or "").splitlines(keepends=True)
        lines = difflib.unified_diff(
            before,
            self.after.splitlines(keepends=True),
            "/dev/null" if self.before is None else f"a/{name}",
            f"b/{name}",
        )
        text = "".join(lines)
        return text if text.endswith("\n") else text + "\n"


def file_changes(target: Path, wanted: dict[str, str]) -> list[Change]:
    changes = []
    for name, text in wanted.items():
        path = target / name
        before = read_text(path)[0] if path.is_file() and not path.is_symlink() else None
        if before != text:
            changes.append(Change(path, before, text))
    return changes


def change_of(
    path: Path, before: str, after: str, encoding: Encoding | None = None
) -> Change | None:
    return Change(path, before, after, encoding or Encoding()) if after != before else None
