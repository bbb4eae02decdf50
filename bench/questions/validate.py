"""Check that every gold path exists and every gold heading is a real heading.

Usage: python bench/questions/validate.py [CORPORA_ROOT]   (default /work/shared/corpora)

A heading counts if it is an ATX heading (# .. ######) or a setext heading
(text line underlined with === or ---) outside fenced code blocks and outside
a leading YAML front-matter block. Trailing "{ #id ... }" attributes and
closing #'s are stripped before comparing.
"""

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/corpora")
CORPORA = ["mkdocs", "mkdocs-material", "pydantic", "uv"]

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
ATTR = re.compile(r"\s*\{[^{}]*\}\s*$")


def clean(text: str) -> str:
    text = re.sub(r"[ \t]+#+[ \t]*$", "", text)  # closing #'s
    return ATTR.sub("", text).strip()


def headings(text: str) -> list[str]:
    lines = text.split("\n")
    out, fence, start = [], None, 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                start = i + 1
                break
    prev = ""  # previous non-fenced line, "" if blank / not paragraph text
    for line in lines[start:]:
        m = FENCE.match(line)
        if fence:
            s = line.strip()
            if s and set(s) == {fence[0]} and len(s) >= len(fence):
                fence = None
            prev = ""
            continue
        if m:
            fence = m.group(1)
            prev = ""
            continue
        m = ATX.match(line)
        if m:
            out.append(clean(m.group(2) or ""))
            prev = ""
            continue
        if SETEXT.match(line) and prev.strip():
            out.append(clean(prev))
            prev = ""
            continue
        prev = line if line.strip() and not line.startswith(("    ", "\t")) else ""
    return out


def main() -> int:
    bad = 0
    for corpus in CORPORA:
        path = HERE / f"{corpus}.jsonl"
        rows = [
            json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()
        ]
        questions = Counter()
        for n, row in enumerate(rows, 1):
            assert set(row) <= {"question", "gold", "note"}, row
            questions[row["question"]] += 1
            for g in row["gold"]:
                f = ROOT / corpus / g["path"]
                if not f.is_file():
                    print(f"{corpus}:{n}: missing file {g['path']}")
                    bad += 1
                    continue
                hs = headings(f.read_text(encoding="utf-8"))
                if g["heading"] == "":
                    continue  # text before the first heading
                c = hs.count(g["heading"])
                if c == 0:
                    print(f"{corpus}:{n}: heading not found: {g['path']} :: {g['heading']!r}")
                    bad += 1
                elif c > 1:
                    print(
                        f"{corpus}:{n}: WARNING heading occurs {c}x: {g['path']} :: {g['heading']!r}"
                    )
        dups = [q for q, c in questions.items() if c > 1]
        if dups:
            print(f"{corpus}: duplicate questions: {dups}")
            bad += 1
        print(f"{corpus}: {len(rows)} questions, {sum(len(r['gold']) for r in rows)} gold entries")
    print("OK" if not bad else f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
