"""What the commands share: settings from the arguments, opening the knowledge base, the
index run's summary, the question rules of the API, and text made safe for a terminal.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kb_qa.errors import (
    USE_UTF8_LOCALE,
    ConfigError,
    IndexBusyError,
    IndexStateError,
    KbQaError,
    folder_is_file,
    misread_by_locale,
)
from kb_qa.settings import Settings
from kb_qa.text import BIDI_CONTROLS
from kb_qa.types import Chunk, IndexReport

if TYPE_CHECKING:  # imported by the commands that open one, not by every command
    from kb_qa.answer.citations import Citation
    from kb_qa.kb.knowledge_base import KnowledgeBase


def settings_for(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        args.vault,
        index_dir=args.index_dir,
        chroma_url=args.chroma_url,
        workspace=args.workspace,
        embed_model=args.embed_model,
        chunk_chars=args.chunk_chars,
        config_file=args.config_file,
        model=getattr(args, "model", None),
        api_base=getattr(args, "api_base", None),
        host=getattr(args, "host", None),
        port=getattr(args, "port", None),
    )


def open_kb(args: argparse.Namespace) -> KnowledgeBase:
    from kb_qa.kb.knowledge_base import KnowledgeBase

    return KnowledgeBase(settings=settings_for(args))


def open_index(args: argparse.Namespace) -> KnowledgeBase:
    """``open_kb`` for the commands that only read an index (search, ask, eval): where
    there is none yet they say so and create nothing in the vault."""
    settings = settings_for(args)
    from kb_qa.index.store import MANIFEST, check_vault

    if not settings.chroma_url and not (settings.index_path / MANIFEST).is_file():
        check_vault(settings)
        if settings.index_path.exists() and not settings.index_path.is_dir():
            raise folder_is_file(settings.index_path)
        if _without_markdown(settings.vault):  # `kb-qa index` made no index of it
            raise IndexStateError(no_markdown(settings.vault, "there is no index", when=""))
        require_index(0)
    return open_kb(args)


def _without_markdown(folder: Path, look: int = 20_000) -> bool:
    """Whether ``folder`` holds no Markdown file, as far as its first ``look`` entries
    show (a home folder is not walked whole to say so)."""
    for seen, path in enumerate(folder.rglob("*")):
        if path.suffix.lower() == ".md" or seen >= look:
            return False
    return folder.is_dir()


def report_summary(report: IndexReport, vault: Path | None = None) -> str:
    """What an index run did, as the CLI and the servers' logs say it; with ``vault``, that
    it found no Markdown there when it found nothing (a server goes on, watching for some)."""
    lines = []
    if report.rebuilt:
        lines.append(f"Rebuilt: {report.rebuilt}")
    if report.repaired:
        lines.append(f"Repaired: {report.repaired}")
    if report.model:
        lines.append(f"Model: {report.model}")
    lines.append(
        f"Indexed {report.files} files, {report.chunks} chunks in {report.seconds:.1f} s "
        f"({report.changed_files} files changed; {report.embedded} chunks embedded, "
        f"{report.reused} reused, {report.deleted} deleted)."
    )
    if report.embedded:  # a run that did real work says where its time went
        lines.append(f"Time: {report.spent}.")
    if report.warnings:
        lines.append(f"{len(report.warnings)} warning(s):")
        lines += [
            f"  {safe_text(path)}: {safe_warning(message)}"
            if path
            else f"  {safe_warning(message)}"
            for path, message in report.warnings
        ]
    if report.skipped:
        lines.append(f"Skipped {len(report.skipped)} file(s):")
        lines += [f"  {safe_text(path)}: {safe_warning(reason)}" for path, reason in report.skipped]
    if vault is not None and not report.files and not report.skipped:
        lines.append(no_markdown(vault, "Nothing to answer from yet"))
    return "\n".join(lines)


def no_markdown(vault: Path, said: str, when: str = " when it was indexed") -> str:
    """What an index of no section says: the vault held no Markdown when it was read."""
    return (
        f"{said}: no Markdown files (.md) were found in {vault}{when}. Point "
        "--vault (or the folder argument) at your notes, or at the folder holding the site's "
        "mkdocs.yml, zensical.toml, docusaurus.config.js (whose .mdx pages are read too), "
        "hugo.toml (whose pages are in content/), book.toml (mdBook: the chapters SUMMARY.md "
        "lists) or .vitepress/; "
        "files excluded by the site's config are not indexed, and `kb-qa index` lists every "
        "other file it skipped, and why."
    )


def require_index(chunks: int, kb: KnowledgeBase | None = None) -> str:
    """Refuse an empty index; while another process writes it (``kb``'s write lock is
    held), say so, and that results may be incomplete; when the next index run will
    rebuild it (an older kb-qa built it, a setting changed), say so too: these commands
    read it as it is. Returns what it said ("" when nothing)."""
    busy = kb is not None and kb.store.being_written()
    if not chunks and busy:
        raise IndexBusyError(
            "another kb-qa process is building the index right now: try again when it is done."
        )
    if not chunks and kb is not None and kb.store.meta("rebuilding") == "1":
        raise IndexStateError(
            "the index is empty: a rebuild of it was stopped before it finished. Run "
            "`kb-qa index` to finish it."
        )
    if not chunks and kb is not None and kb.store.meta("last_indexed"):
        raise IndexStateError(no_markdown(kb.settings.vault, "the index is empty"))
    if not chunks:
        raise IndexStateError("the index is empty. Run `kb-qa index` on the vault first.")
    said = ""
    if busy:
        said = "another kb-qa process is updating the index: results may be incomplete."
    elif kb is not None and kb.store.meta("writing") == "1":
        said = (
            "the last index run was stopped while writing: results may be incomplete. "
            "`kb-qa index` finishes it."
        )
    elif kb is not None:
        try:
            why, changed = _staleness(kb)
        except KbQaError:  # a site config that cannot load now: the index run will say so
            why, changed = "", 0
        if why:
            said = (
                f"the index needs rebuilding: {why}. These results come from it as it was "
                "built; `kb-qa index` rebuilds it."
            )
        elif changed:  # a docs change eval would otherwise score the old pages of
            said = (
                f"{changed} indexed file(s) changed or were deleted since the index was "
                "built: these results come from it as it was. `kb-qa index` updates it."
            )
    if said:
        print(f"kb-qa: {safe_warning(said)}", file=sys.stderr)
    return said


def _staleness(kb: KnowledgeBase) -> tuple[str, int]:
    """Why the next index run rebuilds ``kb``'s index, and how many indexed files changed
    since it was built: the site's config read once for both."""
    from kb_qa.ingest.site import site_of
    from kb_qa.kb.staleness import files_changed

    settings = kb.settings
    site = site_of(settings)
    return kb.pending_rebuild(site), files_changed(kb.store, site, settings)


