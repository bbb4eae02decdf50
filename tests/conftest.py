"""Shared fixtures: vaults written into tmp_path, real KnowledgeBases, the real CLI.

Nothing here fakes our own code: indexes are real embedded Chroma databases in tmp_path,
and the CLI runs as a subprocess. The deterministic ``hash`` embedder keeps tests fast.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from llm_server import LLMServer
from watching import watched  # noqa: F401 - the watcher tests' fixture
from widget_stack import browser, new_page, stack  # noqa: F401 - the widget tests' fixtures

from kb_qa.kb.knowledge_base import KnowledgeBase

Files = Mapping[str, str | bytes]


def write_files(root: Path, files: Files) -> Path:
    """Write ``{relative path: text or bytes}`` under ``root`` (folders created)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            # newline="" so "\r\n" in a test string reaches the file unchanged
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(content)
    return root


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for a CLI subprocess: ours minus any KBQA_* a developer has set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBQA_")}
    env["KBQA_EMBED_MODEL"] = "hash"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


@pytest.fixture(autouse=True)
def _no_kbqa_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A KBQA_* variable in the developer's shell would silently change what tests measure.
    for name in list(os.environ):
        if name.startswith("KBQA_"):
            monkeypatch.delenv(name)


@pytest.fixture(name="cli_env", scope="session")
def cli_env_fixture() -> Callable[..., dict[str, str]]:
    """:func:`cli_env`, for tests that start the CLI themselves (e.g. to interrupt it)."""
    return cli_env


@pytest.fixture(name="write_files", scope="session")
def write_files_fixture() -> Callable[[Path, Files], Path]:
    """:func:`write_files`, for fixtures wider than one test."""
    return write_files


@pytest.fixture
def make_vault(tmp_path: Path) -> Callable[..., Path]:
    """``make_vault({"a.md": "# A"}, name="vault")`` -> the vault folder in tmp_path."""

    def make(files: Files, name: str = "vault") -> Path:
        return write_files(tmp_path / name, files)

    return make


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[Callable[..., KnowledgeBase]]:
    """``kb(vault, **settings)`` -> KnowledgeBase, hash embedder, index in tmp_path/idx."""
    opened: list[KnowledgeBase] = []

    def factory(vault: Path, **overrides: object) -> KnowledgeBase:
        overrides.setdefault("embed_model", "hash")
        overrides.setdefault("index_dir", tmp_path / "idx")
        instance = KnowledgeBase(vault, **overrides)
        opened.append(instance)
        return instance

    yield factory
    for instance in opened:
        instance.close()


@pytest.fixture(scope="session")
def run_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run_cli("index", str(vault), env={"KBQA_X": "1"})`` runs the real ``kb-qa`` command.

    ``env`` adds to :func:`cli_env` (which selects the hash embedder).
    """

    def run(
        *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kb_qa.cli", *args],
            env=cli_env(**(env or {})),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    return run


@pytest.fixture(scope="session")
def llm_server() -> Iterator[LLMServer]:
    """The OpenAI-compatible test LLM server (real HTTP on loopback), shared by a session."""
    with LLMServer() as server:
        yield server


@pytest.fixture
def llm(llm_server: LLMServer) -> LLMServer:
    """The test LLM server with its script and recorded requests cleared."""
    llm_server.reset()
    return llm_server


@pytest.fixture
def tiny_disk() -> Iterator[Path]:
    """A 24 MB tmpfs (needs root and mount rights: skipped elsewhere).

    Mounted outside pytest's own temporary folders, which pytest deletes in later runs:
    a mount left there by a killed run would make that cleanup fail.
    """
    mount = Path(tempfile.mkdtemp(prefix="kbqa-tiny-disk-"))
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        mount.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        shutil.rmtree(mount, ignore_errors=True)
