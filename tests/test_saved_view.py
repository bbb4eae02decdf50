"""The search view saved in the index folder: a new process (each `kb-qa search` or `ask`)
reads the view the last one built for the same index instead of building it again, and
never one that does not match what the index holds now."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import cli_env
from watching import watch_process

from kb_qa.kb import saved_view
from kb_qa.kb.knowledge_base import KnowledgeBase

KB = Callable[..., KnowledgeBase]
CLI = Callable[..., subprocess.CompletedProcess[str]]

VAULT = {
    "alpha.md": "# Alpha\n\n## Install\n\nDownload the installer and run it.\n\n"
    "## Troubleshoot\n\nCheck the log file when the quokka fails. See [[beta#Backup]].\n",
    "beta.md": "# Beta\n\n## Backup\n\nCopy the wombat folder every night.\n",
    "notes/gamma.md": "# Gamma\n\n## Ideas\n\nPlatypus and echidna lay eggs.\n",
    "CHANGELOG.md": "# Changelog\n\n## 1.2.0\n\nThe quokka no longer fails on a wombat folder.\n",
}
QUESTIONS = ["quokka fails", "copy the wombat folder", "echidna eggs", "install"]


def _ranked(index: KnowledgeBase, question: str) -> list[tuple[str, float]]:
    return [(h.chunk.id, round(h.score, 6)) for h in index.search(question, 10)]


def test_a_new_process_reads_the_view_the_last_one_saved(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(VAULT)
    first = kb(vault)
    first.index()
    assert first.prepare_search()  # what `kb-qa index` does after a run
    assert not first.prepare_search()  # saved already: nothing to do
    second = kb(vault)  # a new process: its first search finds the view saved
    assert [_ranked(second, q) for q in QUESTIONS] == [_ranked(first, q) for q in QUESTIONS]
    assert second._loaded.saved and not first._loaded.saved
    hits = second.search("wombat", 10, include=["notes/*"])
    assert hits == first.search("wombat", 10, include=["notes/*"])


def test_a_view_saved_before_an_edit_is_not_read_after_it(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(VAULT)
    first = kb(vault)
    first.index()
    first.prepare_search()
    (vault / "beta.md").write_text("# Beta\n\n## Backup\n\nCopy the numbat folder weekly.\n")
    first.index()  # a library run (or `kb-qa watch`) saves no view
    later = kb(vault)
    assert [h.chunk.path for h in later.search("numbat", 3)][:1] == ["beta.md"]
    assert not later._loaded.saved
    # The first search of a new process saved the view of this generation, and only it.
    views = sorted(p.name for p in later.store.folder.glob(saved_view.PREFIX + "*"))
    assert views == [saved_view.PREFIX + later.store.meta("generation")]
    assert kb(vault).search("numbat", 3)[0].chunk.path == "beta.md"


def test_a_damaged_saved_view_is_built_again(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(VAULT)
    first = kb(vault)
    first.index()
    first.prepare_search()
    folder = saved_view.folder_of(first.store.folder, first.store.meta("generation"))
    (folder / "vectors.npy").write_bytes(b"\x93NUMPY broken")
    shutil.rmtree(folder / "keyword")
    later = kb(vault)
    assert [_ranked(later, q) for q in QUESTIONS] == [_ranked(first, q) for q in QUESTIONS]
    assert not later._loaded.saved


def test_a_file_that_became_an_outside_symlink_is_not_served_from_a_saved_view(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "notes").mkdir(parents=True)
    (outside / "notes" / "gamma.md").write_text("# Gamma\n\n## Ideas\n\nPlatypus secrets.\n")
    vault = make_vault(VAULT)
    first = kb(vault)
    first.index()
    first.prepare_search()
    # The folder is swapped for a symlink that leads out of the vault, after the view was saved.
    shutil.rmtree(vault / "notes")
    (vault / "notes").symlink_to(outside / "notes", target_is_directory=True)
    later = kb(vault)
    assert all(h.chunk.path != "notes/gamma.md" for h in later.search("platypus echidna", 10))
    assert "notes/gamma.md" not in [p["path"] for p in later.pages()]


def test_kb_qa_index_prepares_search_once_searches_read_it(
    make_vault: Callable[..., Path], run_cli: CLI
) -> None:
    vault = make_vault(VAULT)
    done = run_cli("index", str(vault))
    assert done.returncode == 0, done.stderr
    # Nothing searched this index from another process yet: no view is prepared for nothing
    assert "Preparing search" not in done.stderr
    assert not list((vault / ".kb-qa").glob(saved_view.PREFIX + "*"))
    found = run_cli("search", "wombat folder", "--vault", str(vault))
    assert found.returncode == 0 and "Backup" in found.stdout
    assert len(list((vault / ".kb-qa").glob(saved_view.PREFIX + "*"))) == 1  # saved by it
    (vault / "beta.md").write_text("# Beta\n\n## Backup\n\nCopy the numbat folder.\n")
    edited = run_cli("index", str(vault))
    assert edited.returncode == 0 and "Preparing search over 9 sections" in edited.stderr
    again = run_cli("index", str(vault))
    assert again.returncode == 0 and "Preparing search" not in again.stderr
    found = run_cli("search", "numbat folder", "--vault", str(vault))
    assert found.returncode == 0 and "Backup" in found.stdout
    assert len(list((vault / ".kb-qa").glob(saved_view.PREFIX + "*"))) == 1


def test_kb_qa_watch_prepares_the_search_of_each_edit(
    make_vault: Callable[..., Path], run_cli: CLI, kb: KB
) -> None:
    """`kb-qa watch` kept the index current but saved no view: every `kb-qa search` or
    `ask` after an edit built it again (tens of seconds on a big vault). Now, once another
    process has searched the index, the watcher saves the view of each new generation."""
    vault = make_vault(VAULT)
    assert run_cli("index", str(vault)).returncode == 0
    assert run_cli("search", "wombat folder", "--vault", str(vault)).returncode == 0
    log = vault.parent / "watch.log"
    with watch_process([str(vault)], cli_env(), log) as watching:
        (vault / "beta.md").write_text("# Beta\n\n## Backup\n\nCopy the numbat folder.\n")
        watching.logged("re-indexed")
        index = vault / ".kb-qa"
        later = kb(vault, index_dir=index)
        generation = later.store.meta("generation")
        while not saved_view.is_saved(index, generation):  # saved after the run's log line
            watching.check()
            time.sleep(0.1)
    assert later.search("numbat folder", 1)[0].chunk.path == "beta.md"
    assert later._loaded.saved  # read, not built
    assert "Traceback" not in log.read_text()


def test_a_view_saved_by_other_code_is_not_read(
    make_vault: Callable[..., Path], kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade that tokenises differently keeps the index's generation: the view the
    older kb-qa saved would have answered with its tokens."""
    vault = make_vault(VAULT)
    first = kb(vault)
    first.index()
    first.prepare_search()
    reader = kb(vault)
    assert reader.search("install", 3) and reader._loaded.saved
    saved_view._code.cache_clear()
    monkeypatch.setattr(saved_view, "BUILT_BY", (*saved_view.BUILT_BY, "settings"))
    later = kb(vault)
    assert later.search("install", 3) and not later._loaded.saved
    saved_view._code.cache_clear()
