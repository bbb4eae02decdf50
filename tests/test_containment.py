"""The vault is a boundary: nothing outside it is indexed, searched, answered from or served.

A docs pull request that adds ``leak.md -> /etc/passwd`` must not publish that file; symlinks
that stay inside the vault keep working.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import httpx
from uvicorn_thread import UvicornThread

from kb_qa.ingest.vault import MISSING, Boundary
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.kb.view import refused_paths
from kb_qa.serve.app import create_app

KB = Callable[..., KnowledgeBase]
OUTSIDE = "# Secret\n\nzebracorn-password-hunter2 lives outside the vault.\n"
GOOD = "# Good\n\n## Otters\n\nOtters hold hands while they sleep.\n"


def _outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    (out / "dir").mkdir(parents=True)
    (out / "secret.md").write_text(OUTSIDE)
    (out / "dir" / "more.md").write_text(OUTSIDE.replace("Secret", "More"))
    return out


def _texts(instance: KnowledgeBase) -> str:
    return "\n".join(c.text for c in instance.store.chunks())


def test_symlinks_out_of_the_vault_are_skipped_with_a_reason(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    out = _outside(tmp_path)
    vault = make_vault({"good.md": GOOD, "notes/inner.md": "# Inner\n\nkingfisher facts\n"})
    (vault / "leak.md").symlink_to(out / "secret.md")
    (vault / "leakdir").symlink_to(out / "dir", target_is_directory=True)
    (vault / "rel.md").symlink_to(Path("..") / "outside" / "secret.md")
    (vault / "alias.md").symlink_to(vault / "notes" / "inner.md")  # stays inside: fine
    (vault / "dangling.md").symlink_to(tmp_path / "nowhere.md")  # was "file disappeared …"
    index = kb(vault)
    report = index.index()
    skipped = dict(report.skipped)
    for name in ("leak.md", "rel.md", "leakdir"):
        assert "outside the vault" in skipped[name], skipped
    assert skipped["dangling.md"] == "symlink whose target does not exist", skipped
    assert sorted(p["path"] for p in index.pages()) == ["alias.md", "good.md", "notes/inner.md"]
    assert "zebracorn" not in _texts(index)
    assert index.search("zebracorn password hunter2", 5)[0].chunk.path != "leak.md"
    assert all("zebracorn" not in h.chunk.text for h in index.search("zebracorn", 20))
    assert index.search("kingfisher", 5)[0].chunk.path in {"alias.md", "notes/inner.md"}


def test_loops_and_links_into_the_index_are_not_followed(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    vault = make_vault({"docs/a.md": GOOD})
    (vault / "docs" / "loop").symlink_to(vault, target_is_directory=True)
    (vault / "docs" / "self").symlink_to(vault / "docs", target_is_directory=True)
    index = kb(vault, index_dir=vault / ".kb-qa")
    index.index()
    (vault / "docs" / "idx.md").symlink_to(vault / ".kb-qa" / "manifest.sqlite3")
    report = index.index()
    assert [p["path"] for p in index.pages()] == ["docs/a.md"]
    assert "index folder" in dict(report.skipped)["docs/idx.md"]


def test_a_file_swapped_for_an_outside_symlink_leaves_the_index(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    out = _outside(tmp_path)
    vault = make_vault({"good.md": GOOD, "page.md": "# Page\n\nharmless words\n"})
    index = kb(vault)
    index.index()
    (vault / "page.md").unlink()
    (vault / "page.md").symlink_to(out / "secret.md")
    report = index.index()
    assert "outside the vault" in dict(report.skipped)["page.md"]
    assert [p["path"] for p in index.pages()] == ["good.md"]
    assert "zebracorn" not in _texts(index) and "harmless" not in _texts(index)


def test_reads_check_the_opened_file_not_only_the_name(tmp_path: Path) -> None:
    out = _outside(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "leak.md").symlink_to(out / "secret.md")
    os.mkfifo(vault / "pipe.md")
    boundary = Boundary(vault.resolve(), (vault / ".kb-qa").resolve())
    for name, words in (("leak.md", "outside the vault"), ("pipe.md", "not a regular file")):
        try:
            boundary.read_bytes(vault / name)
        except Exception as exc:  # noqa: BLE001 - the message is what is checked
            assert words in str(exc)
        else:
            raise AssertionError(f"{name} was read")


def test_an_index_from_an_older_version_holding_an_outside_file_is_never_served(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    out = _outside(tmp_path)
    vault = make_vault({"good.md": GOOD, "leak.md": OUTSIDE})
    index = kb(vault)
    index.index()  # indexed while leak.md was a plain file: what an old version left
    (vault / "leak.md").unlink()
    (vault / "leak.md").symlink_to(out / "secret.md")
    # Before any re-index, neither search, pages nor the HTTP API return it.
    assert all(h.chunk.path != "leak.md" for h in index.search("zebracorn hunter2", 20))
    with UvicornThread(create_app(index, index.settings.replace(rate_limit=0))) as server:
        r = httpx.get(server.url + "/api/search", params={"q": "zebracorn", "include": "leak.md"})
        assert r.status_code == 200 and r.json()["hits"] == []
        r = httpx.post(
            server.url + "/api/ask",
            json={"question": "zebracorn password", "stream": False},
            headers={"Accept": "application/json"},
        )
        assert r.status_code == 200 and "hunter2" not in r.text
        assert httpx.get(server.url + "/view/leak.md").status_code == 404
        assert "leak.md" not in httpx.get(server.url + "/api/sources").text
    index.index()
    assert "zebracorn" not in _texts(index)


def test_the_paths_a_search_view_refuses_are_the_ones_the_boundary_refuses(
    tmp_path: Path,
) -> None:
    """The search view resolves each folder once instead of every path: it must refuse
    exactly what ``Boundary.refuse`` refuses, one path at a time."""
    out = _outside(tmp_path)
    vault = tmp_path / "vault"
    for folder in ("notes", "deep/er/still", ".git", "inner"):
        (vault / folder).mkdir(parents=True)
    (vault / "notes" / "plain.md").write_text(GOOD)
    (vault / "notes" / ".hidden.md").write_text(GOOD)
    (out / "dir" / ".more.md").write_text(GOOD)
    (vault / "deep" / "er" / "still" / "plain.md").write_text(GOOD)
    (vault / ".git" / "config.md").write_text(GOOD)
    (vault / "inner" / "real.md").write_text(GOOD)
    (vault / "notes" / "leak.md").symlink_to(out / "secret.md")
    (vault / "notes" / "alias.md").symlink_to(vault / "inner" / "real.md")
    (vault / "notes" / "hidden.md").symlink_to(vault / ".git" / "config.md")
    (vault / "outdir").symlink_to(out / "dir", target_is_directory=True)
    (vault / "indir").symlink_to(vault / "inner", target_is_directory=True)
    (vault / "loop").symlink_to(vault / "loop")
    paths = [
        "notes/plain.md",
        "deep/er/still/plain.md",
        "notes/leak.md",
        "notes/alias.md",
        "notes/hidden.md",
        "outdir/more.md",
        "indir/real.md",
        "notes/missing.md",
        "gone/missing.md",
        "loop/x.md",
        ".git/config.md",
        "notes/.hidden.md",
        "outdir/.more.md",
    ]
    boundary = Boundary(vault.resolve(), (vault / ".kb-qa").resolve(), vault)
    one_by_one = {p for p in paths if boundary.refuse(vault / p) not in ("", MISSING)}
    assert refused_paths(boundary, vault, paths) == one_by_one
    assert {"notes/leak.md", "notes/hidden.md", "outdir/more.md"} <= one_by_one
    assert not {"notes/plain.md", "notes/alias.md", "indir/real.md"} & one_by_one
