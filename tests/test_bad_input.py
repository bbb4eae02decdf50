"""Bad input never stops a run: each bad file is skipped or repaired and reported by path."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import answered
from uvicorn_thread import UvicornThread

from kb_qa.errors import ConfigError, VaultError
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

KB = Callable[..., KnowledgeBase]

GOOD = "# Good\n\n## Section\n\nPerfectly fine text about otters.\n"


def reasons(pairs: list[tuple[str, str]], path: str) -> list[str]:
    return [message for p, message in pairs if p == path]


def indexed_paths(instance: KnowledgeBase) -> list[str]:
    return [p["path"] for p in instance.pages()]


def test_invalid_utf8_is_indexed_with_replacement(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(
        {
            "good.md": GOOD,
            # UTF-8 with Latin-1 pasted in ("û"): a file read as Windows-1252 is one holding no
            # UTF-8 at all (tests/test_synced_vaults.py)
            "latin1.md": "# Café\n\n## Menu\n\nCrème brûlée with walnuts.\n".encode().replace(
                "û".encode(), "û".encode("latin-1")
            ),
        }
    )
    index = kb(vault)
    report = index.index()
    assert not report.skipped
    [warning] = reasons(report.warnings, "latin1.md")
    assert "UTF-8" in warning and "byte" in warning
    chunks = [c for c in index.store.chunks() if c.path == "latin1.md"]
    assert any("\ufffd" in c.text for c in chunks)
    assert index.search("walnuts", 1)[0].chunk.path == "latin1.md"


def test_binary_file_with_md_name_is_skipped(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault({"good.md": GOOD, "image.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 50})
    index = kb(vault)
    report = index.index()
    [reason] = reasons(report.skipped, "image.md")
    assert "binary" in reason
    assert indexed_paths(index) == ["good.md"]


def test_file_over_max_file_bytes_is_skipped(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault({"good.md": GOOD, "huge.md": "# Huge\n\n" + "word " * 3000})
    index = kb(vault, max_file_bytes=10_000)
    report = index.index()
    [reason] = reasons(report.skipped, "huge.md")
    assert "limit" in reason and "KBQA_MAX_FILE_BYTES" in reason
    assert indexed_paths(index) == ["good.md"]


def test_size_reason_shows_meaningful_numbers(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault({"huge.md": "# Huge\n\n" + "word " * 3000})
    report = kb(vault, max_file_bytes=10_000).index()
    [reason] = reasons(report.skipped, "huge.md")
    assert "0.0 MB" not in reason


def test_unreadable_file_is_skipped(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault({"good.md": GOOD, "secret.md": "# Secret\n\nhidden\n"})
    secret = vault / "secret.md"
    secret.chmod(0)
    try:
        try:
            secret.read_bytes()
        except PermissionError:
            pass
        else:
            pytest.skip("running as root (or with CAP_DAC_OVERRIDE): chmod 000 does not stop reads")
        index = kb(vault)
        report = index.index()
        [reason] = reasons(report.skipped, "secret.md")
        assert "cannot read" in reason
        assert indexed_paths(index) == ["good.md"]
    finally:
        secret.chmod(0o644)


def test_broken_front_matter_is_indexed_with_warning(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(
        {
            "broken.md": "---\ntitle: [unclosed\ntags: {\n---\n"
            "# Broken\n\n## Part\n\nStill useful text.\n",
            "list.md": "---\n- just\n- a list\n---\n# Listed\n\ntext\n",
        }
    )
    index = kb(vault)
    report = index.index()
    assert not report.skipped
    [warning] = reasons(report.warnings, "broken.md")
    assert "front matter" in warning and "YAML" in warning
    [warning] = reasons(report.warnings, "list.md")
    assert "front matter" in warning
    chunks = [c for c in index.store.chunks() if c.path == "broken.md"]
    assert [c.heading_path for c in chunks] == [("Broken",), ("Broken", "Part")]
    assert all("unclosed" not in c.text for c in chunks)  # the block is still stripped


def test_empty_and_front_matter_only_files(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(
        {
            "empty.md": "",
            "blank.md": "\n\n   \n",
            "fm-only.md": "---\ntitle: Only Front Matter\n---\n",
            "good.md": GOOD,
        }
    )
    index = kb(vault)
    report = index.index()
    assert not report.skipped and not report.warnings
    pages = {p["path"]: p["title"] for p in index.pages()}
    assert pages["fm-only.md"] == "Only Front Matter"
    assert set(pages) == {"empty.md", "blank.md", "fm-only.md", "good.md"}
    assert index.search("otters", 1)[0].chunk.path == "good.md"
    assert index.index().embedded == 0


def test_file_that_becomes_binary_is_not_quoted_and_comes_back_when_fixed(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Its old text was still quoted and cited while the page showed the bytes it holds
    now; a file that cannot be *read* (permissions) keeps what was indexed of it."""
    vault = make_vault({"good.md": GOOD, "flip.md": "# Flip\n\n## Gerbil\n\nThe gerbil story.\n"})
    index = kb(vault)
    index.index()
    (vault / "flip.md").write_bytes(b"\x00\x01\x02garbage" * 100)
    report = index.index()
    [reason] = reasons(report.skipped, "flip.md")
    assert "binary" in reason
    assert report.deleted > 0
    assert not [c for c in index.store.chunks() if c.path == "flip.md"]
    assert all(h.chunk.path != "flip.md" for h in index.search("gerbil story", 5))
    # Fixed again: the file is re-read and re-indexed.
    (vault / "flip.md").write_text("# Flip\n\n## Hamster\n\nThe hamster story.\n")
    report = index.index()
    assert not report.skipped
    assert index.search("hamster story", 1)[0].chunk.anchor == "hamster"


