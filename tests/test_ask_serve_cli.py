"""``kb-qa ask`` and ``kb-qa serve`` as real subprocesses, over a copy of sample_site."""

from __future__ import annotations

import os
import pty
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from api_helpers import indexed_sample, serve_process
from llm_server import LLMServer, Reply

from kb_qa import __version__
from kb_qa.answer.wording import PHRASES
from kb_qa.kb.knowledge_base import KnowledgeBase

QUESTION = "How many times is a failing job attempted by default?"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    kb = indexed_sample(tmp_path_factory.mktemp("cli"))  # index_dir is <root>/index
    kb.close()
    return Path(kb.settings.vault)


Env = Callable[..., dict[str, str]]


def kbqa(cli_env: Env, vault: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    index = str(vault.parent / "index")
    return subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", *args, "--vault", str(vault), "--index-dir", index],
        env=cli_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_ask_extractive_prints_answer_then_citations(vault: Path, cli_env: Env) -> None:
    result = kbqa(cli_env, vault, "ask", QUESTION)
    assert result.returncode == 0, result.stderr
    answer, _, sources = result.stdout.partition("\n\n[1] ")
    assert answer.startswith("No language model is configured")
    assert "five times" in answer
    assert "https://lumen.example.com/guides/retries/#" in sources
    assert "\x1b" not in result.stdout  # not a terminal: no escape sequences
    assert "Reading" in result.stderr and "extractive answer" in result.stderr


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("Combien de fois une tâche est-elle relancée par défaut ?", "fr"),
        ("كم مرة يعاد تشغيل المهمة؟", "ar"),
    ],
)
def test_ask_says_its_own_sentences_in_the_questions_language(
    vault: Path, cli_env: Env, question: str, lang: str
) -> None:
    # It said "No language model is configured" and "See also" to a French question in a
    # terminal, where the widget on the same site says them in French.
    result = kbqa(cli_env, vault, "ask", question)
    assert result.returncode == 0, result.stderr
    said = (PHRASES[lang]["label"], PHRASES[lang]["not_covered"])
    assert result.stdout.startswith(said), result.stdout
    assert "See also" not in result.stdout


def test_ask_with_a_model_but_without_the_llm_extra_says_what_to_install(
    vault: Path, cli_env: Env
) -> None:
    # An install without kb-qa[llm]: `import litellm` fails in the command's process.
    blocked = (
        "import runpy, sys; sys.modules['litellm'] = None; "
        "runpy.run_module('kb_qa.cli', run_name='__main__', alter_sys=True)"
    )
    where = ["--vault", str(vault), "--index-dir", str(vault.parent / "index")]
    model = ["--model", "openai/test", "--api-base", "http://127.0.0.1:9"]
    result = subprocess.run(
        [sys.executable, "-c", blocked, "ask", QUESTION, *where, *model],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert "The model openai/test (KBQA_MODEL or --model) needs litellm" in result.stderr
    assert result.stderr.count("pip install 'kb-qa[llm]'") == 1  # said once, not twice
    assert "Reading" not in result.stderr  # before any search
    assert "Traceback" not in result.stderr


def test_ask_with_a_provider_model_and_no_api_key_says_to_set_one(
    vault: Path, cli_env: Env
) -> None:
    """openai's client refuses to start without a key (before any request: nothing leaves
    the machine); litellm reports that as an HTTP 500, which kb-qa took for an outage of the
    provider: "Try again shortly", after a retry."""
    env = {k: v for k, v in cli_env().items() if not k.startswith("OPENAI_")}
    where = ["--vault", str(vault), "--index-dir", str(vault.parent / "index")]
    result = subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", "ask", QUESTION, *where, "--model", "gpt-4o-mini"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert "needs an API key" in result.stderr and "OPENAI_API_KEY" in result.stderr
    assert "retrying" not in result.stderr and "Try again" not in result.stderr


def test_ask_with_a_model_streams_osc8_links_to_a_terminal(vault: Path, cli_env: Env) -> None:
    with LLMServer() as llm:
        llm.script(Reply(text="Five attempts [7].\x1b]0;pwned\x07 Done [2].", chunk_size=3))
        main, secondary = pty.openpty()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kb_qa.cli",
                "ask",
                QUESTION,
                "--vault",
                str(vault),
                "--index-dir",
                str(vault.parent / "index"),
                "--model",
                "openai/test",
                "--api-base",
                llm.url,
            ],
            env=cli_env(TERM="xterm"),
            stdout=secondary,
            stderr=subprocess.PIPE,
        )
        os.close(secondary)
        out = _read_terminal(main)
        proc.wait(60)
        os.close(main)
    text = out.decode().replace("\r\n", "\n")
    assert proc.returncode == 0, proc.stderr.read().decode() if proc.stderr else ""
    # The model's escape sequence lost its ESC and BEL: harmless text, not a terminal command.
    assert text.startswith("Five attempts [1].]0;pwned Done [2].\n")
    assert "\x1b]0;" not in text and "\x07" not in text
    links = text.split("\n\n", 1)[1]
    assert links.startswith("[1] ")
    # OSC 8: ESC ] 8 ;; URL ESC \ text ESC ] 8 ;; ESC \
    assert "\x1b]8;;https://lumen.example.com/" in links
    assert links.count("\x1b]8;;\x1b\\") == 2


