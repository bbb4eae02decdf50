"""Indexing a real vault into a real embedded Chroma: incremental updates, rebuilds, filters."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa.errors import EmbeddingError, IndexStateError
from kb_qa.index.manifest import embed_key
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.settings import Settings

KB = Callable[..., KnowledgeBase]
CLI = Callable[..., subprocess.CompletedProcess[str]]


def page(title: str, *sections: tuple[str, str]) -> str:
    """A page with an H1 and one H2 per (heading, body)."""
    return f"# {title}\n\n" + "".join(f"## {h}\n\n{body}\n\n" for h, body in sections)


VAULT = {
    "alpha.md": page(
        "Alpha",
        ("Install", "Download the installer and run it."),
        ("Configure", "Edit the settings file with your editor."),
        ("Troubleshoot", "Check the log file when the quokka fails."),
    ),
    "beta.md": page(
        "Beta",
        ("Overview", "Beta explains the marsupial database."),
        ("Backup", "Copy the wombat folder every night."),
    ),
    "notes/gamma.md": page("Gamma", ("Ideas", "Platypus and echidna lay eggs.")),
}


def ids_everywhere(instance: KnowledgeBase) -> tuple[set[str], set[str]]:
    """(chunk ids in the manifest, vector ids in Chroma)."""
    manifest = {r[0] for r in instance.store.db.execute("SELECT id FROM chunks")}
    vectors = set(instance.store.collection.get(include=[])["ids"])
    return manifest, vectors


def assert_consistent(instance: KnowledgeBase) -> None:
    manifest, vectors = ids_everywhere(instance)
    assert manifest == vectors


def found(instance: KnowledgeBase, query: str, word: str, **kw: object) -> list[str]:
    """Paths of hits whose text contains ``word`` (case-insensitive)."""
    return [
        h.chunk.path
        for h in instance.search(query, 20, **kw)
        if word.lower() in h.chunk.text.lower()
    ]


def test_second_index_embeds_nothing(make_vault: Callable[..., Path], kb: KB) -> None:
    index = kb(make_vault(VAULT))
    first = index.index()
    assert (first.files, first.chunks, first.embedded, first.changed_files) == (3, 9, 9, 3)
    assert not first.skipped and not first.warnings and not first.rebuilt
    second = index.index()
    assert (second.embedded, second.changed_files, second.deleted) == (0, 0, 0)
    assert (second.files, second.chunks) == (3, 9)
    assert_consistent(index)
    # A new KnowledgeBase on the same index sees the same thing and does no work either.
    again = kb(index.settings.vault)
    assert again.index().embedded == 0
    assert again.stats()["chunks"] == 9


def test_touching_a_file_reembeds_nothing(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(VAULT)
    index = kb(vault)
    index.index()
    st = (vault / "beta.md").stat()
    os.utime(vault / "beta.md", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    report = index.index()
    assert (report.embedded, report.changed_files, report.deleted) == (0, 0, 0)


def test_edit_reembeds_only_changed_chunks(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(VAULT)
    index = kb(vault)
    index.index()
    assert found(index, "quokka", "quokka") == ["alpha.md"]
    text = (vault / "alpha.md").read_text().replace("quokka fails", "kookaburra crashes")
    (vault / "alpha.md").write_text(text)
    report = index.index()
    assert report.changed_files == 1
    assert report.embedded == 1  # only the Troubleshoot section changed
    assert report.reused == 3  # the page's other chunks come from the cache
    assert found(index, "kookaburra crashes", "kookaburra") == ["alpha.md"]
    assert found(index, "quokka", "quokka") == []
    assert_consistent(index)


def test_deleted_file_leaves_index_and_search(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(VAULT)
    index = kb(vault)
    index.index()
    assert found(index, "wombat folder", "wombat") == ["beta.md"]
    (vault / "beta.md").unlink()
    report = index.index()
    assert report.deleted == 3
    assert (report.files, report.chunks, report.embedded) == (2, 6, 0)
    assert found(index, "wombat folder", "wombat") == []
    assert "beta.md" not in {p["path"] for p in index.pages()}
    assert_consistent(index)


def test_rename_moves_chunks_without_reembedding(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(VAULT)
    index = kb(vault)
    index.index()
    (vault / "archive").mkdir()
    (vault / "notes/gamma.md").rename(vault / "archive/gamma-old.md")
    report = index.index()
    assert report.embedded == 0  # same text, same heading path: cached by content hash
    assert report.deleted == 2
    assert found(index, "platypus echidna", "platypus") == ["archive/gamma-old.md"]
    paths = {p["path"] for p in index.pages()}
    assert "notes/gamma.md" not in paths and "archive/gamma-old.md" in paths
    assert_consistent(index)


def test_chunk_chars_change_rebuilds_and_reuses_vectors(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    long_section = "\n\n".join(f"Paragraph {i} " + "filler words here " * 12 for i in range(10))
    vault = make_vault({**VAULT, "long.md": page("Long", ("Body", long_section))})
    first = kb(vault, chunk_chars=1500)
    base = first.index()
    first.close()
    second = kb(vault, chunk_chars=600)
    report = second.index()
    assert (
        report.rebuilt
        == "chunk_chars changed: re-chunking every file (cached embeddings are reused)"
    )
    # Short sections chunk the same under both sizes: their vectors come from the cache.
    assert report.reused >= 9
    assert 0 < report.embedded < report.chunks
    assert report.chunks > base.chunks
    assert_consistent(second)
    assert second.index().embedded == 0  # and the new fingerprint sticks


def test_embed_model_change_rebuilds_with_clear_message(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(VAULT)
    first = kb(vault, embed_model="hash")
    first.index()
    first.close()
    second = kb(vault, embed_model="minilm")
    report = second.index()
    assert "hash" in report.rebuilt and "minilm" in report.rebuilt
    assert report.embedded == report.chunks == 9 and report.reused == 0
    assert second.stats()["embed_model"] == "minilm"
    hits = second.search("Where is the wombat backup copied?", 3)
    assert hits[0].chunk.anchor == "backup"
    assert_consistent(second)


def test_a_server_notices_another_process_rebuilt_the_index_with_another_model(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """A serving process reloaded the new index but kept embedding questions with its old
    model: every search failed (vectors of 256 against 384 numbers) until a restart."""
    vault = make_vault(VAULT)
    serving = kb(vault, embed_model="hash")
    serving.index()
    assert serving.search("Where is the wombat backup copied?", 3)
    other = kb(vault, embed_model="minilm")
    other.index()
    other.close()
    hits = serving.search("Where is the wombat backup copied?", 3)
    assert hits[0].chunk.anchor == "backup"
    assert serving.embedder.name == "minilm"
    # Its next run (an edit) does not rebuild the index back for its own model: two servers
    # set to two models re-embedded the whole vault in turn at every edit, without a word.
    with pytest.raises(IndexStateError, match="another kb-qa process rebuilt this index"):
        serving.index()
    assert serving.stats()["embed_model"] == "minilm"
    assert serving.search("Where is the wombat backup copied?", 3)[0].chunk.anchor == "backup"
    again = kb(vault, embed_model="hash")  # a new process set to it: the user's choice
    assert "minilm" in again.index().rebuilt


def test_a_server_does_not_rechunk_back_what_another_process_rechunked(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """`KBQA_CHUNK_CHARS=600 kb-qa index` beside `kb-qa serve --watch` (1500): the server's
    next edit re-chunked every file back, without a word, as each would at every edit."""
    vault = make_vault(VAULT)
    serving = kb(vault, embed_model="hash")
    serving.index()
    other = kb(vault, embed_model="hash", chunk_chars=600)
    assert "chunk_chars" in other.index().rebuilt
    other.close()
    with pytest.raises(IndexStateError, match="another kb-qa process rebuilt this index"):
        serving.index()
    assert serving.search("Where is the wombat backup copied?", 3)[0].chunk.anchor == "backup"
    again = kb(vault, embed_model="hash")  # a new process set so: the user's choice
    assert "chunk_chars" in again.index().rebuilt


def test_a_model_that_cannot_run_leaves_the_index_as_it_was(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    """Switching to a model that cannot run (a typo in an ``onnx:`` folder, a provider's
    model without the ``llm`` extra) emptied the index before the model was tried, and
    recorded its name: every later run, the setting removed, tried it again."""
    vault = make_vault(VAULT)
    first = kb(vault, embed_model="hash")
    chunks = first.index().chunks
    first.close()
    broken = kb(vault, embed_model=f"onnx:{tmp_path / 'no-such-model'}")
    with pytest.raises(EmbeddingError, match=r"onnx:FOLDER needs FOLDER/model\.onnx"):
        broken.index()
    broken.close()
    again = kb(vault, embed_model="auto")  # the setting removed
    report = again.index()
    assert again.stats()["embed_model"] == "hash"
    assert (report.rebuilt, report.embedded, report.chunks) == ("", 0, chunks)
    assert again.search("Where is the wombat backup copied?", 3)[0].chunk.anchor == "backup"
    assert_consistent(again)


@pytest.mark.parametrize("earlier", ["", "int8-fp32-pc"])
def test_an_index_from_an_earlier_build_of_the_model_re_embeds_once(
    make_vault: Callable[..., Path], kb: KB, earlier: str
) -> None:
    """Indexes made before minilm computed in integers recorded no build (their vectors
    came from the fp32 graph), and those of its 8-bit build ("int8-fp32-pc") hold vectors
    that depended on the CPU: the next run re-embeds everything, says so in one line, and
    the run after it reuses every vector."""
    vault = make_vault(VAULT)
    first = kb(vault, embed_model="minilm")
    first.index()
    first.store.set_meta(embed_build=earlier)  # what an index of an earlier release holds
    first.close()
    second = kb(vault, embed_model="minilm")
    report = second.index()
    assert report.rebuilt == (
        "the minilm model was updated (build int8-fp32-pc7): rebuilding the index and "
        "re-embedding everything"
    )
    assert report.embedded == report.chunks == 9
    assert second.index().rebuilt == "" and second.index().embedded == 0
    assert second.search("Where is the wombat backup copied?", 3)[0].chunk.anchor == "backup"
    assert_consistent(second)


def test_include_and_exclude_filters(make_vault: Callable[..., Path], kb: KB) -> None:
    index = kb(make_vault(VAULT))
    index.index()
    everything = {h.chunk.path for h in index.search("the", 50)}
    assert everything == {"alpha.md", "beta.md", "notes/gamma.md"}
    only_notes = index.search("install database eggs", 50, include=["notes"])
    assert {h.chunk.path for h in only_notes} == {"notes/gamma.md"}
    globbed = index.search("install database eggs", 50, include=["*.md"], exclude=["notes/*"])
    assert {h.chunk.path for h in globbed} == {"alpha.md", "beta.md"}
    assert index.search("install", 50, exclude=["alpha.md"]) and all(
        h.chunk.path != "alpha.md" for h in index.search("install", 50, exclude=["alpha.md"])
    )
    assert index.search("install", 50, include=["nothing/here"]) == []


def test_chinese_vault_is_searchable_through_keywords(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(
        {
            "安装.md": "# 安装指南\n\n## 下载\n\n从官网下载安装包，然后运行安装程序。\n\n"
            "## 向量数据库\n\n本系统使用向量数据库保存文档的嵌入向量。\n",
            "配置.md": "# 配置说明\n\n## 端口\n\n服务默认监听八千端口。\n",
            "english.md": page("English", ("Database", "A vector database stores embeddings.")),
        }
    )
    index = kb(vault)
    index.index()
    hits = index.search("向量数据库", 5)
    assert hits[0].chunk.path == "安装.md"
    assert hits[0].chunk.heading == "向量数据库"
    assert hits[0].keyword_rank == 1
    port = index.search("默认端口是多少", 5)
    assert port[0].chunk.path == "配置.md" and port[0].keyword_rank == 1


MKDOCS_YML = """\
site_name: Test
site_url: https://example.org/docs/
use_directory_urls: false
exclude_docs: |
  drafts/
  *.tmp.md