# The arguments that are not options, by their names in a message
_POSITIONAL = {
    "question": "question",
    "questions": "questions file",
    "vault": "vault path",
    "site": "site path",
}


def check_arguments(args: argparse.Namespace) -> None:
    """Refuse an argument holding bytes the locale could not decode, by name, before it
    reaches a file name, the index or a config: any argument when they are UTF-8 (a C
    locale with Python's UTF-8 mode off decodes no byte beyond ASCII), and the words
    searched for whatever they are."""
    for dest, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            text = str(item) if isinstance(item, (str, Path)) else ""
            # How Python keeps the bytes of an argument its locale could not decode
            if re.search("[\udc80-\udcff]", text) and (
                dest in ("question", "include", "exclude") or misread_by_locale(text)
            ):
                name = _POSITIONAL.get(dest, "--" + dest.replace("_", "-"))
                raise ConfigError(
                    f"The {name} holds bytes this terminal's locale cannot read: {USE_UTF8_LOCALE}."
                )


def check_inputs(args: argparse.Namespace, settings: Settings) -> None:
    """The HTTP API's rules for a question, k and path filters (kb_qa.serve.inputs)."""
    from kb_qa.serve import inputs

    args.question = inputs.question(args.question, settings)
    if getattr(args, "k", None) is not None:
        inputs.count(args.k)
    inputs.patterns(args.include, "--include")
    inputs.patterns(args.exclude, "--exclude")