def _read_terminal(main: int) -> bytes:
    """Everything a child wrote to the terminal whose main side is ``main``, until it closed."""
    out = b""
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:  # the child closed the terminal
            return out
        if not data:
            return out
        out += data


def _on_a_terminal(vault: Path, env: dict[str, str]) -> str:
    """What `kb-qa ask` shows on a terminal: its stdout and stderr both."""
    main, secondary = pty.openpty()
    where = ["--vault", str(vault), "--index-dir", str(vault.parent / "index")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kb_qa.cli", "ask", QUESTION, *where],
        env=env, stdout=secondary, stderr=secondary,
    )  # fmt: skip
    os.close(secondary)
    out = _read_terminal(main)
    assert proc.wait(60) == 0
    os.close(main)
    return out.decode()


@pytest.mark.parametrize("env", [{"TERM": "dumb"}, {"TERM": "xterm", "NO_COLOR": "1"}])
def test_ask_on_a_terminal_without_colour_prints_none(
    vault: Path, cli_env: Env, env: dict[str, str]
) -> None:
    """A dumb terminal (TERM=dumb: Emacs' shell, some CI logs) showed every status line
    wrapped in ESC[2m ... ESC[0m; links became plain URLs there already."""
    base = {k: v for k, v in cli_env().items() if k != "NO_COLOR"}
    shown = _on_a_terminal(vault, {**base, **env})
    assert "Reading" in shown and "extractive answer" in shown
    assert "\x1b[" not in shown
    assert ("\x1b]8;;" in shown) == (env["TERM"] != "dumb")  # links, where a terminal has them
    assert "\x1b[2m" in _on_a_terminal(vault, {**base, "TERM": "xterm"})


def test_ask_reports_llm_errors_without_a_traceback(vault: Path, cli_env: Env) -> None:
    with LLMServer() as llm:
        llm.script(Reply(status=500, text="boom"), Reply(status=500, text="boom"))
        result = kbqa(
            cli_env, vault, "ask", QUESTION, KBQA_MODEL="openai/test", KBQA_API_BASE=llm.url
        )
    assert result.returncode == 1
    # The operator at the terminal sees the provider's own words too.
    assert "kb-qa: The language model service failed (HTTP 500). Try again shortly. (boom)" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr


def test_ask_broken_off_says_so_once_and_lists_what_the_part_shown_cites(
    vault: Path, cli_env: Env
) -> None:
    """A warning was glued to the partial text, the error was printed twice, and the
    partial answer's [1] had no source listed."""
    with LLMServer() as llm:
        llm.script(Reply(text="Retries happen five times [1]. And", chunk_size=8, close_after=4))
        result = kbqa(
            cli_env, vault, "ask", QUESTION, KBQA_MODEL="openai/test", KBQA_API_BASE=llm.url
        )
    assert result.returncode == 1
    assert result.stdout.startswith("Retries happen five times [1].")
    assert "\n[1] " in result.stdout  # the source of the part shown
    assert result.stderr.count("broke off") == 1 and "WARNING" not in result.stderr


