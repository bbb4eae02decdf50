"""The real ``kb-qa`` command given what users get wrong: one line saying what to do, no
traceback, and nothing made where it does not belong."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa.index.embeddings import e5_available

CLI = Callable[..., subprocess.CompletedProcess[str]]
PAGES = {"mkdocs.yml": "site_name: Demo\n", "docs/index.md": "# Home\n\n令牌 rotation.\n"}


def said(result: subprocess.CompletedProcess[str], words: str, code: int = 1) -> None:
    assert result.returncode == code, result.stderr
    assert words in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("folder", [".", "docs"])
def test_an_index_folder_holding_the_pages_is_refused_before_anything_is_made(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI, folder: str
) -> None:
    """It said "Indexed 0 files", left its database among the pages (published with the
    site), and search then sent the user back to `kb-qa index`."""
    site = write_files(tmp_path / "site", PAGES)
    before = sorted(p.name for p in site.rglob("*"))
    result = run_cli("index", str(site), "--index-dir", str(site / folder))
    said(result, "Give the index a folder of its own")
    assert sorted(p.name for p in site.rglob("*")) == before


def test_an_index_folder_in_a_hidden_folder_of_the_vault_is_fine(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """Pages in a hidden tool folder are never read, so they do not make it a docs folder."""
    site = write_files(tmp_path / "site", {**PAGES, ".cache/tool/README.md": "# Tool\n"})
    result = run_cli("index", str(site), "--index-dir", str(site / ".cache"))
    assert result.returncode == 0, result.stderr


def test_search_in_a_vault_that_is_not_there_says_so(tmp_path: Path, run_cli: CLI) -> None:
    """It said the index was empty and to run `kb-qa index`."""
    said(run_cli("search", "x", "--vault", str(tmp_path / "nope")), "does not exist")
    page = tmp_path / "page.md"
    page.write_text("# P\n", encoding="utf-8")
    said(run_cli("search", "x", "--vault", str(page)), "is not a folder")
    said(run_cli("search", "x", "--vault", str(tmp_path), "--index-dir", str(page)), "is a file")
    # Indexing said "[Errno 17] File exists … Check permissions"
    indexed = run_cli("index", str(tmp_path), "--index-dir", str(page))
    said(indexed, f"index folder {page} is a file")


def test_an_answer_to_a_terminal_that_cannot_show_it_is_not_a_crash(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """A cp1252 or latin-1 console stopped on the first Chinese character."""
    site = write_files(tmp_path / "site", PAGES)
    assert run_cli("index", str(site)).returncode == 0
    env = {"PYTHONIOENCODING": "ascii"}
    result = run_cli("search", "令牌", "--vault", str(site), env=env)
    assert result.returncode == 0, result.stderr
    assert "?? rotation" in result.stdout


def test_an_empty_questions_file_is_said(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    site = write_files(tmp_path / "site", PAGES)
    assert run_cli("index", str(site)).returncode == 0
    empty = tmp_path / "questions.jsonl"
    empty.write_text("\n", encoding="utf-8")
    said(run_cli("eval", str(empty), "--vault", str(site)), "holds no questions")


def test_insights_refuses_two_outputs_it_cannot_give_at_once(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """--csv with --json printed the CSV only; with --html it wrote no file, exit 0."""
    site = write_files(tmp_path / "site", PAGES)
    assert run_cli("index", str(site)).returncode == 0
    said(run_cli("insights", str(site), "--csv", "--json"), "not allowed with", code=2)
    report = tmp_path / "r.html"
    said(run_cli("insights", str(site), "--csv", "--html", str(report)), "two commands")
    assert not report.exists()


@pytest.mark.parametrize("endpoint", ["notaurl", "javascript:alert(1)", "/api"])
def test_init_refuses_an_endpoint_the_widget_cannot_call(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI, endpoint: str
) -> None:
    """As the MkDocs plugin refuses it, before anything is written."""
    site = write_files(tmp_path / "site", PAGES)
    result = run_cli("init", str(site), "--endpoint", endpoint)
    said(result, "must be an absolute http(s) URL")
    assert (site / "mkdocs.yml").read_text(encoding="utf-8") == PAGES["mkdocs.yml"]


def test_progress_in_a_log_is_one_line_not_a_bar(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """stderr to a file filled it with carriage-return frames of the bar."""
    site = write_files(tmp_path / "site", PAGES)
    result = run_cli("index", str(site))
    assert result.returncode == 0, result.stderr
    assert "Embedding 1 chunks …" in result.stderr and "\r" not in result.stderr


def test_every_long_step_of_an_index_run_is_announced(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """A 30,000-note vault spent minutes chunking and minutes writing after one line,
    'Indexing …': only embedding said what it was doing."""
    vault = write_files(
        tmp_path / "notes",
        {f"area {n}/note {n}.md": f"# Note {n}\n\n## Part\n\nWords {n}.\n" for n in range(3)},
    )
    result = run_cli("index", str(vault))
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    said = [line for line in lines if line.endswith(" …")]
    assert said[1:4] == ["Chunking 3 files …", "Embedding 6 chunks …", "Writing 6 chunks …"]
    again = run_cli("index", str(vault)).stderr  # nothing changed: nothing to announce
    assert "Chunking" not in again and "Writing" not in again


def test_a_long_step_in_a_log_says_how_far_it_has_got(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """On a 7,745-section site a log showed "Embedding 7745 chunks …" and then nothing for
    more than three minutes."""
    vault = write_files(
        tmp_path / "notes",
        {f"note {n}.md": f"# Note {n}\n\n## Part\n\nWords {n}.\n" for n in range(150)},
    )
    result = run_cli("index", str(vault))
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if line.startswith("Embedding")]
    assert said[0] == "Embedding 300 chunks …" and said[-1] == "Embedding: 300 of 300 chunks"
    assert 3 <= len(said) <= 11, said  # now and then, not per batch


def test_search_snippets_read_as_text_not_markdown(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """They showed "- [ ] ", table pipes and rules, and "> " quote marks, flattened."""
    notes = {
        "backup.md": (
            "# Backup\n\n## Plan\n\n- Copy the database to the NAS\n- [ ] Update the firewall\n\n"
            "| Item | Every |\n|---|---|\n| database | day |\n\n> Stop every container first.\n"
        )
    }
    vault = write_files(tmp_path / "notes", notes)
    assert run_cli("index", str(vault)).returncode == 0
    result = run_cli("search", "firewall database", "--vault", str(vault), "--k", "1")
    assert result.returncode == 0, result.stderr
    assert (
        "Copy the database to the NAS Update the firewall Item · Every database · day "
        "Stop every container first." in result.stdout
    )


def test_search_snippets_show_code_links_and_chinese_as_the_page_does(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """A fenced block's ``` marks and a table cell's [link](target) showed as written, and
    a Chinese line break as a blank in the middle of a sentence."""
    notes = {
        "tokens.md": (
            "# Tokens\n\n## Revoke\n\n```bash\nlumen token revoke tok_1\n```\n\n"
            "| Option | Description |\n|---|---|\n| `--scope` | see [scopes](scopes.md#list) |\n"
        ),
        "令牌.md": "# 令牌\n\n## 轮换\n\n在宽限期内，旧令牌和新令牌\n同时有效。\n",
    }
    vault = write_files(tmp_path / "notes", notes)
    assert run_cli("index", str(vault)).returncode == 0
    result = run_cli("search", "revoke token scope", "--vault", str(vault), "--k", "1")
    assert result.returncode == 0, result.stderr
    assert (
        "    lumen token revoke tok_1 Option · Description `--scope` · see scopes\n"
        in result.stdout
    ), result.stdout
    result = run_cli("search", "旧令牌", "--vault", str(vault), "--k", "1")
    assert "    在宽限期内，旧令牌和新令牌同时有效。\n" in result.stdout, result.stdout


def test_a_search_snippet_shows_a_formula_as_written() -> None:
    """`kb-qa search` showed "$$ x_n - x^* · \\le …" for "|x_n - x^*| \\le …": a display
    formula's "|" was read as a table's cell border."""
    from kb_qa.cli.common import snippet_of

    markdown = "## Bisection\n\nThe error is at most\n\n$$\n|x_n - x^*| \\le 2^{-n}\n$$\n"
    assert snippet_of(markdown) == "The error is at most $$ |x_n - x^*| \\le 2^{-n} $$"


# A C locale with Python's UTF-8 mode off: file names and arguments are ASCII to Python.
ASCII_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


@pytest.mark.parametrize("where", ["question", "--include", "vault path", "--title"])
def test_an_argument_the_locale_cannot_read_is_said_in_words(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI, where: str
) -> None:
    """Under a C locale a Chinese argument arrives as undecodable bytes: the question was
    refused as holding "a lone surrogate", a path filter was not checked at all, a vault in
    a folder named in Chinese gave a traceback (search) or "the vector index cannot be used
    right now" (index), and `init --title` said the UTF-8 mkdocs.yml "cannot hold" it."""
    folder = "文档" if where == "vault path" else "site"
    site = write_files(tmp_path / folder, PAGES)
    assert run_cli("index", str(site)).returncode == 0
    args = {
        "question": ["search", "令牌", "--vault", str(site)],
        "--include": ["search", "x", "--include", "文档/*", "--vault", str(site)],
        "vault path": ["search", "x", "--vault", str(site)],
        "--title": ["init", str(site), "--title", "文档", "--dry-run"],
    }[where]
    result = run_cli(*args, env=ASCII_LOCALE)
    said(result, f"The {where} holds bytes this terminal's locale cannot read")
    assert "LANG=C.UTF-8" in result.stderr


