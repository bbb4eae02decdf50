"""List every section kb-qa indexes in a corpus: path, anchor, page URL and heading path.

    python bench/questions/real/anchors.py bench/corpora/fastapi [--grep WORD]

Uses the same chunking and anchor rendering as `kb-qa index` (with the instant `hash`
embedding, so it takes seconds): a gold anchor is valid when it appears here.
"""

from __future__ import annotations

import argparse
import tempfile

from kb_qa import KnowledgeBase


def sections(corpus: str) -> list[tuple[str, str, str, str]]:
    """(path, anchor, url, heading path) of every indexed section, in file order."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        KnowledgeBase(corpus, embed_model="hash", index_dir=tmp) as kb,
    ):
        kb.index()
        seen: dict[tuple[str, str], tuple[str, str, str, str]] = {}
        for c in kb.store.chunks():
            seen.setdefault(
                (c.path, c.anchor), (c.path, c.anchor, c.url, " > ".join(c.heading_path))
            )
        return sorted(seen.values())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus")
    parser.add_argument("--grep", default="")
    args = parser.parse_args()
    for path, anchor, url, heading in sections(args.corpus):
        line = f"{path}#{anchor}\t{url}#{anchor}\t{heading}"
        if args.grep.lower() in line.lower():
            print(line)


if __name__ == "__main__":
    main()
