"""The package's layout: stage folders whose imports only point down, and small modules.

The floors are the ones docs/pages/architecture.md draws: the shared top-level modules,
then ingest, index, kb, answer, owners and wiring side by side, serve and cli. A module may
import from its own folder and from the floors below it, and no two modules import each
other, even through others. Users see none of it: the public names of ``kb_qa``, the
``kb-qa`` command and the ``mkdocs.plugins`` entry point stay where they were.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import markdown
import pytest
import tomlkit

import kb_qa
from kb_qa.ingest import snippet_guard

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kb_qa"
# Tests and the generated widget bundle (widget/kb-qa.js) aside.
MAX_LINES = 400

# The floor of every stage folder; "" is the top of the package (errors, settings, text, types).
FLOORS = {
    "": 0,
    "ingest": 1,
    "index": 2,
    "kb": 3,
    "answer": 4,
    "owners": 5,
    "wiring": 5,
    "serve": 6,
    "cli": 7,
}
# Modules at the top of the package that stand on another stage's floor.
PLACED = {
    # The snippet guard's old path, kept because it names the Markdown extension in every
    # index's fingerprint: it only re-exports kb_qa.ingest.snippet_guard.
    "kb_qa.snippet_guard": "ingest",
    # `python -m kb_qa`: the command line, as kb_qa/cli/__main__.py.
    "kb_qa.__main__": "cli",
}
# The package itself: the public names, KnowledgeBase loaded lazily from kb_qa.kb.
FACADE = "kb_qa"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _stage(module: str) -> str:
    """The stage folder a module is in; "" for the top of the package."""
    if module in PLACED:
        return PLACED[module]
    parts = MODULES[module].relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else ""


def _resolve(name: str) -> str | None:
    """The kb_qa module an imported name is, or None when it is not a module of kb_qa."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set[str]:
    """Every kb_qa module ``module`` imports, at the top or inside a function."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: set[str] = set()
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name == "kb_qa" or name.startswith("kb_qa."):
                target = _resolve(name)
                if target and target not in (module, FACADE):
                    found.add(target)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def test_the_public_names_of_kb_qa_import() -> None:
    assert "KnowledgeBase" in kb_qa.__all__
    for name in kb_qa.__all__:
        assert getattr(kb_qa, name) is not None, name
    from kb_qa.kb.knowledge_base import KnowledgeBase

    assert kb_qa.KnowledgeBase is KnowledgeBase


def test_answer_streams_whatever_was_imported_before(tmp_path: Path) -> None:
    """`from kb_qa import answer` gave the subpackage kb_qa.answer once anything had imported
    it ("'module' object is not callable"), as the README's `async for event in answer(kb,
    question)` found; only the first use in a fresh process was the function."""
    (tmp_path / "a.md").write_text("# A\n\n## Tokens\n\nTokens expire after 90 days.\n")
    script = f"""
import asyncio
import kb_qa.answer.extractive, kb_qa.answer.answering as answering
from kb_qa import Done, KnowledgeBase, answer

async def main():
    with KnowledgeBase({str(tmp_path)!r}, embed_model="hash") as kb:
        kb.index()
        events = [e async for e in answer(kb, "When do tokens expire?")]
    assert isinstance(events[-1], Done) and "90 days" in events[-1].text, events
    assert callable(answering.answer)

asyncio.run(main())
"""
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr


def test_the_entry_points_load() -> None:
    (plugin,) = (ep for ep in entry_points(group="mkdocs.plugins") if ep.name == "kb-qa")
    assert plugin.value == "kb_qa_mkdocs.plugin:KbQaPlugin"
    from kb_qa_mkdocs.plugin import KbQaPlugin

    assert plugin.load() is KbQaPlugin
    (command,) = (ep for ep in entry_points(group="console_scripts") if ep.name == "kb-qa")
    assert command.value == "kb_qa.cli:main"
    assert callable(command.load())


def test_the_snippet_guard_keeps_the_name_old_indexes_were_fingerprinted_with() -> None:
    assert snippet_guard.NAME == "kb_qa.snippet_guard"
    compat = importlib.import_module(snippet_guard.NAME)
    assert compat.makeExtension is snippet_guard.makeExtension
    html = markdown.Markdown(
        extensions=["pymdownx.snippets", snippet_guard.NAME],
        extension_configs={snippet_guard.NAME: {"root": str(ROOT)}},
    ).convert("# Title")
    assert "Title" in html


def test_every_package_is_installed_by_a_non_editable_install() -> None:
    listed = set(
        tomlkit.parse((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    packages = {_module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert packages - listed == set()


def test_every_installed_package_is_named_for_kb_qa() -> None:
    """The wheel installed a top-level ``mkdocs_plugin``: another distribution shipping one
    would overwrite its files in site-packages (and a distro's package would conflict)."""
    setuptools = tomlkit.parse((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    tops = {str(name).split(".")[0] for name in setuptools["packages"]}
    assert all(top == "kb_qa" or top.startswith("kb_qa_") for top in tops), tops


def test_the_version_is_written_once_for_all_to_read() -> None:
    """``kb-qa --version``, the MCP server's name and the wheel's metadata must agree: the
    version is written twice (pyproject.toml, kb_qa.__version__), so a release that bumps
    one alone fails here."""
    project = tomlkit.parse((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == kb_qa.__version__


def test_every_file_kb_qa_ships_from_others_has_its_licence_shipped() -> None:
    """The wheel carries LICENSE, NOTICE and the licences NOTICE names (license-files), and
    NOTICE names every file of kb_qa/data that kb-qa did not write (the MiniLM weights and
    vocabulary, Apache-2.0 §4; Chart.js, MIT)."""
    project = tomlkit.parse((ROOT / "pyproject.toml").read_text())["project"]
    shipped = list(project["license-files"])
    assert {"LICENSE", "NOTICE"} <= set(shipped)
    assert all((ROOT / name).is_file() for name in shipped)
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    others = [p for p in (PACKAGE / "data").iterdir() if p.suffix in (".onnx", ".js")]
    assert others and all(f"kb_qa/data/{p.name}" in notice for p in others)
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "folder", sorted(name for name in FLOORS if name), ids=lambda name: f"kb_qa/{name}/"
)
def test_each_stage_says_what_it_takes_and_gives(folder: str) -> None:
    init = PACKAGE / folder / "__init__.py"
    assert init.is_file()
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert doc and len(doc.split()) >= 20, f"kb_qa/{folder}/__init__.py needs a docstring"


def test_every_package_folder_is_a_stage() -> None:
    folders = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert folders == {name for name in FLOORS if name}


def _sources() -> list[Path]:
    found = [
        *PACKAGE.rglob("*.py"),
        *(ROOT / "mkdocs_plugin").rglob("*.py"),
        *(ROOT / "bench").glob("*.py"),
        *(ROOT / "training").glob("*.py"),
        *(ROOT / "scripts").glob("*.py"),
        *(ROOT / "widget" / "src").rglob("*.js"),
    ]
    return sorted(found)


def test_every_module_is_at_most_400_lines() -> None:
    long = {}
    for path in _sources():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            long[str(path.relative_to(ROOT))] = lines
    assert long == {}, (
        f"modules stay at most {MAX_LINES} lines: split these into smaller modules of one "
        "idea each (docs/pages/architecture.md, CONTRIBUTING.md)"
    )


def test_imports_only_point_down_the_floors() -> None:
    upward = []
    for module, targets in GRAPH.items():
        if module == FACADE:
            continue
        stage = _stage(module)
        for target in targets:
            other = _stage(target)
            if other != stage and FLOORS[other] >= FLOORS[stage]:
                upward.append(f"{module} ({stage or 'top'}) imports {target} ({other or 'top'})")
    assert sorted(upward) == [], (
        "imports only point down the floors of docs/pages/architecture.md#import-floors: move "
        "what both need down a floor, or pass it in as an argument"
    )


def test_no_import_cycles() -> None:
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(GRAPH[module]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state and module != FACADE:
            visit(module)
    assert cycles == []


def test_the_layout_check_sees_every_stage() -> None:
    # The checks above would pass on an empty graph: make sure they read real imports.
    assert "kb_qa.kb.knowledge_base" in GRAPH["kb_qa.serve.serving"]
    assert _stage("kb_qa.serve.app") == "serve"
    assert _stage("kb_qa.settings") == ""
    assert _stage("kb_qa.snippet_guard") == "ingest"
    assert _stage("kb_qa.cli") == "cli"


def test_the_code_runs_on_the_oldest_python_it_claims() -> None:
    """The tests run on one Python; vermin reads the code for the standard library it uses
    against the oldest ``requires-python`` names (``contextlib.chdir`` is 3.11's: rendering a
    MkDocs site failed on 3.10 with it, when 3.10 was claimed; stop-words needs 3.11 too)."""
    claimed = tomlkit.parse((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    oldest = str(claimed).removeprefix(">=")
    run = subprocess.run(
        [str(Path(sys.executable).parent / "vermin"), f"-t={oldest}-", "--violations", "--no-tips",
         "--eval-annotations", "kb_qa", "mkdocs_plugin"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_architecture_page_names_every_module() -> None:
    """docs/pages/architecture.md's table of stage folders names each module of each folder
    (twelve were added without it)."""
    page = (ROOT / "docs" / "pages" / "architecture.md").read_text(encoding="utf-8")
    rows = {}
    for line in page.splitlines():
        found = re.match(r"\| `kb_qa/(\w*)/?`[^|]*\|([^|]*)\|", line)
        if found:
            rows[found.group(1)] = set(re.findall(r"`(\w+)`", found.group(2)))
    assert set(rows) == set(FLOORS), sorted(rows)
    missing = sorted(
        module
        for module, path in MODULES.items()
        if path.stem not in ("__init__", "__main__")
        and module not in PLACED
        and path.stem not in rows[_stage(module)]
    )
    assert not missing, f"add these to docs/pages/architecture.md's table: {missing}"


def test_a_widget_package_built_without_its_bundle_says_how_to_build_it(tmp_path: Path) -> None:
    """A wheel built from an sdist whose kb-qa.js was removed builds without a warning
    (package data matching nothing is skipped), then `mkdocs build` and `kb-qa init` ended
    in a FileNotFoundError traceback naming a file in site-packages."""
    import shutil

    package = tmp_path / "kb_qa_widget"
    package.mkdir()
    shutil.copy(ROOT / "widget" / "__init__.py", package / "__init__.py")
    (package / "kb-qa.css").write_text("", encoding="utf-8")
    code = "import sys; sys.path.insert(0, '.'); import kb_qa_widget; print(kb_qa_widget.__file__)"
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert run.returncode != 0, run.stdout
    assert "missing kb-qa.js" in run.stderr and "npm run build" in run.stderr, run.stderr
