"""The CLI as scripts and CI jobs use it: no terminal, output piped into a reader that
stops early, streams closed, a locale that is not UTF-8, exit codes that tell cases apart.

Real subprocesses of ``python -m kb_qa.cli`` (the hash embedder), through a real shell
where a pipe is the point.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from conftest import cli_env

from kb_qa.kb.knowledge_base import KnowledgeBase

CLI = Callable[..., subprocess.CompletedProcess[str]]
PAGES = {
    "a.md": "# Alpha\n\n## Tokens\n\nTokens expire after ninety days.\n",
    "b.md": "# 中文笔记\n\n## 饺子做法\n\n加 260 毫升凉水和面。\n",
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory, write_files: Callable[..., Path]) -> Path:
    folder = write_files(tmp_path_factory.mktemp("scripts") / "vault", PAGES)
    indexed = subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", "index", str(folder)],
        env=cli_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert indexed.returncode == 0, indexed.stderr
    return folder


def shell(line: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``line`` run by bash with pipefail, ``kb-qa`` being this Python's module."""
    kbqa = f"{shlex.quote(sys.executable)} -m kb_qa.cli"
    return subprocess.run(
        ["bash", "-c", "set -o pipefail; " + line.replace("kb-qa", kbqa)],
        env=cli_env(**(env or {})), capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


def test_a_failed_eval_gate_read_by_a_reader_that_stops_early_still_fails(
    vault: Path, tmp_path: Path
) -> None:
    """`kb-qa eval … --json --min R@5=0.99 | head -c 100` exited 0 with no "eval failed"
    line: the reader's broken pipe was taken for success, and a CI gate passed."""
    questions = tmp_path / "q.jsonl"
    line = {"question": "xylophone " * 40, "gold": [{"path": "a.md", "anchor": "tokens"}]}
    questions.write_text(f"{json.dumps(line)}\n" * 400, encoding="utf-8")  # > a pipe's 64 KiB
    gate = f"kb-qa eval {questions} --vault {vault} --json --min R@1=0.99"
    whole = shell(f"{gate} > {tmp_path / 'out.json'}")
    assert whole.returncode == 3, whole.stderr
    assert (tmp_path / "out.json").stat().st_size > 70_000
    cut = shell(f"{gate} | head -c 100")
    assert cut.returncode == 3 and "kb-qa: eval failed: R@1" in cut.stderr
    assert "Traceback" not in cut.stderr


def test_output_for_scripts_is_utf8_whatever_the_locale(vault: Path) -> None:
    """With stdout in cp1252 (a Latin-1 locale, Windows redirected), `search --json` gave
    valid JSON whose Chinese heading was "?????", exit 0."""
    found = shell(f"kb-qa search 饺子 --vault {vault} --k 1 --json", {"PYTHONIOENCODING": "cp1252"})
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["heading"] == "饺子做法"


def test_closed_streams_keep_the_output_clean_and_the_exit_code_true(vault: Path) -> None:
    """stderr closed (`2>&-`): the stale-index warning went into stdout's JSON; stdout
    closed (`>&-`): a traceback flushing None, exit 1 after a successful run."""
    (vault / "a.md").write_text(PAGES["a.md"] + "\nEdited.\n", encoding="utf-8")  # stale
    try:
        found = shell(f"kb-qa search tokens --vault {vault} --json 2>&-")
        assert found.returncode == 0
        assert json.loads(found.stdout)[0]["path"] == "a.md"  # JSON, nothing else
        blind = shell(f"kb-qa search tokens --vault {vault} >&-")
        assert (blind.returncode, blind.stderr.count("Traceback")) == (0, 0), blind.stderr
    finally:
        (vault / "a.md").write_text(PAGES["a.md"], encoding="utf-8")
    mcp = shell(f"kb-qa mcp {vault} <&-")
    assert mcp.returncode == 1 and "standard input, which is closed" in mcp.stderr
    assert "Traceback" not in mcp.stderr


def test_ask_json_tells_a_script_whether_the_docs_cover_it(vault: Path) -> None:
    """`ask` printed "These docs don't seem to cover that" with exit 0 and had no JSON: a
    script could not tell it from an answer (the HTTP API says `covered`)."""
    asked = shell(f"kb-qa ask 'When do tokens expire?' --vault {vault} --json")
    assert asked.returncode == 0, asked.stderr
    reply = json.loads(asked.stdout)
    assert reply["covered"] is True and "ninety days" in reply["text"]
    assert reply["citations"][0]["path"] == "a.md" and reply["model"] == ""
    off = json.loads(shell(f"kb-qa ask 麻婆豆腐怎么做？ --vault {vault} --json").stdout)
    assert off["covered"] is False  # (Chinese: judged by its words whatever the model)


def test_an_index_another_process_builds_is_exit_75_try_again_later(
    write_files: Callable[..., Path], tmp_path: Path
) -> None:
    """Another process writing the index was exit 1, as a broken setting is: a script
    could not tell "retry later" from "broken". It is 75 (sysexits' EX_TEMPFAIL)."""
    folder = write_files(tmp_path / "v", PAGES)
    with KnowledgeBase(folder, embed_model="hash") as other, other.store.writer_lock():
        busy = shell(f"kb-qa index {folder}")
        empty = shell(f"kb-qa search tokens --vault {folder}")
    assert busy.returncode == 75 and "Another kb-qa process is updating" in busy.stderr
    assert empty.returncode == 75 and "try again when it is done" in empty.stderr


def test_eval_records_the_chunk_size_the_index_was_cut_with(vault: Path, tmp_path: Path) -> None:
    """`eval --json --chunk-chars 700` over an index cut at 1500 recorded 700 beside
    figures that came from the 1500-character sections (embed_model already said the
    index's own)."""
    questions = tmp_path / "q.jsonl"
    line = {"question": "When do tokens expire?", "gold": [{"path": "a.md", "anchor": "tokens"}]}
    questions.write_text(json.dumps(line) + "\n", encoding="utf-8")
    ran = shell(f"kb-qa eval {questions} --vault {vault} --json --chunk-chars 700")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["settings"]["chunk_chars"] == 1500