draft_docs: |
  unreleased/
"""


def test_mkdocs_site_url_and_file_urls(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": MKDOCS_YML,
            "docs/guide/setup.md": page("Setup", ("Install", "Run the installer.")),
            "outside.md": "# Not in docs_dir\n\nignored\n",
        }
    )
    index = kb(vault)
    index.index()
    chunks = {c.anchor: c for c in index.store.chunks()}
    assert {c.path for c in chunks.values()} == {"docs/guide/setup.md"}
    assert chunks["install"].url == "guide/setup.html"
    assert index.url(chunks["install"]) == "https://example.org/docs/guide/setup.html#install"
    assert index.pages() == [
        {"path": "docs/guide/setup.md", "title": "Setup", "url": "guide/setup.html"}
    ]
    # Switching to directory URLs re-addresses every chunk.
    (vault / "mkdocs.yml").write_text(MKDOCS_YML.replace("false", "true"))
    report = index.index()
    assert report.rebuilt.startswith("the site config's use_directory_urls changed: ")
    assert report.embedded == 0
    assert {c.url for c in index.store.chunks()} == {"guide/setup/"}


@pytest.mark.parametrize(
    "config",
    [
        MKDOCS_YML + "hooks:\n  - hooks.py\n",
        # pymdownx.snippets' base_path is the vault's path: a copied Zensical site was
        # re-chunked whole ("the site config's Markdown extension settings changed")
        MKDOCS_YML + "markdown_extensions:\n  - pymdownx.snippets\n",
    ],
    ids=["hooks", "snippets"],
)
def test_a_site_moved_with_its_index_keeps_its_chunks(
    make_vault: Callable[..., Path], kb: KB, config: str
) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": config,
            "hooks.py": "def on_page_markdown(markdown, **kwargs):\n    return markdown\n",
            "docs/guide/setup.md": page("Setup", ("Install", "Run the installer.")),
        }
    )
    index = kb(vault, index_dir=vault / ".kb-qa")
    assert index.index().chunks == 2
    index.close()
    moved = vault.rename(vault.with_name("moved"))
    again = kb(moved, index_dir=moved / ".kb-qa")
    report = again.index()
    assert (report.rebuilt, report.changed_files, report.embedded) == ("", 0, 0)
    assert again.search("installer", 1)[0].chunk.path == "docs/guide/setup.md"


def test_index_page_urls_without_directory_urls(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": MKDOCS_YML,
            "docs/index.md": page("Home", ("Welcome", "hello")),
            "docs/guide/README.md": page("Guide", ("Start", "go")),
        }
    )
    index = kb(vault)
    index.index()
    urls = {c.path: c.url for c in index.store.chunks()}
    assert urls == {"docs/index.md": "index.html", "docs/guide/README.md": "guide/index.html"}


def test_exclude_docs_and_mkdocs_defaults(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": MKDOCS_YML,
            "docs/kept.md": page("Kept", ("Body", "visible text")),
            "docs/drafts/secret.md": page("Draft", ("Body", "draft text")),
            # Left out of a build: never quoted, nor cited with a link that 404s.
            "docs/unreleased/next.md": page("Next", ("Body", "unreleased text")),
            "docs/notes.tmp.md": page("Tmp", ("Body", "tmp text")),
            "docs/templates/base.md": page("Template", ("Body", "template text")),
            "docs/.hidden.md": page("Hidden", ("Body", "hidden text")),
        }
    )
    index = kb(vault)
    report = index.index()
    assert [p["path"] for p in index.pages()] == ["docs/kept.md"]
    assert not report.skipped  # excluded on purpose, not skipped as bad input


def test_hidden_tool_and_index_folders_are_skipped(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(
        {
            "real.md": page("Real", ("Body", "text")),
            ".obsidian/workspace.md": "# Obsidian\n",
            ".git/COMMIT.md": "# git\n",
            "node_modules/pkg/README.md": "# package\n",
            "sub/node_modules/x.md": "# nested package\n",
            "__pycache__/x.md": "# cache\n",
            ".dotfile.md": "# dot\n",
            "sub/deeper/ok.md": page("Ok", ("Body", "text")),
            "notes.txt": "not markdown",
            "other.markdown": page("Other", ("Body", "text")),
        }
    )
    index = kb(vault, index_dir=vault / "kbindex")  # an index folder inside the vault
    index.index()
    (vault / "kbindex" / "stray.md").write_text("# inside the index folder\n", encoding="utf-8")
    index.index()
    assert [p["path"] for p in index.pages()] == ["other.markdown", "real.md", "sub/deeper/ok.md"]


def test_ignore_setting_globs(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(
        {
            "keep.md": page("Keep", ("Body", "text")),
            "drafts/a.md": page("A", ("Body", "text")),
            "journal/2024-01-01.md": page("Day", ("Body", "text")),
            "journal/index.md": page("Journal", ("Body", "text")),
            "x.private.md": page("Private", ("Body", "text")),
        }
    )
    index = kb(vault, ignore=("drafts/", "journal/2*.md", "*.private.md"))
    index.index()
    assert [p["path"] for p in index.pages()] == ["journal/index.md", "keep.md"]
    # The same setting from the environment, comma separated.
    monkeypatch.setenv("KBQA_IGNORE", "drafts/, journal/")
    from_env = kb(vault, index_dir=tmp_path / "idx-env")
    assert from_env.settings.ignore == ("drafts/", "journal/")
    from_env.index()
    assert [p["path"] for p in from_env.pages()] == ["keep.md", "x.private.md"]


def test_second_writer_is_refused(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(VAULT)
    first = kb(vault)
    second = kb(vault)
    with first.store.writer_lock(), pytest.raises(IndexStateError, match="Another kb-qa process"):
        second.index()
    assert second.index().files == 3  # the lock is released afterwards


def test_open_index_sees_vectors_written_by_another_process(
    make_vault: Callable[..., Path], kb: KB, run_cli: CLI
) -> None:
    vault = make_vault(VAULT)
    reader = kb(vault)
    reader.index()
    assert reader.search("install", 3)  # the reader has loaded its view of the index
    (vault / "new.md").write_text(page("New", ("Animals", "kangaroo koala dingo")))
    result = run_cli("index", str(vault), "--index-dir", str(reader.settings.index_path), "--quiet")
    assert result.returncode == 0, result.stderr
    hit = next(h for h in reader.search("kangaroo koala dingo", 10) if h.chunk.path == "new.md")
    assert hit.keyword_rank == 1  # the manifest side is fresh ...
    assert hit.vector_rank == 1  # ... and the vector side should be too


RETRIEVAL_VAULT = {
    "appearance.md": page(
        "Appearance",
        (
            "Dark mode",
            "Set the palette scheme to slate to give the whole site a night theme "
            "with light text on a black background.",
        ),
        ("Fonts", "Choose the typeface for body text and for code listings."),
    ),
    "deploy.md": page(
        "Deployment",
        ("GitHub Pages", "Push the built site to the gh-pages branch and GitHub serves it."),
        ("Custom domain", "Add a CNAME file naming your domain and point DNS records at it."),
    ),
    "search.md": page(
        "Search",
        (
            "Offline search",
            "The search index ships with the pages, so visitors can look things "
            "up without a server or network connection.",
        ),
        ("Languages", "Stemming rules exist for German, French, Spanish and more."),
    ),
}


def test_real_minilm_model_retrieves_paraphrased_questions(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    index = kb(make_vault(RETRIEVAL_VAULT), embed_model="minilm")
    report = index.index()
    assert report.embedded == report.chunks
    questions = {
        "How can I make my documentation use a black colour scheme?": "dark-mode",
        "How do I host the docs on my own web address?": "custom-domain",
        "Can readers find things when they have no internet?": "offline-search",
        "Which fonts can I pick?": "fonts",
    }
    for question, anchor in questions.items():
        hits = index.search(question, 3)
        assert hits[0].chunk.anchor == anchor, (question, [h.chunk.anchor for h in hits])
        assert hits[0].vector_rank == 1, question


def test_anchors_follow_heading_edits_after_body_edits(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    # Body edits reuse the remembered outline; heading edits must still re-render ids.
    vault = make_vault({"p.md": "# P\n\n## Setup\n\nOne.\n\n## Usage\n\nTwo.\n"})
    base = kb(vault)
    base.index()
    page = vault / "p.md"
    page.write_text("# P\n\n## Setup\n\nOne, edited.\n\n## Usage\n\nTwo.\n")
    base.index()
    assert [c.anchor for c in base.store.chunks()] == ["p", "setup", "usage"]
    page.write_text("# P\n\n## Setup\n\nOne, edited.\n\n## Setup\n\nTwo.\n")
    base.index()
    assert [c.anchor for c in base.store.chunks()] == ["p", "setup", "setup_1"]


def test_a_run_says_where_its_time_went(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    report = kb(make_vault({"a.md": "# A\n\n## B\n\ntext\n"})).index()
    assert list(report.phases) == ["reading", "chunking", "embedding", "writing"]
    assert all(v >= 0 for v in report.phases.values())
    assert sum(report.phases.values()) <= report.seconds + 0.01


def test_deleted_pages_leave_search_before_new_ones_are_embedded(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """A bulk change (a branch switched: 260 pages deleted, 266 added) served the deleted
    pages for the 6 minutes the new ones took to embed, health saying ok: their links
    404 once the site is deployed."""
    vault = make_vault(
        {"a.md": "# Alpha\n\nThe boiler pressure is 1.5 bar.\n", "b.md": "# Beta\n\nWombats.\n"}
    )
    index = kb(vault)
    index.index()
    (vault / "a.md").unlink()
    (vault / "c.md").write_text("# Gamma\n\nKettles whistle.\n", encoding="utf-8")
    other = kb(vault)  # a server reading the same index
    during: list[set[str]] = []

    def embedding(done: int, total: int) -> None:
        if not during:
            during.append({h.chunk.path for h in other.search("boiler pressure", 5)})

    report = index.index(progress=embedding)
    assert during == [{"b.md"}]
    assert report.deleted == 1 and report.removed_files == 1
    assert {h.chunk.path for h in other.search("kettles", 5)} == {"b.md", "c.md"}


def test_the_index_folder_inside_a_vault_is_kept_out_of_git(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Readers' questions and ratings are stored there: `git add -A` must not stage them."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    vault = make_vault(VAULT)
    git = ["git", "-C", str(vault)]
    subprocess.run([*git, "init", "-q"], check=True)
    kb(vault, index_dir=vault / ".kb-qa").index()
    subprocess.run([*git, "add", "-A"], check=True)
    staged = subprocess.run(
        [*git, "diff", "--cached", "--name-only"], check=True, capture_output=True, text=True
    ).stdout.split()
    assert staged and not [p for p in staged if p.startswith(".kb-qa")]
    # The vault's .kb-qa of a kb-qa that wrote none (before 2026-12-05) gets one.
    (vault / ".kb-qa" / ".gitignore").unlink()
    kb(vault, index_dir=vault / ".kb-qa").index()
    assert (vault / ".kb-qa" / ".gitignore").read_text().endswith("*\n")
    # A folder the user chose may hold their own files: nothing is written to hide them.
    chosen = make_vault({"mine.md": "# Mine\n"}, name="chosen")
    kb(vault, index_dir=chosen).index()
    assert not (chosen / ".gitignore").exists()


def test_an_index_folder_kb_qa_cannot_write_is_said_in_words(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """The write lock was opened outside any error handling: a read-only index folder gave a
    traceback. (A folder where the lock file should be fails the same way as a read-only
    file system, without needing one.)"""
    vault = make_vault(VAULT)
    first = kb(vault)
    first.index()
    lock = first.store.folder / "write.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()
    # It said "Searching it still works": of a read-only folder, a search fails ("attempt to
    # write a readonly database") unless SQLite's -wal and -shm files were left behind.
    with pytest.raises(IndexStateError, match=r"Cannot write the index in .*: Is a directory\. "):
        first.index()
    with pytest.raises(IndexStateError) as said:
        first.index()
    assert "still works" not in str(said.value) and "to be searched too" in str(said.value)
    assert first.search("Where is the wombat backup copied?", 3)[0].chunk.anchor == "backup"


def test_a_rebuild_leaves_no_vectors_of_the_old_index_on_disk(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Chroma keeps a deleted collection's vector folder (chroma-core/chroma#5259): each
    rebuild (a model change here; an upgrade that re-chunks, a chunk_chars change) left the
    old vectors on disk, 111 MB a time for a 67,000-section vault."""
    vault = make_vault(VAULT)

    def vector_folders(index: KnowledgeBase) -> list[str]:
        chroma = index.store.folder / "chroma"
        return sorted(p.name for p in chroma.iterdir() if p.is_dir())

    first = kb(vault, embed_model="hash")
    first.index()
    before = vector_folders(first)
    first.close()
    for model in ("minilm", "hash"):
        again = kb(vault, embed_model=model)
        assert again.index().rebuilt
        folders = vector_folders(again)
        again.close()
        assert len(folders) == 1 and folders != before
        before = folders
    last = kb(vault, embed_model="hash")
    assert last.search("Where is the wombat backup copied?", 3)[0].chunk.anchor == "backup"
    assert_consistent(last)