UNCITED = (
    "Failing jobs are retried [1]. With these defaults a job that always fails is attempted "
    "five times. Good luck!"
)


def test_ask_shows_the_citation_given_to_an_uncited_sentence(vault: Path, cli_env: Env) -> None:
    """A model's sentence drawn from an excerpt but left uncited is cited once the reply
    has ended; `kb-qa ask` printed the reply as it streamed, so the citation was in the
    sources listed and nowhere in the text. Piped, the text is the finished one; on a
    terminal, which showed it streaming, a line names the sentence and its citation."""
    with LLMServer(Reply(text=UNCITED, chunk_size=6)) as llm:
        env = {"KBQA_MODEL": "openai/test", "KBQA_API_BASE": llm.url}
        piped = kbqa(cli_env, vault, "ask", QUESTION, **env)
        shown = _on_a_terminal(vault, {**cli_env(), "TERM": "dumb", **env})
    assert piped.returncode == 0, piped.stderr
    added = re.search(r"attempted five times (\[\d\])\. Good luck!", piped.stdout)
    assert added, piped.stdout  # cited before its full stop
    assert f"\n{added[1]} " in piped.stdout and "cited after" not in piped.stdout
    assert "five times. Good luck!" in shown  # as it streamed ...
    sentence = "With these defaults a job that always fails is attempted five times"
    assert f"(cited after the reply: {sentence} {added[1]})" in shown  # ... and what changed


@pytest.fixture
def served(vault: Path, cli_env: Env) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    yield from _serve(vault, cli_env)


@pytest.fixture
def served_watching(vault: Path, cli_env: Env) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    yield from _serve(vault, cli_env, "--watch")


def _serve(vault: Path, cli_env: Env, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    yield from serve_process(
        vault, cli_env(KBQA_RATE_LIMIT="0"), "--index-dir", str(vault.parent / "index"), *extra
    )


def test_serve_indexes_then_answers_and_stops_cleanly(
    served: tuple[str, subprocess.Popen[str]],
) -> None:
    url, proc = served
    response = httpx.post(url + "/api/ask", json={"question": QUESTION, "stream": False})
    assert response.status_code == 200
    assert response.json()["mode"] == "extractive"
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=20)
    # uvicorn shuts down gracefully, then raises the signal again: a stop asked for and
    # completed exits 0 (as Ctrl-C does), not 143 as if killed (the docs promise exit 0).
    assert proc.returncode == 0
    assert "Shutting down" in output and "Finished server process" in output
    assert "Indexed 18 files" in output
    assert "Uvicorn running on http://127.0.0.1:" in output
    # No access log by default (access_log): no client address, no request line.
    assert '"POST /api/ask HTTP/1.1"' not in output
    assert "\x1b[" not in output


def test_serve_watch_answers_from_edits_and_reports_freshness(
    served_watching: tuple[str, subprocess.Popen[str]], vault: Path
) -> None:
    url, proc = served_watching
    assert httpx.get(url + "/api/health").json()["freshness"]["error"] == ""
    page = vault / "docs" / "faq.md"
    tmp = page.with_name(".faq.md.tmp")
    tmp.write_text(page.read_text(encoding="utf-8") + "\n\nThe mascot is a narwhal.\n")
    os.replace(tmp, page)  # how editors save
    deadline = time.monotonic() + 20
    while True:
        hits = httpx.get(url + "/api/search", params={"q": "mascot narwhal", "k": 1}).json()
        if hits["hits"] and "narwhal" in hits["hits"][0]["text"]:
            break
        assert time.monotonic() < deadline, "the edit never became searchable"
        time.sleep(0.1)
    fresh = httpx.get(url + "/api/health").json()["freshness"]
    assert fresh["last_change_seen"] <= fresh["last_change_indexed"] + 5
    assert fresh["queue"] == 0 and not fresh["indexing"]
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=20)
    assert "watching" in output and "re-indexed 1 changed file(s)" in output


