"""A site's configuration runs no code unless rendering is on (and then none from outside).

``render: false`` is for vaults whose code you do not trust: their ``mkdocs.yml`` is read
with a safe loader (``!ENV`` and ``!relative`` understood, ``!!python/...`` tags refused
unless they name a Markdown/pymdownx/Material/Zensical function), and markdown extensions
are imported only from those packages. ``zensical.toml`` is always read that way. With
rendering on, ``INHERIT:`` may not lead outside the vault.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from api_helpers import serve_process
from conftest import cli_env

from kb_qa.errors import ConfigError
from kb_qa.ingest.site import load_site, site_name
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.serving import preview_origins

KB = Callable[..., KnowledgeBase]
GOOD = "# Good\n\n## Otters\n\nOtters hold hands while they sleep.\n"
ZEN = "Beautiful is better than ugly"


def _touch(marker: Path) -> str:
    """A shell command that leaves ``marker`` behind if anything runs it."""
    return f"touch {marker}"


def test_python_tag_with_render_off_runs_nothing_and_stops_indexing(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    config = f'site_name: !!python/object/apply:os.system ["{_touch(marker)}"]\n'
    vault = make_vault({"mkdocs.yml": config, "docs/a.md": GOOD})
    instance = kb(vault, render=False)  # opening the index reads site_name
    with pytest.raises(ConfigError) as info:
        instance.index()
    message = str(info.value)
    assert str(vault / "mkdocs.yml") in message
    assert "!!python/object/apply:os.system" in message
    assert "remove the tag" in message.lower() and "render" in message
    assert site_name(vault) == ""  # the name is read without running anything either
    assert not marker.exists()


@pytest.mark.parametrize("command", ["index", "search"])
def test_python_tag_with_render_off_from_the_cli(
    make_vault: Callable[..., Path],
    run_cli: Callable[..., subprocess.CompletedProcess[str]],
    tmp_path: Path,
    command: str,
) -> None:
    marker = tmp_path / f"pwned-{command}"
    config = f'site_name: !!python/object/apply:os.system ["{_touch(marker)}"]\n'
    vault = make_vault({"mkdocs.yml": config, "docs/a.md": GOOD})
    args = (
        [command, str(vault)] if command == "index" else [command, "otters", "--vault", str(vault)]
    )
    env = {"KBQA_RENDER": "0", "KBQA_INDEX_DIR": str(tmp_path / "idx")}
    result = run_cli(*args, env=env)
    assert not marker.exists(), result.stderr
    if command == "index":
        assert result.returncode == 1
        assert "!!python/object/apply:os.system" in result.stderr


def test_unlisted_python_names_are_refused_with_render_off(
    make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    config = (
        "site_name: T\nmarkdown_extensions:\n  - toc:\n"
        "      slugify: !!python/name:subprocess.getoutput\n"
    )
    vault = make_vault({"mkdocs.yml": config, "docs/a.md": GOOD})
    with pytest.raises(ConfigError, match=r"!!python/name:subprocess\.getoutput") as info:
        load_site(vault)  # the default: rendering off
    assert "line 4" in str(info.value)


def test_allowlisted_tags_and_env_work_with_render_off(
    make_vault: Callable[..., Path], kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What real Material sites write: every one of these resolves without the site's code.
    monkeypatch.setenv("KBQA_TEST_SITE_URL", "https://docs.example.org/zoo/")
    config = (
        "site_name: !ENV [KBQA_TEST_NO_SUCH_VAR, Zoo Docs]\n"
        "site_url: !ENV KBQA_TEST_SITE_URL\n"
        "markdown_extensions:\n"
        "  - toc:\n"
        "      slugify: !!python/object/apply:pymdownx.slugs.slugify\n"
        "        kwds:\n"
        "          case: lower\n"
        "  - pymdownx.emoji:\n"
        "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
        "      emoji_generator: !!python/name:material.extensions.emoji.to_svg\n"
        "  - pymdownx.superfences:\n"
        "      custom_fences:\n"
        "        - name: mermaid\n"
        "          class: mermaid\n"
        "          format: !!python/name:pymdownx.superfences.fence_code_format\n"
        "  - pymdownx.snippets:\n"
        "      base_path: !relative $config_dir\n"
    )
    vault = make_vault({"mkdocs.yml": config, "docs/a.md": "# Tiere\n\n## Größe\n\ntext\n"})
    site = load_site(vault)
    assert site.warnings == []
    assert site.site_url == "https://docs.example.org/zoo/"
    assert site.extension_configs["pymdownx.snippets"]["base_path"] == [str(vault)]
    assert site_name(vault) == "Zoo Docs"
    instance = kb(vault, render=False)
    report = instance.index()
    assert report.warnings == []
    # pymdownx's slugify keeps the umlauts (Python-Markdown's default would give "groe").
    assert [c.anchor for c in instance.store.chunks()] == ["tiere", "größe"]
    assert instance.store.workspace == "zoo-docs"


_IMPORTS_PROBE = """
import json, sys
from pathlib import Path
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.ingest.site import load_site