def test_unknown_markdown_extension_warns_and_indexes(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: T\nmarkdown_extensions:\n  - attr_list\n"
            "  - no_such_extension_xyz\n  - pymdownx.nonexistent:\n      option: 1\n",
            "docs/a.md": "# A\n\n## Named { #named }\n\ntext\n",
        }
    )
    index = kb(vault)
    report = index.index()
    messages = reasons(report.warnings, "mkdocs.yml")
    assert len(messages) == 2
    assert "no_such_extension_xyz" in messages[0] and "pymdownx.nonexistent" in messages[1]
    # attr_list, which does load, is still applied.
    assert [c.anchor for c in index.store.chunks()] == ["a", "named"]


def test_missing_python_tag_in_mkdocs_yml_is_tolerated(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: T\nsite_url: https://example.org/\nmarkdown_extensions:\n"
            "  - pymdownx.emoji:\n      emoji_index: !!python/name:no_such_module.index\n",
            "docs/a.md": GOOD,
        }
    )
    index = kb(vault)
    index.index()
    assert indexed_paths(index) == ["docs/a.md"]
    assert index.url(index.store.chunks()[0]).startswith("https://example.org/")


def test_extensions_that_fail_on_use_and_relative_tags_are_tolerated(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    # Both come from real sites (FastAPI's family, mkdocstrings): without this the first
    # made every page fail to render (0 sections), the second stopped the run.
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: T\nmarkdown_extensions:\n  - material.extensions.preview\n"
            "  - pymdownx.snippets:\n      base_path: !relative $config_dir\n"
            "  - markdown.extensions.toc:\n      permalink: true\n",
            "docs/a.md": GOOD,
        }
    )
    index = kb(vault)
    report = index.index()
    assert [c.anchor for c in index.store.chunks()] == ["good", "section"]
    assert any("material.extensions.preview" in w for _, w in report.warnings)
    assert all("\u00b6" not in "".join(c.heading_path) for c in index.store.chunks())