def test_serve_on_a_taken_port_says_so_before_indexing(vault: Path, cli_env: Env) -> None:
    """The port was found taken only after the whole vault was indexed and embedded (minutes
    on a large one), in uvicorn's words and exit code 3."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        index = vault.parent / "fresh-index"
        result = subprocess.run(
            [sys.executable, "-m", "kb_qa.cli", "serve", str(vault), "--port", str(port),
             "--index-dir", str(index)],
            env=cli_env(), capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert result.returncode == 1
    assert f"Cannot serve on 127.0.0.1:{port}: another process listens there" in result.stderr
    assert not index.exists()  # nothing was indexed


@pytest.mark.parametrize("module", ["kb_qa.cli", "kb_qa"])
def test_version_is_printed(cli_env: Env, module: str) -> None:
    """`python -m kb_qa`, what a user types without the console script on PATH, said
    "No module named kb_qa.__main__"."""
    result = subprocess.run(
        [sys.executable, "-m", module, "--version"],
        env=cli_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (result.returncode, result.stdout.strip()) == (0, f"kb-qa {__version__}")


def test_search_while_another_process_indexes_says_so(
    vault: Path, cli_env: Env, tmp_path: Path
) -> None:
    """During a first index run `kb-qa search` said "the index is empty. Run `kb-qa
    index`", then gave the part written so far as if it were all."""
    with KnowledgeBase(vault, embed_model="hash", index_dir=vault.parent / "index") as other:
        with other.store.writer_lock():
            partial = kbqa(cli_env, vault, "search", "retries")
    assert partial.returncode == 0 and partial.stdout
    assert "another kb-qa process is updating the index" in partial.stderr
    fresh = tmp_path / "fresh-index"
    with KnowledgeBase(vault, embed_model="hash", index_dir=fresh) as first:
        with first.store.writer_lock():
            building = subprocess.run(
                [sys.executable, "-m", "kb_qa.cli", "search", "retries", "--vault", str(vault),
                 "--index-dir", str(fresh)],
                env=cli_env(), capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
    assert building.returncode == 75  # try again later
    assert "another kb-qa process is building the index right now" in building.stderr


@pytest.mark.parametrize("host", ["10.255.255.1", "no-such-host.invalid"])
def test_serve_on_an_address_this_machine_lacks_says_so(
    vault: Path, cli_env: Env, host: str
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", "serve", str(vault), "--host", host,
         "--port", "8999", "--index-dir", str(vault.parent / "index")],
        env=cli_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert f"Cannot serve on {host}:8999" in result.stderr and "KBQA_HOST" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_folder_without_markdown_is_named_as_the_problem(tmp_path: Path, cli_env: Env) -> None:
    """`kb-qa index` on the wrong folder printed "Indexed 0 files" and exited 0, and `ask`
    then said to run the index that had just run."""
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "notes.txt").write_text("Not Markdown.\n", encoding="utf-8")
    index = str(folder.parent / "index")  # where kbqa() keeps it
    indexed = subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", "index", str(folder), "--index-dir", index],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert indexed.returncode == 1
    assert f"no Markdown files (.md) were found in {folder}" in indexed.stderr
    # The empty index it made is not left behind (a web root of hand-written HTML pages
    # kept a `.kb-qa/` folder), there or in the folder by default.
    assert not Path(index).exists()
    by_default = subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", "index", str(folder)],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert by_default.returncode == 1 and sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    asked = kbqa(cli_env, folder, "ask", "hello?")
    assert asked.returncode == 1
    assert "no Markdown files (.md) were found" in asked.stderr
    assert "Run `kb-qa index`" not in asked.stderr
    # A server on it goes on (the Markdown may come), and its log says why it has nothing.
    log = folder.parent / "serve.log"
    with log.open("w") as output:
        served = serve_process(folder, cli_env(), output=output)
        next(served)
        served.close()
    said = log.read_text(encoding="utf-8")
    assert f"Nothing to answer from yet: no Markdown files (.md) were found in {folder}" in said
