"""Every benchmark and script answers ``--help`` with its usage and does nothing else: six
had no options parser, so ``python bench/engine.py --help`` ran the whole benchmark (and
deleted its index folder) and ``scripts/docs_screenshot.py --help`` asked "--help" and
overwrote the README's screenshot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNNABLE = sorted(
    p
    for folder in ("bench", "scripts")
    for p in (ROOT / folder).glob("*.py")
    if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8")
)


def test_every_runnable_script_is_found() -> None:
    names = {p.name for p in RUNNABLE}
    assert {"engine.py", "quality.py", "docs_screenshot.py"} <= names, names


def test_help_prints_usage_and_runs_nothing(tmp_path: Path) -> None:
    # All at once: each starts a Python that imports kb_qa (a second or two apiece).
    env = {"KBQA_BENCH_DIR": str(tmp_path / "bench"), "PATH": "/usr/bin:/bin"}
    running = {
        p: subprocess.Popen(
            [sys.executable, str(p), "--help"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in RUNNABLE
    }
    failed = []
    for path, process in running.items():
        try:
            out, err = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            failed.append(f"{path.name}: still running after 120 s")
            continue
        if process.returncode != 0 or not out.startswith("usage:"):
            failed.append(f"{path.name}: rc {process.returncode}: {(out + err)[-300:]}")
    assert not failed, "\n".join(failed)
    assert not (tmp_path / "bench").exists(), "a --help wrote benchmark files"


@pytest.mark.parametrize("name", ["docs_screenshot.py"])
def test_help_leaves_the_repository_alone(name: str) -> None:
    shot = ROOT / "docs" / "pages" / "assets" / "widget-answer.png"
    before = shot.stat().st_mtime_ns
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / name), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and result.stdout.startswith("usage:"), result.stderr
    assert shot.stat().st_mtime_ns == before