mkdocs_vault, zensical_vault, index_dir = map(Path, sys.argv[1:4])
with KnowledgeBase(mkdocs_vault, embed_model="hash", index_dir=index_dir, render=False) as kb:
    report = kb.index()
zensical = load_site(zensical_vault, render=True)  # zensical.toml: safe whatever the setting
print(json.dumps({
    "imported": "this" in sys.modules,
    "mkdocs": [w for _, w in report.warnings],
    "zensical": zensical.warnings,
}))
"""


def test_unlisted_extensions_are_never_imported(
    make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    # `this` prints the Zen of Python when it is imported: the probe runs in a fresh process.
    mkdocs_vault = make_vault(
        {
            "mkdocs.yml": "site_name: T\nmarkdown_extensions:\n  - this\n  - attr_list\n",
            "docs/a.md": "# A\n\n## Named { #named }\n\ntext\n",
        },
        name="mkdocs-vault",
    )
    zensical_vault = make_vault(
        {
            "zensical.toml": '[project]\nsite_name = "Z"\n\n'
            "[project.markdown_extensions]\nthis = {}\nadmonition = {}\n",
            "docs/a.md": GOOD,
        },
        name="zensical-vault",
    )
    probe = [sys.executable, "-c", _IMPORTS_PROBE]
    result = subprocess.run(
        [*probe, str(mkdocs_vault), str(zensical_vault), str(tmp_path / "idx")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert ZEN not in result.stdout + result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["imported"] is False
    for warnings in (found["mkdocs"], found["zensical"]):
        [warning] = [w for w in warnings if "'this'" in w]
        assert "not loaded" in warning


@pytest.mark.parametrize("render", [False, True])
def test_zensical_slugify_object_outside_the_allowlist_runs_nothing(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path, render: bool
) -> None:
    marker = tmp_path / "pwned"
    toml = (
        '[project]\nsite_name = "Z"\n\n[project.markdown_extensions.toc]\n'
        f'slugify = {{object = "subprocess.getoutput", kwds = {{cmd = "{_touch(marker)}"}}}}\n'
    )
    vault = make_vault({"zensical.toml": toml, "docs/a.md": "# A\n\n## Größe\n\ntext\n"})
    instance = kb(vault, render=render)
    report = instance.index()
    assert not marker.exists()
    [warning] = [w for _, w in report.warnings if "subprocess.getoutput" in w]
    assert "default slugify" in warning
    # Python-Markdown's default slugify, with the toc extension still applied.
    assert [c.anchor for c in instance.store.chunks()] == ["a", "groe"]


def test_zensical_allowlisted_slugify_object_still_works(
    make_vault: Callable[..., Path],
) -> None:
    toml = (
        '[project]\nsite_name = "Z"\n\n[project.markdown_extensions.toc]\n'
        'slugify = {object = "pymdownx.slugs.slugify", kwds = {case = "lower"}}\n'
    )
    vault = make_vault({"zensical.toml": toml, "docs/a.md": GOOD})
    site = load_site(vault)
    assert site.warnings == []
    assert callable(site.extension_configs["toc"]["slugify"])


def _outside_base(tmp_path: Path, marker: Path) -> Path:
    base = tmp_path / "outside" / "base.yml"
    base.parent.mkdir(parents=True)
    base.write_text(
        f'site_name: !!python/object/apply:os.system ["{_touch(marker)}"]\n', encoding="utf-8"
    )
    return base


def test_inherit_from_outside_the_vault_is_refused_with_render_on(
    make_vault: Callable[..., Path], kb: KB, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    _outside_base(tmp_path, marker)
    vault = make_vault({"mkdocs.yml": "INHERIT: ../outside/base.yml\n", "docs/a.md": GOOD})
    instance = kb(vault)  # rendering on: the default
    with pytest.raises(ConfigError, match="INHERIT") as info:
        instance.index()
    assert "outside the vault" in str(info.value)
    assert str(vault / "mkdocs.yml") in str(info.value)
    assert not marker.exists()


def test_inherit_through_a_symlink_out_of_the_vault_is_refused(
    make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    base = _outside_base(tmp_path, marker)
    vault = make_vault({"mkdocs.yml": "INHERIT: base.yml\n", "docs/a.md": GOOD})
    (vault / "base.yml").symlink_to(base)
    with pytest.raises(ConfigError, match="outside the vault"):
        load_site(vault, render=True)
    assert not marker.exists()


def test_rendering_refuses_inherit_from_outside_too(
    make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    # render_pages on its own (without load_site before it) runs nothing from outside either.
    from kb_qa.ingest import render

    marker = tmp_path / "pwned"
    _outside_base(tmp_path, marker)
    vault = make_vault({"mkdocs.yml": "INHERIT: ../outside/base.yml\n", "docs/a.md": GOOD})
    run = render.render_pages(
        vault, vault / "mkdocs.yml", lambda _path: True, inside=lambda _path: ""
    )
    assert run.pages == {}
    [(where, warning)] = run.warnings
    assert where == "mkdocs.yml" and "outside the vault" in warning
    assert not marker.exists()


def test_inherit_inside_the_vault_still_renders(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(
        {
            "base.yml": "site_name: Base\nsite_url: https://docs.example.org/b/\n",
            "mkdocs.yml": "INHERIT: base.yml\nmarkdown_extensions:\n  - attr_list\n",
            "docs/a.md": "# A\n\n## Named { #named }\n\ntext\n",
        }
    )
    instance = kb(vault)
    report = instance.index()
    assert report.warnings == []
    assert "rendering" in report.phases
    assert [c.anchor for c in instance.store.chunks()] == ["a", "named"]


@pytest.mark.parametrize("render", ["0", "1"])
def test_dev_addr_lets_only_a_local_preview_call_the_api(
    make_vault: Callable[..., Path], tmp_path: Path, render: str
) -> None:
    """``kb-qa serve`` on loopback lets the site's local preview (``dev_addr``) call the API.
    A vault under review naming another host there must not open the API to that site."""
    config = 'site_name: T\ndev_addr: "attacker.example:8123"\n'
    vault = make_vault({"mkdocs.yml": config, "docs/good.md": GOOD})
    env = cli_env(KBQA_INDEX_DIR=str(tmp_path / "idx"), KBQA_RENDER=render)
    with contextlib.closing(serve_process(vault, env)) as served:
        url, _proc = next(served)
        allowed = {
            origin: httpx.get(
                url + "/api/health", headers={"Origin": origin}, timeout=30
            ).headers.get("access-control-allow-origin")
            for origin in ("http://attacker.example:8123", "http://localhost:8123")
        }
    assert allowed == {
        "http://attacker.example:8123": None,
        "http://localhost:8123": "http://localhost:8123",
    }


def test_preview_origins_are_local_whatever_dev_addr_names() -> None:
    assert preview_origins("attacker.example:8000") == (
        "http://localhost:8000",
        "http://127.0.0.1:8000",
    )
    assert preview_origins("0.0.0.0:8000")[-1] == "http://0.0.0.0:8000"
    assert preview_origins("[::1]:8000")[-1] == "http://[::1]:8000"
    assert preview_origins("localhost") == ()  # no port: no preview to allow
    assert preview_origins("localhost:\u00b2") == ()  # a digit, but not a port