# Control characters (ESC above all) from a document or the model must not drive the terminal,
# nor a bidi override reorder what it shows (a reader's reason in `kb-qa feedback`).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|" + BIDI_CONTROLS.pattern)


def safe_text(text: str) -> str:
    return _CONTROL.sub("", text)


# A warning quotes what a site's config or a file holds, so it is cleaned as a file name is
# and cut short: a Docusaurus config whose version key was "\x1bc\x07" and 3,000 characters
# more reset the terminal of `kb-qa index` and printed the whole key.
_WARNING_CHARS = 1_000


def safe_warning(text: str) -> str:
    """A warning's or skip reason's message, safe to print: no control characters, at most
    ``_WARNING_CHARS`` characters."""
    text = safe_text(text)
    return text if len(text) <= _WARNING_CHARS else text[: _WARNING_CHARS - 1] + "…"


def terminal_link(target: str, text: str, tty: bool) -> str:
    """An OSC 8 hyperlink: clickable in most terminals, plain text elsewhere."""
    if not tty:
        return text
    return f"\033]8;;{safe_text(target)}\033\\{safe_text(text)}\033]8;;\033\\"


def snippet_of(markdown: str, limit: int = 200) -> str:
    """A section's opening words as a reader sees them: its heading (printed above it),
    attribute lists such as ``{ #id }``, setext underlines, code fences, the marks of
    lists, tasks, quotes and tables left out (a table's cells read "a · b", their links as
    their words; a formula is as written), and the lines of Chinese or Japanese text
    joined as the page joins them, without a blank."""
    from kb_qa.answer.blocks import passages, reading_text

    lines: list[str] = []
    for block in passages(markdown):
        shown = block.text.splitlines()
        if block.kind == "code" and shown and _FENCE_LINE.match(shown[0]):
            shown = shown[1:-1] if len(shown) > 1 and _FENCE_LINE.match(shown[-1]) else shown[1:]
        elif block.kind == "table":
            shown = [reading_text(line) for line in shown]
        plain = shown if block.kind == "math" else map(_plain_line, shown)  # "|x|" is no cell
        lines += [" ".join(line.split()) for line in plain if line.strip()]
    words = ""
    for line in lines:
        apart = bool(words) and not (_CJK_END.search(words) and _CJK_START.match(line))
        words += (" " if apart else "") + line
    return words[:limit]


_FENCE_LINE = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})")
# Han, kana and their punctuation: a line break between two of them is no blank (Korean
# puts blanks between its words, so its line breaks stay blanks)
_CJK = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_CJK_END = re.compile(f"[{_CJK}]$")
_CJK_START = re.compile(f"[{_CJK}]")

# Blanks belong to the "|" before them, never to two runs side by side ("\s*\|?\s*"): a
# line of 30,000 blanks took 19 s to match.
_TABLE_RULE = re.compile(r"^\s*(?:\|\s*)?:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*(?:\|\s*)?$")
_BOLD = re.compile(r"\*\*(\S(?:.*?\S)?)\*\*")  # an admonition's title, as passages lead with it
_LINE_MARKS = re.compile(r"^\s*(?:>\s*)*(?:(?:[-*+]|\d{1,9}[.)])\s+)?(?:\[[ xX]\]\s+)?")


def _plain_line(line: str) -> str:
    """One line of a passage without the marks of its block: "- [ ] ", "> ", "1. ", a
    table's pipes and rule."""
    if _TABLE_RULE.match(line):
        return ""
    line = _BOLD.sub(r"\1", _LINE_MARKS.sub("", line, count=1))
    if line.lstrip().startswith("|"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        return " · ".join(c for c in cells if c)
    return line


def place_of(chunk: Chunk | Citation) -> str:
    """``path:line``, or the path alone for text a site generated (no line in the file)."""
    return f"{chunk.path}:{chunk.line_start}" if chunk.line_start else chunk.path
