"""Validate the real-question set: every gold anchor exists, no question gives its answer away.

    python bench/questions/real/validate.py [PROJECT ...]

For each `<project>.jsonl` here, checks the fields, that each gold `path#anchor` is a section
kb-qa indexes in `bench/corpora/<project>/` (see anchors.py), that the question is under 400
characters and does not contain the gold heading's text, and that ids and questions are unique.
Prints a count per project; exits 1 on any problem.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from anchors import sections

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from corpora import REAL_CORPORA as CORPORA  # noqa: E402

FIELDS = {"id", "project", "question", "gold", "source", "answerer", "answerer_role", "remapped"}
OPTIONAL = {"remap_note", "note"}


def check(project: str) -> tuple[int, list[str]]:
    """Number of questions in one project's file and the problems found in it."""
    problems: list[str] = []
    path = HERE / f"{project}.jsonl"
    corpus = CORPORA / project
    if not corpus.is_dir():
        return 0, [
            f"{project}: corpus folder {corpus} is missing; lay it out as "
            f"sources/{project}.md says (or set KBQA_REAL_CORPORA)"
        ]
    known = {(p, a): h for p, a, _, h in sections(str(corpus))}
    rows = [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    ids: Counter[str] = Counter()
    questions: Counter[str] = Counter()
    for n, row in enumerate(rows, 1):
        where = f"{path.name}:{n}"
        missing = FIELDS - set(row)
        extra = set(row) - FIELDS - OPTIONAL
        if missing or extra:
            problems.append(f"{where}: missing fields {sorted(missing)}, unknown {sorted(extra)}")
            continue
        ids[row["id"]] += 1
        questions[row["question"]] += 1
        if row["project"] != project:
            problems.append(f"{where}: project {row['project']!r} in {path.name}")
        if len(row["question"]) >= 400:
            problems.append(f"{where}: question is {len(row['question'])} characters (max 399)")
        if row["remapped"] and not row.get("remap_note"):
            problems.append(f"{where}: remapped without a remap_note")
        if not row["gold"]:
            problems.append(f"{where}: no gold section")
        for g in row["gold"]:
            key = (g.get("path", ""), g.get("anchor", ""))
            if key not in known:
                problems.append(f"{where}: gold {key[0]}#{key[1]} is not an indexed section")
                continue
            heading = str(g.get("heading", "")).strip().lower()
            if len(heading) > 3 and heading in row["question"].lower():
                problems.append(f"{where}: the question contains the gold heading {heading!r}")
    problems += [f"{path.name}: duplicate id {i}" for i, c in ids.items() if c > 1]
    problems += [
        f"{path.name}: duplicate question {q[:60]!r}" for q, c in questions.items() if c > 1
    ]
    return len(rows), problems


def main() -> int:
    projects = sys.argv[1:] or sorted(p.stem for p in HERE.glob("*.jsonl"))
    total, bad = 0, 0
    for project in projects:
        n, problems = check(project)
        for p in problems:
            print(p)
        bad += len(problems)
        total += n
        print(f"{project}: {n} questions" + (f", {len(problems)} problem(s)" if problems else ""))
    print(
        f"total: {total} questions in {len(projects)} projects; "
        + ("OK" if not bad else f"{bad} problem(s)")
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