def test_the_embedding_cache_keeps_no_more_unused_vectors_than_the_index_held_chunks(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Every edit left its old text's vector in the cache, never pruned: a vault edited for
    years grew its index without end (8,442 unused vectors in the scale audit)."""
    vault = make_vault(VAULT)
    base = kb(vault)
    chunks = base.index().chunks
    note = next(p for p in vault.rglob("*.md"))
    most = chunks  # the most chunks the index has held
    for n in range(3 * chunks):
        note.write_text(f"# Edited\n\nVersion {n} of the note.\n", encoding="utf-8")
        most = max(most, base.index().chunks)
    db = base.store.db
    cached = db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    current = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    assert cached <= current + most < 3 * chunks
    # The newest are kept: undoing the last edit embeds nothing.
    note.write_text(f"# Edited\n\nVersion {3 * chunks - 2} of the note.\n", encoding="utf-8")
    assert base.index().embedded == 0
    assert_consistent(base)


def test_a_checkout_that_takes_the_vault_away_and_back_embeds_nothing(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """`git checkout` of an old two-page commit, then back: the cache had kept as many
    unused vectors as the two pages' chunks, so going back re-embedded the whole vault (15 s
    of "not covered" answers for 260 sections); and a second small checkout in between too."""
    vault = make_vault({f"page{n}.md": f"# Page {n}\n\nThe wombat fact {n}.\n" for n in range(30)})
    base = kb(vault)
    assert base.index().embedded == 30
    saved = {p: p.read_text(encoding="utf-8") for p in vault.glob("*.md")}
    for p in list(saved)[2:]:
        p.unlink()
    base.index()
    (vault / "page0.md").write_text("# Page 0\n\nAnother old fact.\n", encoding="utf-8")
    base.index()
    for p, text in saved.items():
        p.write_text(text, encoding="utf-8")
    assert base.index().embedded == 0
    assert_consistent(base)


def test_vectors_stored_under_an_older_key_are_still_found(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """The in-memory vectors were looked up by the key this version computes: a section an
    older kb-qa keyed otherwise (text holding ==marks==, embedded before the marks were
    dropped) fell back to asking Chroma, and to keyword-only search where the vault had
    been moved, until the next index run."""
    vault = make_vault({"home.md": "# Home\n\n## Chores\n\n==The stopcock== is under the sink.\n"})
    base = kb(vault)
    base.index()
    (chunk,) = [c for c in base.store.chunks() if c.heading == "Chores"]
    older = "an-older-kb-qa-key"
    with base.store.db:
        base.store.db.execute("UPDATE vectors SET key=? WHERE key=?", (older, embed_key(chunk)))
        base.store.db.execute("UPDATE chunks SET embed_key=? WHERE id=?", (older, chunk.id))
    assert chunk.id in base.stored_vectors([chunk])


def test_a_library_search_says_what_is_wrong_with_its_arguments(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """k=-1 returned all but three sections, a string include matched nothing and an
    absolute or backslashed path filter nothing either, a lone surrogate crashed the
    tokenizer: the CLI, API and MCP checked these, the library did not."""
    vault = make_vault(VAULT)
    base = kb(vault)
    base.index()
    for k in (0, -1, 2.5, "3", True):
        with pytest.raises(ValueError, match="k must be a whole number of 1 or more"):
            base.search("wombat", k)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"include must be a list of vault paths"):
        base.search("wombat", 3, include="notes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="the question must be a string"):
        base.search(None, 3)  # type: ignore[arg-type]
    assert base.search("wombat \ud800 backup", 3)
    some = "notes/gamma.md"
    for written in (str(vault / some), "notes\\gamma.md"):
        assert {h.chunk.path for h in base.search("platypus eggs", 5, include=[written])} == {some}


def test_a_relative_vault_given_to_a_library_stays_where_it_was(
    make_vault: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KnowledgeBase(path, settings=...) kept a relative vault: after the host process
    changed directory, index() made a stray .kb-qa elsewhere and searches found nothing."""
    vault = make_vault(VAULT)
    monkeypatch.chdir(vault.parent)
    base = KnowledgeBase(vault.name, settings=Settings(embed_model="hash"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    base.index()
    assert base.search("platypus eggs", 1)[0].chunk.path == "notes/gamma.md"
    assert not (elsewhere / vault.name).exists()
    base.close()


def test_threads_that_open_a_new_index_at_once_share_one_chroma_client(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """A health check during a server's first index run opened the embedded Chroma beside
    the run: two clients made together on one folder broke both ("'RustBindingsAPI' object
    has no attribute 'bindings'"), and the run failed."""
    base = kb(make_vault({"a.md": "# A\n\nText.\n"}))
    start = threading.Barrier(8)
    failures: list[BaseException] = []

    def count() -> None:
        start.wait()
        try:
            base.store.vectors.chroma(lambda collection: collection.count())
        except BaseException as exc:  # noqa: BLE001 - every failure is the test's answer
            failures.append(exc)

    threads = [threading.Thread(target=count) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    assert base.index().files == 1


def test_closing_while_other_threads_search_neither_crashes_nor_breaks_them(
    make_vault: Callable[..., Path],
) -> None:
    """An app closing its KnowledgeBase with searches in flight crashed the process
    (segmentation fault, 4 runs of 6) or left a thread raising "Cannot operate on a closed
    database": close() closed every thread's connection under the query it was running."""
    vault = make_vault(VAULT)
    with KnowledgeBase(vault, embed_model="hash") as base:
        base.index()
    script = f"""
import threading, time
from kb_qa import KnowledgeBase
kb = KnowledgeBase({str(vault)!r}, embed_model="hash")
stop, errors = threading.Event(), []
def search():
    while not stop.is_set():
        try:
            kb.search("Where is the wombat backup copied?", 3)
        except Exception as exc:
            errors.append(repr(exc))
threads = [threading.Thread(target=search) for _ in range(3)]
for t in threads:
    t.start()
for _ in range(5):
    time.sleep(0.2)
    kb.close()
stop.set()
for t in threads:
    t.join()
assert not errors, errors[:3]
assert kb.search("Where is the wombat backup copied?", 3)
"""
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert ran.returncode == 0, ran.stderr[-2000:]


def test_a_search_during_an_index_run_reads_the_view_it_had(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """A reader arriving between two writes of a run (each bumps the generation) built the
    view of the half-written index itself: one search took 3 to 14 s at 31,000 sections,
    while the docs say a search never waits on a write. The run's writer builds it."""
    vault = make_vault(VAULT)
    base = kb(vault, embed_model="hash")
    base.index()
    before = base.view_chunks()[0]
    (vault / "new.md").write_text("# New\n\n## Plinth\n\nThe plinthwhistle is new.\n")
    seen: list[tuple[str, list[str]]] = []

    def search() -> None:
        hits = base.search("plinthwhistle", 3)
        seen.append((base.view_chunks()[0], [h.chunk.path for h in hits]))

    def steps(step: str, done: int, total: int) -> None:
        if step == "writing" and done == total:  # written, the generation bumped
            reader = threading.Thread(target=search)
            reader.start()
            reader.join()

    base.index(steps=steps)
    assert seen and seen[0][0] == before and "new.md" not in seen[0][1]
    assert base.view_chunks()[0] != before  # built by the writer after its run
    assert base.search("plinthwhistle", 3)[0].chunk.path == "new.md"