def test_invalid_mkdocs_yml_is_a_config_error(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault({"mkdocs.yml": "site_name: [broken\nnav: {\n", "docs/a.md": GOOD})
    index = kb(vault)
    with pytest.raises(ConfigError, match="not valid YAML") as info:
        index.index()
    assert str(vault / "mkdocs.yml") in str(info.value)


def test_missing_docs_dir_is_a_config_error(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault({"mkdocs.yml": "site_name: T\ndocs_dir: pages\n", "docs/a.md": GOOD})
    with pytest.raises(ConfigError, match="docs_dir"):
        kb(vault).index()


def test_missing_vault_is_a_vault_error(tmp_path: Path, kb: KB) -> None:
    missing = tmp_path / "no" / "such" / "vault"
    index = kb(missing, index_dir=tmp_path / "idx")
    with pytest.raises(VaultError) as info:
        index.index()
    assert str(missing) in str(info.value)


def test_missing_vault_with_default_index_dir(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "vault"
    with pytest.raises(VaultError) as info:  # when opening or when indexing: either is fine
        with KnowledgeBase(missing, embed_model="hash") as index:
            index.index()
    assert str(missing) in str(info.value)
    assert not missing.exists(), "opening a knowledge base created the vault folder"


def test_many_headings_file(make_vault: Callable[..., Path], kb: KB) -> None:
    levels = "\n".join("#" * (i % 6 + 1) + f" Heading {i}\n\ntext {i}\n" for i in range(1000))
    same = "# Same\n\n" + "\n".join("## Same\n\nx\n" for _ in range(300))
    vault = make_vault({"many.md": levels, "same.md": same})
    index = kb(vault)
    report = index.index()
    assert not report.skipped
    chunks = index.store.chunks()
    many = [c for c in chunks if c.path == "many.md"]
    assert len(many) == 1000 and len({c.anchor for c in many}) == 1000
    deepest = next(c for c in many if c.anchor == "heading-995")  # an H6 under H1..H5
    assert deepest.heading_path == ("Heading 0", *(f"Heading {i}" for i in range(990, 996)))
    dups = [c.anchor for c in chunks if c.path == "same.md"]
    assert dups[:3] == ["same", "same_1", "same_2"] and dups[-1] == "same_300"
    assert len({c.id for c in chunks}) == len(chunks)


def test_absurdly_deep_nesting_does_not_stop_the_run(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    # Python-Markdown recurses per nesting level: 300 levels exceed Python's stack limit.
    deep_list = "# Deep\n\n" + "".join("    " * i + "- level\n" for i in range(300))
    deep_quote = "# Quote\n\n" + ">" * 500 + " deep quote\n\n## After\n\nafter text\n"
    vault = make_vault({"good.md": GOOD, "list.md": deep_list, "quote.md": deep_quote})
    index = kb(vault)
    report = index.index()
    assert "good.md" in indexed_paths(index)
    assert "quote.md" in indexed_paths(index)
    # Too deep for Python-Markdown: the ids come from the headings alone, the file is kept.
    assert not report.skipped
    assert "list.md" in indexed_paths(index)
    assert index.search("otters", 1)[0].chunk.path == "good.md"


def test_a_page_an_extension_fails_on_is_indexed_from_its_source_once_said(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    # A missing snippet with check_paths makes pymdownx.snippets raise, as MkDocs would.
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: T\nmarkdown_extensions:\n  - pymdownx.snippets:\n"
            "      check_paths: true\n",
            "docs/good.md": GOOD,
            "docs/bad.md": '# Bad\n\n--8<-- "missing.md"\n',
        }
    )
    index = kb(vault)
    report = index.index()
    # Indexed from its source (its ids from its headings alone), the build's failure said
    # once: it was skipped as "nor could its source be parsed", losing the page.
    assert not report.skipped and "docs/bad.md" in indexed_paths(index)
    [reason] = reasons(report.warnings, "docs/bad.md")
    assert "missing.md" in reason and reason.endswith("the page is indexed from its source")
    (vault / "docs" / "bad.md").write_text("# Bad\n\nFixed now.\n")
    report = index.index()
    assert not report.warnings and "docs/bad.md" in indexed_paths(index)


def test_headings_after_a_deep_outline_are_kept(make_vault: Callable[..., Path], kb: KB) -> None:
    outline = "".join("    " * i + f"- level {i}\n" for i in range(12))
    vault = make_vault(
        {"o.md": f"# Outline\n\n{outline}\n## After\n\nafter text\n\n## Later\n\nx\n"}
    )
    index = kb(vault)
    index.index()
    assert [c.anchor for c in index.store.chunks()] == ["outline", "after", "later"]


def test_file_that_grows_over_the_limit_leaves_the_index(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    # Same outcome as a fresh index of the vault would have: the file is skipped and reported.
    vault = make_vault({"good.md": GOOD, "grows.md": "# Grows\n\nsmall\n"})
    index = kb(vault, max_file_bytes=2_000)
    index.index()
    (vault / "grows.md").write_text("# Grows\n\n" + "big " * 1000)
    report = index.index()
    assert reasons(report.skipped, "grows.md")
    assert report.deleted == 1
    assert indexed_paths(index) == ["good.md"]


def test_a_full_disk_is_one_line_and_the_next_run_recovers(
    tiny_disk: Path, make_vault: Callable[..., Path], run_cli: Callable[..., Any]
) -> None:
    pages = {
        f"p{i}.md": f"# Page {i}\n\n"
        + "".join(f"## S{j}\n\n" + f"word{i} text {j} " * 30 + "\n\n" for j in range(8))
        for i in range(60)
    }
    vault = make_vault(pages)
    filler = tiny_disk / "filler"
    filler.write_bytes(b"\0" * 24_000_000)
    index_dir = str(tiny_disk / "idx")
    full = run_cli("index", str(vault), "--index-dir", index_dir)
    assert full.returncode == 1
    assert "is full" in full.stderr and "Free some space" in full.stderr
    assert "Traceback" not in full.stderr and full.stderr.count("kb-qa:") == 1
    filler.unlink()
    # The API's feedback store on the same full disk answers 503, not 500.
    with KnowledgeBase(vault, embed_model="hash", index_dir=tiny_disk / "fb") as fb:
        # The question log off: its writer would take the disk's last bytes at any moment.
        settings = fb.settings.replace(rate_limit=0, question_log=False)
        with UvicornThread(create_app(fb, settings)) as server:
            answer_id = answered(server.url, "q")["answer_id"]  # a real answer's, asked first
            filler2 = tiny_disk / "filler2"
            free = shutil.disk_usage(tiny_disk).free
            filler2.write_bytes(b"\0" * max(0, free - 4096))
            body = {"question": "q", "reason": "r" * 1000, "rating": "up", "answer_id": answer_id}
            response = httpx.post(server.url + "/api/feedback", json=body)
            assert response.status_code == 503 and "cannot be stored" in response.json()["error"]
            filler2.unlink()
    again = run_cli("index", str(vault), "--index-dir", index_dir)
    assert again.returncode == 0, again.stderr
    assert "Indexed 60 files, 540 chunks" in again.stdout


def test_an_index_whose_disk_filled_up_since_says_the_disk_is_full(
    tiny_disk: Path, make_vault: Callable[..., Path], run_cli: Callable[..., Any]
) -> None:
    """Once the disk under a working index was full, every command said "Cannot open the
    index in DIR: disk I/O error. Check permissions", not that the disk was full (SQLite
    could not make the database's shared-memory file)."""
    vault = make_vault({"good.md": GOOD})
    index_dir = str(tiny_disk / "idx")
    assert run_cli("index", str(vault), "--index-dir", index_dir).returncode == 0
    filler = tiny_disk / "filler"
    with filler.open("wb") as out, contextlib.suppress(OSError):  # until the disk is full
        while True:
            out.write(b"\0" * 65536)
            out.flush()
    for args in (["search", "otters", "--vault"], ["index"]):
        result = run_cli(*args, str(vault), "--index-dir", index_dir)
        assert result.returncode == 1
        assert "is full" in result.stderr and "Free some space" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and "Check permissions" not in result.stderr
    filler.unlink()
    again = run_cli("search", "otters", "--vault", str(vault), "--index-dir", index_dir)
    assert again.returncode == 0 and "otters" in again.stdout, again.stderr


def test_one_missing_python_tag_keeps_the_others(
    make_vault: Callable[..., Path], kb: KB, caplog: pytest.LogCaptureFixture
) -> None:
    # Textual's mkdocs.yml: its emoji settings name Material's functions (installed), its
    # SuperFences formatter names textual._doc (not installed where kb-qa runs). Reading
    # the config printed "while constructing a Python object; ignoring that value" three
    # times and dropped every Python tag, so pymdownx.emoji "could not be loaded
    # ('NoneType' object is not callable)". Now only the missing value is dropped, and the
    # cause is said once, in the run's warnings.
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: T\nmarkdown_extensions:\n  - pymdownx.emoji:\n"
            "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
            "      emoji_generator: !!python/name:material.extensions.emoji.to_svg\n"
            "  - pymdownx.superfences:\n      custom_fences:\n        - name: textual\n"
            "          class: textual\n"
            "          format: !!python/name:no_such_module_xyz.format_svg\n",
            "docs/a.md": GOOD,
        }
    )
    index = kb(vault)
    with caplog.at_level("WARNING"):
        report = index.index()
    assert indexed_paths(index) == ["docs/a.md"]
    messages = reasons(report.warnings, "mkdocs.yml")
    assert not [m for m in messages if "pymdownx.emoji" in m], messages
    [cause] = [m for m in messages if "no_such_module_xyz" in m]
    assert "line 10" in cause
    assert not [r for r in caplog.records if "no_such_module_xyz" in r.getMessage()]
    assert not [r for r in caplog.records if "constructing a Python object" in r.getMessage()]