def test_a_locale_that_cannot_read_the_vaults_file_names_leaves_the_index_as_it_was(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """Indexed in a UTF-8 locale, the vault's Chinese-named page was deleted from the index
    by `kb-qa index` under a C locale ("file name is not valid UTF-8: rename it", though it
    is), and `kb-qa search` there stopped with a UnicodeEncodeError traceback."""
    site = write_files(tmp_path / "site", {**PAGES, "docs/令牌.md": "# Tokens\n\nRotate otters.\n"})
    assert run_cli("index", str(site)).returncode == 0
    for args in (["index", str(site)], ["search", "otters", "--vault", str(site)]):
        result = run_cli(*args, env=ASCII_LOCALE)
        said(result, "use a UTF-8 locale (for example LANG=C.UTF-8)")
        assert "rename" not in result.stderr
    found = run_cli("search", "otters", "--vault", str(site), "--json")
    assert found.returncode == 0 and "docs/令牌.md" in found.stdout, found.stderr


@pytest.mark.parametrize("name", ["文档", "!!!"])
def test_a_workspace_name_without_ascii_letters_is_refused(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI, name: str
) -> None:
    """It was slugged to nothing and the vault folder's name used in its place, unsaid (on a
    shared Chroma server, every such vault named "docs" would share one workspace)."""
    vault = write_files(tmp_path / "docs", {"a.md": "# A\n\nText.\n"})
    result = run_cli("index", str(vault), "--workspace", name)
    said(result, "a workspace is named with ASCII letters and digits")
    assert not (vault / ".kb-qa").exists()


def test_auto_says_the_index_keeps_a_model_it_would_not_choose(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """A user who tried another model and then removed the setting found the index still on
    it, silently ("0 files changed"), every search too."""
    site = write_files(tmp_path / "site", PAGES)
    assert run_cli("index", str(site)).returncode == 0  # hash, named
    again = run_cli("index", str(site), env={"KBQA_EMBED_MODEL": "auto"})
    assert again.returncode == 0, again.stderr
    assert "keeps the embedding model it was built with, hash" in again.stderr
    assert "--embed-model minilm" in again.stderr
    named = run_cli("index", str(site))  # the model it has, named: nothing to say
    assert "keeps the embedding model" not in named.stderr


def test_auto_says_a_vault_in_another_language_would_now_get_the_multilingual_model(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """A German site indexed with MiniLM before auto read a vault's language kept it after
    the upgrade, silently (an upgrade QA pass)."""
    german = {
        "a.md": "# Sicherung\n\nDie Sicherung läuft jede Nacht um zwei Uhr, und alte Kopien "
        "werden nach dreißig Tagen gelöscht, wenn Sie nichts anderes einstellen.\n",
    }
    site = write_files(tmp_path / "de", german)
    built = run_cli("index", str(site), env={"KBQA_EMBED_MODEL": "minilm"})
    assert built.returncode == 0, built.stderr
    again = run_cli("index", str(site), env={"KBQA_EMBED_MODEL": "auto"})
    assert again.returncode == 0, again.stderr
    if e5_available():
        assert "keeps the embedding model it was built with, minilm" in again.stderr
        assert "--embed-model e5-multilingual" in again.stderr
    else:  # auto would keep MiniLM: nothing to say
        assert "keeps the embedding model" not in again.stderr
