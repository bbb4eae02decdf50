"""The real ``kb-qa`` command in a subprocess: summaries, JSON output, exit codes, eval metrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa import Settings
from kb_qa.index.store import Store

CLI = Callable[..., subprocess.CompletedProcess[str]]

# One chunk per page. Pages sort a..e, so when the vector side is switched off
# (KBQA_VECTOR_WEIGHT=0) results without a keyword match come in path order.
VAULT = {
    "a.md": "# Apple\n\nThe orchard grows crisp fruit for the harvest.\n",
    "b.md": "# Banana\n\nHarvest, harvest, harvest: bananas ripen in tropical heat.\n",
    "c.md": "# Cherry\n\nCherries are small red stone fruit.\n",
    "d.md": "# Date\n\nDates grow on palms in deserts.\n",
    "e.md": "# Elder\n\nElderflowers make a sweet cordial.\n",
    "z-latin1.md": "# Zeste\n\nCrème brûlée au citron.\n".encode("latin-1"),
    "bin.md": b"\x00\x01binary\x00" * 20,
}


@pytest.fixture(scope="module")
def indexed(
    tmp_path_factory: pytest.TempPathFactory,
    write_files: Callable[..., Path],
    run_cli: CLI,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    vault = write_files(tmp_path_factory.mktemp("cli") / "vault", VAULT)
    return vault, run_cli("index", str(vault))


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout


def test_index_prints_a_summary(indexed: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    vault, result = indexed
    assert result.returncode == 0, result.stderr
    no_traceback(result)
    out = result.stdout
    assert "Indexed 6 files, 6 chunks" in out
    assert "6 chunks embedded, 0 reused, 0 deleted" in out
    # A Latin-1 note holds no UTF-8: read as Windows-1252, saying so
    assert "1 warning(s):" in out and "  z-latin1.md: not UTF-8, read as Windows-1252" in out
    assert "Skipped 1 file(s):" in out and "  bin.md: binary file" in out
    assert (vault / ".kb-qa" / "manifest.sqlite3").exists()


def test_search_json(indexed: tuple[Path, subprocess.CompletedProcess[str]], run_cli: CLI) -> None:
    vault, _ = indexed
    result = run_cli("search", "sweet cordial", "--vault", str(vault), "--json", "--k", "3")
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert isinstance(hits, list) and len(hits) == 3
    top = hits[0]
    assert {"path", "anchor", "url", "heading_path", "score", "text", "line_start"} <= set(top)
    assert (top["path"], top["anchor"]) == ("e.md", "elder")
    # A plain vault (no mkdocs.yml) links to the file and line.
    assert top["url"] == f"{(vault / 'e.md').resolve()}:1"
    assert top["heading_path"] == ["Elder"]
    assert top["rank"] == 1 and isinstance(top["score"], float) and top["score"] > 0
    assert top["text"] == "# Elder\n\nElderflowers make a sweet cordial."
    assert [h["rank"] for h in hits] == [1, 2, 3]
    assert hits[0]["score"] >= hits[1]["score"] >= hits[2]["score"]


def test_search_text_output(
    indexed: tuple[Path, subprocess.CompletedProcess[str]], run_cli: CLI
) -> None:
    vault, _ = indexed
    result = run_cli(
        "search", "palms in deserts", "--vault", str(vault), "--k", "2", "--include", "d.md"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == " 1. Date"
    assert f"{(vault / 'd.md').resolve()}:1" in lines[1] and "(d.md:1, score" in lines[1]
    assert "Dates grow on palms" in lines[2]
    assert " 2." not in result.stdout  # --include kept only d.md


def test_a_path_filter_that_matches_no_page_says_how_paths_are_written(
    indexed: tuple[Path, subprocess.CompletedProcess[str]], run_cli: CLI
) -> None:
    vault, _ = indexed
    for command in ("search", "ask"):  # refused: "No results" read as docs that are silent
        result = run_cli(command, "harvest", "--vault", str(vault), "--include", "fruit/*")
        assert result.returncode == 1 and result.stdout == ""
        assert "kb-qa: include ['fruit/*'] matches no page" in result.stderr
        assert "such as a.md" in result.stderr
        no_traceback(result)
    # A filter that leaves pages, with no match among them, says nothing more.
    result = run_cli("search", "xylophone", "--vault", str(vault), "--include", "a.md")
    assert "matches no page" not in result.stderr


def test_search_on_empty_index_exits_1(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n\ntext\n"})
    for command in (["search", "anything"], ["ask", "anything"]):
        result = run_cli(*command, "--vault", str(vault))
        assert result.returncode == 1
        assert "index is empty" in result.stderr and "kb-qa index" in result.stderr
        no_traceback(result)
    assert not (vault / ".kb-qa").exists()  # a command that reads writes nothing


def test_a_rebuild_stopped_half_way_is_named_and_the_next_run_finishes_it(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    vault = write_files(tmp_path / "vault", {"a.md": "# Apple\n\nApples grow on trees.\n"})
    assert run_cli("index", str(vault)).returncode == 0
    # What a rebuild (an upgrade, chunk_chars changed) does first, and a Ctrl+C leaves.
    Store(Settings.from_env(vault)).reset(keep_vectors=True)
    result = run_cli("search", "apples", "--vault", str(vault))
    assert result.returncode == 1
    assert "stopped before it finished" in result.stderr and "kb-qa index" in result.stderr
    no_traceback(result)
    assert run_cli("index", str(vault)).returncode == 0
    result = run_cli("search", "apples", "--vault", str(vault))
    assert result.returncode == 0 and "Apple" in result.stdout


def test_eval_metrics_match_hand_computed_ranks(
    indexed: tuple[Path, subprocess.CompletedProcess[str]], run_cli: CLI, tmp_path: Path
) -> None:
    vault, _ = indexed
    questions = [
        # b.md says "harvest" three times, a.md once: BM25 puts a.md second.
        ({"question": "harvest", "gold": [{"path": "a.md", "anchor": "apple"}]}, 2),
        ({"question": "cordial", "gold": [{"path": "e.md", "anchor": "elder"}]}, 1),
        # No keyword matches: every page scores 0 and they come in path order a, b, c, d.
        ({"question": "xylophone", "gold": [{"path": "d.md", "anchor": "date"}]}, 4),
        # Gold given by heading text instead of anchor.
        ({"question": "cherries", "gold": [{"path": "c.md", "heading": "Cherry"}]}, 1),
        # A section that does not exist is never found; its page a.md comes second.
        ({"question": "cordial?", "gold": [{"path": "a.md", "anchor": "nowhere"}]}, None),
    ]
    file = tmp_path / "questions.jsonl"
    file.write_text("\n".join(json.dumps(q) for q, _ in questions) + "\n\n", encoding="utf-8")
    env = {"KBQA_VECTOR_WEIGHT": "0", "KBQA_PAGE_WEIGHT": "0"}
    result = run_cli("eval", str(file), "--vault", str(vault), "--json", env=env)
    assert result.returncode == 0, result.stderr
    metrics = json.loads(result.stdout)
    assert set(metrics) == {
        "n",
        "R@1",
        "R@5",
        "R@10",
        "R@20",
        "R@50",
        "MRR@20",
        "page@5",
        "in-prompt",
        "warnings",  # of the questions file: gold not in the index
        "failed",  # the --min and --strict checks that failed
        "settings",  # what decides the ranking: the model, the fusion, ...
        "questions",  # each question's outcome
    }
    assert [w.split(":")[0] for w in metrics.pop("warnings")] == ["line 5"]
    assert metrics.pop("failed") == []
    assert metrics.pop("settings")["vector_weight"] == 0
    # Each question's rank, page rank and line, to see which one moved between two runs.
    outcomes = metrics.pop("questions")
    assert [(q["line"], q["rank"]) for q in outcomes] == [(1, 2), (2, 1), (3, 4), (4, 1), (5, None)]
    assert [q["page_rank"] for q in outcomes] == [2, 1, 4, 1, 2]
    assert metrics == pytest.approx(
        {
            "n": 5,
            "R@1": 2 / 5,
            "R@5": 4 / 5,
            "R@10": 4 / 5,
            "R@20": 4 / 5,
            "R@50": 4 / 5,
            "MRR@20": (1 / 2 + 1 + 1 / 4 + 1) / 5,
            "page@5": 5 / 5,  # page ranks 2, 1, 4, 1, 2
            # The whole little vault fits the prompt: every section that exists is in it.
            "in-prompt": 4 / 5,
        }
    )
    # The human-readable form lists the misses (ranks above 5 or not found).
    text = run_cli("eval", str(file), "--vault", str(vault), "--misses", env=env)
    assert text.returncode == 0, text.stderr
    assert "5 questions" in text.stdout and "R@1       0.400" in text.stdout
    assert "1 missed in the top 5:" in text.stdout
    miss = "- line 5: cordial?\n    gold a.md#nowhere (not in the top 50)\n    got 1. e.md#elder (E"
    assert miss in text.stdout
    assert "((" not in text.stdout  # no Python tuples
    # ... and so does the JSON form (--misses was dropped without a word), from a file
    # Notepad wrote (a BOM first, which was "not valid JSON").
    file.write_bytes(b"\xef\xbb\xbf" + file.read_bytes())
    both = run_cli("eval", str(file), "--vault", str(vault), "--json", "--misses", env=env)
    assert both.returncode == 0, both.stderr
    (missed,) = json.loads(both.stdout)["misses"]
    assert missed["question"] == "cordial?" and missed["rank"] is None
    assert missed["gold"] == [{"path": "a.md", "anchor": "nowhere"}]
    assert missed["line"] == 5 and missed["got"][0]["anchor"] == "elder"
    # A gate copied from the printed figure passes: MRR@20 (1/2 + 1 + 1/4) / 3 = 0.58333
    # printed 0.583 failed "--min MRR@20=0.583" with "MRR@20 0.583 < 0.583".
    three = tmp_path / "three.jsonl"
    three.write_text("\n".join(json.dumps(q) for q, _ in questions[:3]), encoding="utf-8")
    gate = ("eval", str(three), "--vault", str(vault), "--json", "--min")
    assert run_cli(*gate, "MRR@20=0.583", env=env).returncode == 0
    above = run_cli(*gate, "MRR@20=0.584", env=env)
    assert above.returncode == 3 and "eval failed: MRR@20 0.583 < 0.584" in above.stderr
    assert json.loads(above.stdout)["failed"] == ["MRR@20 0.583 < 0.584"]


def test_eval_warns_about_gold_not_in_the_index(
    indexed: tuple[Path, subprocess.CompletedProcess[str]], run_cli: CLI, tmp_path: Path
) -> None:
    vault, _ = indexed
    questions = [
        {"question": "harvest", "gold": [{"path": "a.md", "anchor": "aple"}]},
        {"question": "cherries", "gold": [{"path": "c.md", "heading": "Cheery"}]},
        {"question": "palms", "gold": [{"path": "dd.md", "anchor": "date"}]},
        {"question": "harvest?", "gold": [{"path": "a.md", "anchor": "apple"}]},
    ]
    file = tmp_path / "questions.jsonl"
    file.write_text("\n".join(json.dumps(q) for q in questions) + "\n", encoding="utf-8")
    env = {"KBQA_VECTOR_WEIGHT": "0", "KBQA_PAGE_WEIGHT": "0"}
    result = run_cli("eval", str(file), "--vault", str(vault), "--misses", env=env)
    assert result.returncode == 0, result.stderr
    no_traceback(result)
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == [
        f"kb-qa: warning: {file}: line 1: gold a.md#aple is not in the index; "
        "nearest anchor: a.md#apple",
        f"kb-qa: warning: {file}: line 2: gold heading 'Cheery' is not on c.md; "
        "nearest: 'Cherry' (#cherry)",
        f"kb-qa: warning: {file}: line 3: gold page dd.md is not in the index; "
        "nearest indexed page: d.md",
    ]
    # They still count as misses, printed as people write them, each with its question.
    out = result.stdout
    assert "3 missed in the top 5:" in out
    assert "- line 1: harvest\n    gold a.md#aple (not in the top 50)\n" in out
    assert "- line 2: cherries\n    gold c.md (heading 'Cheery') (not in the top 50)\n" in out
    assert "- line 3: palms\n    gold dd.md#date (not in the top 50)\n" in out
    # The --json form warns the same way on stderr and keeps stdout parseable; the
    # warnings are in it too, for a CI job to read.
    result = run_cli("eval", str(file), "--vault", str(vault), "--json", env=env)
    assert json.loads(result.stdout)["n"] == 4
    assert [w.split(":")[0] for w in json.loads(result.stdout)["warnings"]] == [
        "line 1",
        "line 2",
        "line 3",
    ]
    assert result.stderr.count("warning") == 3
    # --strict fails the job on them (exit 3), as a CI gate would want.
    strict = run_cli("eval", str(file), "--vault", str(vault), "--strict", env=env)
    assert strict.returncode == 3
    assert "kb-qa: eval failed: 3 gold section(s) not in the index (--strict)" in strict.stderr


def test_eval_gates_a_ci_job_on_a_metric(
    indexed: tuple[Path, subprocess.CompletedProcess[str]], run_cli: CLI, tmp_path: Path
) -> None:
    """A docs team's CI could not fail a pull request that broke retrieval: eval exited 0
    whatever the score (R@5 1.0 -> 0.867 after a heading rename)."""
    vault, _ = indexed
    file = tmp_path / "questions.jsonl"
    gold = {"question": "cordial", "gold": [{"path": "e.md", "anchor": "elder"}]}
    lost = {"question": "xylophone", "gold": [{"path": "d.md", "anchor": "date"}]}
    file.write_text(f"{json.dumps(gold)}\n{json.dumps(lost)}\n", encoding="utf-8")
    env = {"KBQA_VECTOR_WEIGHT": "0", "KBQA_PAGE_WEIGHT": "0"}
    where = [str(file), "--vault", str(vault)]
    passed = run_cli("eval", *where, "--min", "r@1=0.5", "--min", "MRR@20=0.5", env=env)
    assert passed.returncode == 0, passed.stderr
    failed = run_cli("eval", *where, "--json", "--min", "R@1=0.75", env=env)
    assert failed.returncode == 3 and json.loads(failed.stdout)["R@1"] == 0.5
    assert "kb-qa: eval failed: R@1 0.500 < 0.75" in failed.stderr
    for wrong in ("R@3=0.5", "R@5=high", "R@5=80"):  # said before anything runs
        refused = run_cli("eval", *where, "--min", wrong, env=env)
        assert refused.returncode == 1 and "write METRIC=VALUE" in refused.stderr
        no_traceback(refused)
    # A questions file that is not UTF-8 is said in a line, not a traceback.
    file.write_bytes(b'{"question": "caf\xe9", "gold": "e.md"}\n')
    latin = run_cli("eval", *where, env=env)
    assert latin.returncode == 1 and f"{file}:1: not UTF-8 text" in latin.stderr
    no_traceback(latin)


def test_missing_vault_exits_1_without_traceback(tmp_path: Path, run_cli: CLI) -> None:
    missing = tmp_path / "nope"
    result = run_cli("index", str(missing), "--index-dir", str(tmp_path / "idx"))
    assert result.returncode == 1
    assert str(missing) in result.stderr and result.stderr.count("kb-qa:") == 1
    no_traceback(result)


def test_missing_vault_default_index_dir_exits_1(tmp_path: Path, run_cli: CLI) -> None:
    missing = tmp_path / "nope"
    result = run_cli("index", str(missing))
    assert result.returncode == 1, result.stdout
    assert not missing.exists()


def test_invalid_mkdocs_yml_exits_1_without_traceback(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    vault = write_files(tmp_path / "site", {"mkdocs.yml": "nav: [oops\n", "docs/a.md": "# A\n"})
    result = run_cli("index", str(vault))
    assert result.returncode == 1
    assert "mkdocs.yml is not valid YAML" in result.stderr
    no_traceback(result)


def test_bad_setting_exits_1_naming_the_variable(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n"})
    result = run_cli("index", str(vault), env={"KBQA_CHUNK_CHARS": "lots"})
    assert result.returncode == 1
    assert "KBQA_CHUNK_CHARS" in result.stderr
    no_traceback(result)


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("KBQA_TOP_K", "150", "must be between 1 and 100"),
        ("KBQA_TOP_K", "0", "must be between 1 and 100"),
        ("KBQA_TOP_K", "abc", "must be a whole number, such as 10."),
        ("KBQA_LLM_TIMEOUT", "-5", "must be a number, more than 0"),
        ("KBQA_LLM_TIMEOUT", "inf", "must be a number, more than 0"),
        ("KBQA_LLM_TIMEOUT", "0", "must be a number, more than 0"),
        ("KBQA_LLM_TIMEOUT", "soon", "must be a number, more than 0"),
        ("KBQA_RATE_LIMIT", "nan", "must be a number, 0 or more"),
        ("KBQA_PARSE_TIMEOUT", "-1", "must be a number, 0 or more"),
        ("KBQA_RENDER", "treu", "must be true or false"),
        ("KBQA_QUESTION_LOG", "sure", "must be true or false"),
        ("KBQA_CHUNK_CHARS", "0", "must be more than 0"),
        ("KBQA_CHUNK_CHARS", "1e3", "must be a whole number"),
        ("KBQA_TOKEN_BUDGET", "0", "must be more than 0"),
        ("KBQA_EMBED_BATCH", "0", "must be more than 0"),
        ("KBQA_MAX_HEADER_BYTES", "0", "must be more than 0"),
        ("KBQA_PORT", "70000", "0 to 65535"),
        ("KBQA_LINK_STYLE", "bogus", "use one of site, file, vscode, obsidian"),
        ("KBQA_FUSION", "bogus", "use one of zscore, rrf"),
        ("KBQA_GENERATOR", "hugo", "use one of mkdocs, zensical, or leave it empty"),
        ("KBQA_CHROMA_URL", "notaurl", "use an http(s) URL"),
        ("KBQA_CORS_ORIGINS", "https://docs.example.com/guide/", "is not an origin"),
        ("KBQA_CORS_ORIGINS", "docs.example.com", "write scheme://host[:port]"),
        # A proxy's host name never matched: every reader shared one rate-limit bucket.
        ("KBQA_FORWARDED_ALLOW_IPS", "nginx-proxy", "is not an IP address or network"),
        ("KBQA_FORWARDED_ALLOW_IPS", "10.0.0.0/8,localhost", "getent hosts"),
        # A URL matched no Host header, and the refusal said to add what was added.
        ("KBQA_ALLOWED_HOSTS", "https://docs.example.com", "(docs.example.com)"),
    ],
)
def test_a_setting_out_of_range_stops_the_command_naming_it(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI, name: str, value: str, said: str
) -> None:
    """At start, not on every request with words that blame the reader or the model."""
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n"})
    result = run_cli("index", str(vault), env={name: value})
    assert result.returncode == 1
    assert name in result.stderr and said in result.stderr
    assert "literal" not in result.stderr and "float()" not in result.stderr  # Python's words
    no_traceback(result)


def test_proxies_and_host_names_in_their_forms_are_taken() -> None:
    settings = Settings().replace(
        forwarded_allow_ips="10.0.0.5, 10.0.0.0/8,fd00::/8,*",
        allowed_hosts="docs.example.com,*.example.org",
    )
    assert settings.forwarded_allow_ips == ("10.0.0.5", "10.0.0.0/8", "fd00::/8", "*")
    assert settings.allowed_hosts == ("docs.example.com", "*.example.org")


def test_an_empty_flag_variable_switches_the_flag_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """As documented: KBQA_QUESTION_LOG= must not leave the question log on."""
    monkeypatch.setenv("KBQA_QUESTION_LOG", "")
    monkeypatch.setenv("KBQA_TOP_K", "")  # an empty number keeps its default
    settings = Settings.from_env(".")
    assert settings.question_log is False and settings.top_k == Settings().top_k


def test_a_misspelt_setting_variable_is_warned_about(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n"})
    result = run_cli("index", str(vault), env={"KBQA_TOPK": "3"})
    assert result.returncode == 0
    assert "KBQA_TOPK is not a kb-qa setting" in result.stderr


@pytest.mark.parametrize("command", ["insights", "feedback"])
def test_a_report_on_a_mistyped_index_folder_says_so_and_makes_nothing(
    tmp_path: Path, run_cli: CLI, command: str
) -> None:
    typo = tmp_path / "idnex"
    result = run_cli(command, "--index-dir", str(typo))
    assert result.returncode == 1
    assert f"no index folder at {typo}" in result.stderr
    assert not typo.exists()
    no_traceback(result)


def test_a_time_limit_of_0_still_means_no_limit(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n\ntext\n"})
    zero = {"KBQA_PARSE_TIMEOUT": "0", "KBQA_HEADER_TIMEOUT": "0", "KBQA_BODY_TIMEOUT": "0"}
    result = run_cli("index", str(vault), env=zero)
    assert result.returncode == 0, result.stderr


def test_output_read_only_in_part_ends_quietly(
    tmp_path: Path, write_files: Callable[..., Path], cli_env: Callable[..., dict[str, str]]
) -> None:
    """`kb-qa search ... | head -1`: the reader stops early; no BrokenPipeError traceback."""
    vault = write_files(
        tmp_path / "vault", {f"p{n}.md": f"# Page {n}\n\nwombat text {n}\n" for n in range(30)}
    )
    env = cli_env()
    env.pop("PYTHONUNBUFFERED", None)  # as a shell runs it: output buffered until exit
    kbqa = [sys.executable, "-m", "kb_qa.cli"]
    subprocess.run([*kbqa, "index", str(vault), "--quiet"], env=env, check=True, timeout=300)
    search = subprocess.Popen(
        [*kbqa, "search", "wombat", "--vault", str(vault), "--k", "30", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert search.stdout is not None and search.stderr is not None
    search.stdout.read(10)
    search.stdout.close()  # as `head` does once it has its lines
    stderr = search.stderr.read().decode()
    assert search.wait(120) == 0, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr


def test_search_and_ask_on_an_index_an_older_kb_qa_built_say_it_needs_rebuilding(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """After an upgrade, search and ask (which only read the index) answered from chunks the
    old version made, without a word: a notes vault's %% comments, which kb-qa no longer
    indexes, were quoted until something ran `kb-qa index`. They say so in one line, still
    answer, and stop saying it once the index is rebuilt."""
    from kb_qa.kb.knowledge_base import KnowledgeBase

    vault = write_files(tmp_path / "vault", {"wifi.md": "# Wifi\n\nThe guest network is Lumen.\n"})
    assert run_cli("index", str(vault)).returncode == 0
    with KnowledgeBase(vault, embed_model="hash") as kb:  # what an older kb-qa's index holds
        kb.store.set_meta(fingerprint="0" * 40, fingerprint_parts="")
    questions = tmp_path / "q.jsonl"
    commands = (["search", "guest network"], ["ask", "guest network"], ["eval", str(questions)])
    questions.write_text(
        json.dumps({"question": "guest network", "gold": [{"path": "wifi.md", "anchor": "wifi"}]})
        + "\n",
        encoding="utf-8",
    )
    for command in commands:
        result = run_cli(*command, "--vault", str(vault))
        assert result.returncode == 0, result.stderr
        said = [line for line in result.stderr.splitlines() if "rebuil" in line]
        assert len(said) == 1, result.stderr
        assert said[0].startswith("kb-qa: the index needs rebuilding") and "kb-qa index" in said[0]
        assert "kb-qa was updated" in said[0]
    for setting in ({}, {"KBQA_CHUNK_CHARS": "600"}):  # a setting changed since: said too
        index = run_cli("index", str(vault), env=setting)
        assert index.returncode == 0 and "Rebuilt:" in index.stdout, index.stdout
        assert "Rebuilding the index: " in index.stderr  # said first, not only when done
        search = run_cli("search", "guest network", "--vault", str(vault), env=setting)
        assert search.returncode == 0 and "rebuil" not in search.stderr, search.stderr
    changed = run_cli("search", "guest network", "--vault", str(vault))
    assert "the index needs rebuilding: chunk_chars changed." in changed.stderr, changed.stderr


def test_an_index_a_newer_kb_qa_wrote_is_read_and_said_to_need_rebuilding(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """After a downgrade (or beside a colleague's newer kb-qa), search and ask died with
    "TypeError: Chunk.__init__() got an unexpected keyword argument": each chunk held a
    field the older kb-qa does not know."""
    from kb_qa.kb.knowledge_base import KnowledgeBase

    vault = write_files(tmp_path / "vault", {"wifi.md": "# Wifi\n\nThe guest network is Lumen.\n"})
    assert run_cli("index", str(vault)).returncode == 0
    with KnowledgeBase(vault, embed_model="hash") as kb:  # what a newer kb-qa's index holds
        kb.store.db.execute("UPDATE chunks SET data = json_set(data, '$.future_field', 'x')")
        kb.store.db.commit()
        parts = json.loads(kb.store.meta("fingerprint_parts")) | {"chunker": "99"}
        kb.store.set_meta(fingerprint="1" * 40, fingerprint_parts=json.dumps(parts))
    for command in (["search", "guest network"], ["ask", "guest network"]):
        result = run_cli(*command, "--vault", str(vault))
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        assert "Lumen" in result.stdout
        assert "the index needs rebuilding: this kb-qa version chunks" in result.stderr


def test_search_after_a_run_stopped_while_writing_says_results_may_be_incomplete(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """A `kb-qa index` stopped while writing left 606 of 796 files in the manifest, and
    search answered from them without a word."""
    from kb_qa.kb.knowledge_base import KnowledgeBase

    vault = write_files(tmp_path / "vault", {"wifi.md": "# Wifi\n\nThe guest network is Lumen.\n"})
    assert run_cli("index", str(vault)).returncode == 0
    with KnowledgeBase(vault, embed_model="hash") as kb:  # as a run stopped mid-write leaves it
        kb.store.set_meta(writing="1")
    result = run_cli("search", "guest network", "--vault", str(vault))
    assert result.returncode == 0 and "Lumen" in result.stdout
    assert "the last index run was stopped while writing: results may be incomplete" in (
        result.stderr
    )
    assert run_cli("index", str(vault)).returncode == 0  # finishes it
    again = run_cli("search", "guest network", "--vault", str(vault))
    assert "stopped while writing" not in again.stderr, again.stderr


def test_another_vaults_index_folder_is_named_when_searched(tmp_path: Path, run_cli: CLI) -> None:
    """`kb-qa search pancakes --vault other --index-dir vault/.kb-qa` answered from the
    first vault's notes, as files of the second, without a word."""
    vault, other = tmp_path / "vault", tmp_path / "other"
    for folder, text in ((vault, "# Pancakes\n\nButtermilk.\n"), (other, "# Other\n\nNone.\n")):
        folder.mkdir()
        (folder / "a.md").write_text(text, encoding="utf-8")
    assert run_cli("index", str(vault)).returncode == 0
    index_dir = str(vault / ".kb-qa")
    result = run_cli("search", "pancakes", "--vault", str(other), "--index-dir", index_dir)
    assert result.returncode == 0, result.stderr
    assert (
        "kb-qa: the index needs rebuilding: it holds workspace 'vault', not this vault's "
        "'other' (is it another vault's index folder?)."
    ) in result.stderr, result.stderr
    same = run_cli("search", "pancakes", "--vault", str(vault))
    assert "rebuil" not in same.stderr, same.stderr


def test_text_printed_to_a_terminal_drops_controls_and_bidi_overrides() -> None:
    """`kb-qa feedback` printed a reader's U+202E as it was: it reversed the rest of the line."""
    from kb_qa.cli.common import safe_text

    assert safe_text("\u202eexe.txt \x1b[2J\x07ok\u2069") == "exe.txt [2Jok"
    assert safe_text("שלום \u200f!\tyes\n") == "שלום \u200f!\tyes\n"  # a mark, tab, newline stay


def test_search_on_an_index_older_than_the_files_says_so(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """A pull request deleted a page and renamed a heading; `kb-qa eval` on the cached
    index still scored R@5 1.0, hits on the deleted page included, without a word."""
    vault = write_files(
        tmp_path / "vault",
        {"wifi.md": "# Wifi\n\nThe guest network is Lumen.\n", "old.md": "# Old\n\nGone soon.\n"},
    )
    assert run_cli("index", str(vault)).returncode == 0
    clean = run_cli("search", "guest network", "--vault", str(vault))
    assert clean.returncode == 0 and "changed" not in clean.stderr, clean.stderr
    (vault / "old.md").unlink()
    (vault / "wifi.md").write_text("# Wifi\n\nThe guest network is Lumen-5G.\n", encoding="utf-8")
    (vault / "new.md").write_text("# New\n\nNot indexed yet.\n", encoding="utf-8")
    stale = run_cli("search", "guest network", "--vault", str(vault))
    assert stale.returncode == 0
    assert "kb-qa: 2 indexed file(s) changed or were deleted since the index was built" in (
        stale.stderr
    )
    wifi = vault / "wifi.md"
    settled = wifi.stat().st_mtime - 100  # not written in the seconds before it is indexed
    os.utime(wifi, (settled, settled))
    assert run_cli("index", str(vault)).returncode == 0
    fresh = run_cli("search", "guest network", "--vault", str(vault))
    assert "changed" not in fresh.stderr, fresh.stderr
    # `touch` (or a checkout that writes a file back unchanged) is no edit, as the next
    # index run finds; a same-size edit is one.
    later = settled + 200
    os.utime(wifi, (later, later))
    touched = run_cli("search", "guest network", "--vault", str(vault))
    assert "changed" not in touched.stderr, touched.stderr
    wifi.write_text("# Wifi\n\nThe guest network is Lumen-6G.\n", encoding="utf-8")
    os.utime(wifi, (later + 100, later + 100))
    edited = run_cli("search", "guest network", "--vault", str(vault))
    assert "kb-qa: 1 indexed file(s) changed" in edited.stderr, edited.stderr


def test_indexing_a_sites_docs_folder_says_to_give_the_site(
    tmp_path: Path, write_files: Callable[..., Path], run_cli: CLI
) -> None:
    """`kb-qa serve site/docs` read the pages as notes without a word: citations showed the
    server's file paths instead of the site's pages."""
    site = write_files(
        tmp_path / "site",
        {"mkdocs.yml": "site_name: S\nsite_url: https://s.example.com/\n", "docs/a.md": "# A\n"},
    )
    result = run_cli("index", str(site / "docs"), env={"KBQA_INDEX_DIR": str(tmp_path / "i")})
    assert result.returncode == 0, result.stderr
    out = result.stdout + result.stderr
    assert f"is the docs folder of the site at {site} (mkdocs.yml): give kb-qa {site}" in out
    assert "  : " not in out  # a warning about no one file is not labelled with an empty path
    plain = run_cli("index", str(site), env={"KBQA_INDEX_DIR": str(tmp_path / "j")})
    assert "docs folder" not in plain.stdout + plain.stderr
