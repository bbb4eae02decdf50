"""Read-only replicas over one Chroma server, with real processes on loopback.

The topology of compose.yaml without Docker: `chroma run` on a temporary path, one writer
(`kb-qa watch VAULT --chroma-url URL`) and two replicas (`kb-qa serve --chroma-url URL
--workspace NAME`) started from empty folders.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
from api_helpers import SAMPLE_SITE, answered, indexed_sample, serve_process
from chroma_server import chroma_server
from uvicorn_thread import UvicornThread

from kb_qa.errors import ConfigError, IndexStateError
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app
from kb_qa.serve.protocol import hit_json
from kb_qa.serve.replica import Replica
from kb_qa.serve.serving import free_port
from kb_qa.settings import Settings

Env = Callable[..., dict[str, str]]
WORKSPACE = "lumen-documentation"  # sample_site's site_name, slugged
QUERIES = ("default retry backoff", "how do I schedule a job", "API token rotation", "安装")
EDIT_BOUND = 5.0  # seconds from a saved edit to both replicas serving it (issue 13)


def _copy_sample(folder: Path) -> Path:
    shutil.copytree(SAMPLE_SITE, folder, ignore=shutil.ignore_patterns(".kb-qa", "site"))
    return folder


def _search(url: str, q: str, k: int = 10) -> list[dict[str, Any]]:
    response = httpx.get(url + "/api/search", params={"q": q, "k": k}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()["hits"]


def _wait(what: str, check: Callable[[], bool], bound: float) -> float:
    """Poll ``check`` until it holds; returns the seconds it took (fails past ``bound``)."""
    started = time.monotonic()
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if check():
                return time.monotonic() - started
        assert time.monotonic() - started < bound, f"{what} did not happen within {bound} s"
        time.sleep(0.05)


def _ready(url: str) -> bool:
    return httpx.get(url + "/api/ready", timeout=5).status_code == 200


def _shows(url: str, q: str, word: str) -> bool:
    hits = _search(url, q, 1)
    return bool(hits) and word in hits[0]["text"]


@contextlib.contextmanager
def _writer(vault: Path, chroma: str, env: dict[str, str], log: IO[str]) -> Iterator[None]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kb_qa.cli", "watch", str(vault), "--chroma-url", chroma],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _save(page: Path, extra: str) -> None:
    tmp = page.with_name("." + page.name + ".tmp")
    tmp.write_text(page.read_text(encoding="utf-8") + extra, encoding="utf-8")
    os.replace(tmp, page)  # how editors save


def test_writer_and_two_replicas_on_one_chroma(tmp_path: Path, cli_env: Env) -> None:
    data, port = tmp_path / "chroma", free_port()
    # Replicas behind one address share the secret that signs their answers' ids.
    env = cli_env(KBQA_RATE_LIMIT="0", KBQA_FEEDBACK_SECRET="one-secret-for-every-replica-" * 2)
    vault = _copy_sample(tmp_path / "writer" / "vault")
    folders = [tmp_path / "replica-1", tmp_path / "replica-2"]
    for folder in folders:
        folder.mkdir()
    local = indexed_sample(tmp_path / "local")  # the same docs, indexed the ordinary way
    logs = tmp_path / "logs"
    logs.mkdir()
    with contextlib.ExitStack() as stack:
        server = chroma_server(data, port)
        chroma = stack.enter_context(server)
        log = stack.enter_context(open(logs / "writer.log", "w"))
        stack.enter_context(_writer(vault, chroma, env, log))
        replicas = []
        # One replica is told by flags, the other by environment (as compose.yaml does).
        flags = ("--chroma-url", chroma, "--workspace", WORKSPACE)
        by_env = {**env, "KBQA_CHROMA_URL": chroma, "KBQA_WORKSPACE": WORKSPACE}
        ways = [(env, flags), (by_env, ())]
        for n, (folder, (how_env, how_args)) in enumerate(zip(folders, ways), 1):
            out = stack.enter_context(open(logs / f"replica-{n}.log", "w"))
            served = serve_process(None, how_env, *how_args, cwd=folder, output=out)
            stack.callback(served.close)
            replicas.append(next(served))
        urls = [url for url, _ in replicas]
        for url in urls:
            _wait("the replica becoming ready", lambda url=url: _ready(url), 120)

        # Both replicas return what a local index of the same docs returns.
        for q in QUERIES:
            expected = [hit_json(local, n, h) for n, h in enumerate(local.search(q, 10), 1)]
            assert expected
            for url in urls:
                assert _search(url, q) == expected, (url, q)
        pages = httpx.get(urls[0] + "/api/sources").json()["pages"]
        assert pages == local.pages() == httpx.get(urls[1] + "/api/sources").json()["pages"]
        health = httpx.get(urls[0] + "/api/health").json()
        assert health["status"] == "ok" and health["replica"] is True
        assert (health["files"], health["chunks"]) == (18, 202)
        assert health["workspace"] == WORKSPACE and health["generation"]
        answer = httpx.post(
            urls[1] + "/api/ask", json={"question": "default retry backoff", "stream": False}
        ).json()
        assert answer["citations"] and answer["citations"][0]["url"].startswith(
            "https://lumen.example.com/"
        )
        assert httpx.get(urls[0] + "/").status_code == 404  # no vault to show pages from
        # Feedback: each replica keeps its own file; `kb-qa feedback` reads them together.
        # An answer one replica gave may be rated at the other (one feedback_secret).
        for n, url in enumerate(urls, 1):
            given = answered(url, f"question {n}")
            rating = {"question": f"question {n}", "answer": given["text"], "rating": "up"}
            rating["answer_id"] = given["answer_id"]
            response = httpx.post(urls[n % 2] + "/api/feedback", json=rating)
            assert response.status_code == 201, response.text
        folders_args = [arg for f in folders for arg in ("--index-dir", str(f / ".kb-qa"))]
        listed = subprocess.run(
            [sys.executable, "-m", "kb_qa.cli", "feedback", *folders_args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "2 ratings: 2 up, 0 down" in listed and "question 1" in listed

        # An edit the writer's watcher picks up reaches both replicas.
        _save(vault / "docs" / "faq.md", "\n\n## Mascot\n\nThe mascot is a narwhal.\n")
        started = time.monotonic()
        for url in urls:
            _wait(
                "the edit reaching a replica", lambda url=url: _shows(url, "mascot", "narwhal"), 60
            )
        assert time.monotonic() - started < EDIT_BOUND

        # Killing one replica leaves the other serving.
        replicas[0][1].kill()
        replicas[0][1].wait()
        assert _shows(urls[1], "mascot", "narwhal")
        assert httpx.get(urls[1] + "/api/ready").status_code == 200

        # Chroma restarted on the same path: the replica recovers without a restart.
        server.__exit__(None, None, None)
        _wait(
            "the replica noticing Chroma is down",
            lambda: httpx.get(urls[1] + "/api/health").json()["status"] == "degraded",
            30,
        )
        assert httpx.get(urls[1] + "/api/ready").status_code == 503
        with chroma_server(data, port):
            _wait("the replica recovering", lambda: _ready(urls[1]), 60)
            assert _shows(urls[1], "mascot", "narwhal")
            _save(vault / "docs" / "faq.md", "\n\nThe mascot's name is Wendell.\n")
            _wait("an edit after the restart", lambda: _shows(urls[1], "mascot", "Wendell"), 60)
    local.close()
    # Its log says when it went degraded and when it came back (probes poll health).
    said = (logs / "replica-2.log").read_text(encoding="utf-8")
    assert "health: degraded: " in said and "health: ok again" in said, said[-3000:]
    assert said.index("health: degraded: ") < said.index("health: ok again")
    # A replica writes nothing but the feedback it was sent and its question log (one SQLite
    # database, with its write-ahead files when the process was killed): given
    # feedback_secret, no answer-secret either.
    for folder in folders:
        written = {p.relative_to(folder).as_posix() for p in folder.rglob("*")}
        assert (
            {".kb-qa", ".kb-qa/feedback.sqlite3"}
            <= written
            <= {
                ".kb-qa",
                ".kb-qa/feedback.sqlite3",
                ".kb-qa/feedback.sqlite3-wal",
                ".kb-qa/feedback.sqlite3-shm",
            }
        )


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with chroma_server(tmp_path_factory.mktemp("chroma-server"), free_port()) as url:
        yield url


def _settings(chroma_url: str, workspace: str, **more: Any) -> Settings:
    return Settings(chroma_url=chroma_url, workspace=workspace, embed_model="hash", **more)


def test_a_replica_reloads_a_new_generation_and_keeps_old_snapshots(
    chroma_url: str, tmp_path: Path, write_files: Callable[..., Path]
) -> None:
    vault = write_files(tmp_path / "snap", {"a.md": "# Alpha\n\n## Install\n\nquokka tool\n"})
    with KnowledgeBase(vault, embed_model="hash", chroma_url=chroma_url) as writer:
        writer.index()
        with Replica(_settings(chroma_url, "snap", replica_poll=60)) as replica:
            replica.start()
            before = replica._view()
            assert {h.chunk.path for h in replica.search("quokka", 5)} == {"a.md"}
            write_files(vault, {"b.md": "# Beta\n\n## Backup\n\nquokka backups nightly\n"})
            writer.index()
            assert replica.reload() is True and replica.reload() is False
            assert {h.chunk.path for h in replica.search("quokka", 5)} == {"a.md", "b.md"}
            # The view a search took is never changed under it.
            assert {c.path for c in before.chunks} == {"a.md"}
            assert replica.stats()["generation"] == writer.store.meta("generation")
            with pytest.raises(IndexStateError, match="read-only replica"):
                replica.index()


def test_a_repair_publishes_a_new_generation_so_replicas_drop_what_it_deleted(
    chroma_url: str, tmp_path: Path, write_files: Callable[..., Path]
) -> None:
    """Two writers at once left a section of another vault in the workspace; the next run
    deleted it ("Repaired: Chroma holds 1 vectors of no indexed chunk") but published the
    same generation, and replicas went on quoting it."""
    vault = write_files(tmp_path / "heal", {"a.md": "# Alpha\n\n## Install\n\nquokka tool\n"})
    with KnowledgeBase(vault, embed_model="hash", chroma_url=chroma_url) as writer:
        writer.index()
        record = writer.store.chroma(lambda col: col.get(include=["metadatas", "embeddings"]))
        stray = "Only the other vault has okapis: nine per rack."
        writer.store.chroma(
            lambda col: col.add(
                ids=["stray-okapi"],
                documents=[stray],
                metadatas=[{**record["metadatas"][0], "ord": 99}],
                embeddings=[record["embeddings"][0]],
            )
        )
        with Replica(_settings(chroma_url, "heal", replica_poll=60)) as replica:
            replica.start()
            assert any(stray in c.text for c in replica._view().chunks)
            report = writer.index()
            assert report.repaired.startswith("Chroma holds 1 vectors of no indexed chunk")
            assert replica.reload() is True
            assert not any(stray in c.text for c in replica._view().chunks)


def test_a_replica_says_when_the_writer_embedded_with_another_build_of_the_model(
    chroma_url: str,
    tmp_path: Path,
    write_files: Callable[..., Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    vault = write_files(tmp_path / "builds", {"a.md": "# Alpha\n\n## Install\n\nquokka\n"})
    with KnowledgeBase(vault, embed_model="hash", chroma_url=chroma_url) as writer:
        writer.index()
        record = writer.store.vectors.record()
        assert record.embed_build == writer.store.meta("embed_build")  # published with it
        with Replica(_settings(chroma_url, "builds", replica_poll=60)) as same:
            same.start()
        assert "another build" not in caplog.text and "with build" not in caplog.text
        # A writer on an older kb-qa, whose model build was another.
        writer.store.vectors.publish(dataclasses.replace(record, embed_build="int8-old"))
        with Replica(_settings(chroma_url, "builds", replica_poll=60)) as other:
            other.start()
            assert {h.chunk.path for h in other.search("quokka", 5)} == {"a.md"}  # it serves
            assert "with build int8-old of hash" in caplog.text
            assert "run the same kb-qa version on both" in caplog.text
            # Said once, not again at each generation the writer publishes (each save).
            caplog.clear()
            newer = dataclasses.replace(record, embed_build="int8-old", generation="2")
            writer.store.vectors.publish(newer)
            assert other.reload() is True
            assert "with build" not in caplog.text


def test_a_replica_never_loads_records_while_the_writer_changes_them(
    chroma_url: str, tmp_path: Path, write_files: Callable[..., Path]
) -> None:
    """A replica started while a writer's run was half-way (or after it died there) loaded
    old and new records mixed, under the old generation, and said ok; during a rebuild,
    replicas said the writer had never indexed."""
    vault = write_files(tmp_path / "midway", {"a.md": "# Alpha\n\n## Install\n\nquokka\n"})
    with KnowledgeBase(vault, embed_model="hash", chroma_url=chroma_url) as writer:
        writer.index()
        with Replica(_settings(chroma_url, "midway", replica_poll=60)) as old:
            old.start()
            writer.store.vectors.drop()  # a rebuild's first step, before it marks the record
            assert old.reload() is False and old.problem() == ""
            writer.store.mark_writing()  # a run that stops here, half-way
            assert old.reload() is False and old.problem() == ""
            assert {h.chunk.path for h in old.search("quokka", 5)} == {"a.md"}
            with Replica(_settings(chroma_url, "midway", replica_poll=60)) as new:
                new.start()
                assert "is being written by its writer" in new.problem()
                with pytest.raises(IndexStateError, match="being written"):
                    new.search("quokka")
                write_files(vault, {"b.md": "# Beta\n\n## Backup\n\nquokka backups\n"})
                writer.index()  # the next run finishes and publishes
                assert new.reload() is True and old.reload() is True
                paths = {h.chunk.path for h in new.search("quokka", 5)}
                assert paths == {h.chunk.path for h in old.search("quokka", 5)} == {"a.md", "b.md"}
        assert writer.store.vectors.record().writing == ""


def test_a_workspace_renamed_stays_for_the_replicas_still_reading_it(
    chroma_url: str, tmp_path: Path, write_files: Callable[..., Path]
) -> None:
    """Indexing a vault under a new --workspace deleted its old workspace from the server
    while replicas served it; re-indexing the old name for them deleted the new one."""
    vault = write_files(tmp_path / "renamed", {"a.md": "# Alpha\n\n## Install\n\nquokka\n"})
    with KnowledgeBase(
        vault, embed_model="hash", chroma_url=chroma_url, workspace="staging-old"
    ) as writer:
        writer.index()
    with Replica(_settings(chroma_url, "staging-old", replica_poll=60)) as old:
        old.start()
        with KnowledgeBase(
            vault, embed_model="hash", chroma_url=chroma_url, workspace="staging-new"
        ) as writer:
            report = writer.index()
        assert "stays on the server as it was" in report.rebuilt
        assert old.reload() is False and old.problem() == ""
        with Replica(_settings(chroma_url, "staging-old")) as again:  # a replica restarted
            again.start()
            assert {h.chunk.path for h in again.search("quokka", 5)} == {"a.md"}
        with Replica(_settings(chroma_url, "staging-new")) as new:
            new.start()
            assert {h.chunk.path for h in new.search("quokka", 5)} == {"a.md"}


def test_a_replica_of_a_missing_workspace_says_what_to_do(chroma_url: str) -> None:
    with Replica(_settings(chroma_url, "nobody-indexed-this")) as replica:
        replica.start()
        assert "holds no workspace 'nobody-indexed-this'" in replica.problem()
        assert "kb-qa index VAULT" in replica.problem()
        with pytest.raises(IndexStateError, match="holds no workspace"):
            replica.search("anything")
        # Anonymous clients read it without the server's address, the command still whole.
        with UvicornThread(create_app(replica)) as api:
            problem = httpx.get(api.url + "/api/health", timeout=30).json()["problem"]
        assert "--chroma-url URL --workspace nobody-indexed-this" in problem, problem
        assert chroma_url.split("://")[-1] not in problem
    with pytest.raises(ConfigError, match="--workspace NAME"):
        Replica(Settings(chroma_url=chroma_url))


def test_two_vaults_with_one_name_are_refused_unless_told(
    chroma_url: str, tmp_path: Path, write_files: Callable[..., Path]
) -> None:
    one = write_files(tmp_path / "a" / "docs", {"x.md": "# One\n\npangolin\n"})
    two = write_files(tmp_path / "b" / "docs", {"y.md": "# Two\n\naardvark\n"})
    with KnowledgeBase(one, embed_model="hash", chroma_url=chroma_url) as first:
        first.index()
        assert first.store.workspace == "docs"
        with KnowledgeBase(two, embed_model="hash", chroma_url=chroma_url) as second:
            with pytest.raises(ConfigError, match=r"already holds workspace 'docs', written from"):
                second.index()
        # Naming another workspace keeps both; naming this one takes it over.
        with KnowledgeBase(
            two, embed_model="hash", chroma_url=chroma_url, workspace="Docs Two"
        ) as other:
            other.index()
            assert other.store.workspace == "docs-two"
            assert {h.chunk.path for h in other.search("aardvark pangolin", 5)} == {"y.md"}
        assert {h.chunk.path for h in first.search("aardvark pangolin", 5)} == {"x.md"}
        with KnowledgeBase(
            two, embed_model="hash", chroma_url=chroma_url, workspace="docs"
        ) as taker:
            report = taker.index()
            assert "takes over workspace 'docs'" in report.rebuilt
            assert {h.chunk.path for h in taker.search("aardvark pangolin", 5)} == {"y.md"}


def test_a_second_index_folder_of_one_vault_is_refused_while_the_first_lives(
    chroma_url: str, tmp_path: Path, write_files: Callable[..., Path]
) -> None:
    """A second index folder of the same vault took the workspace over without a word, and
    the two rebuilt it in turn on every run; a folder deleted to start afresh may take over."""
    vault = write_files(tmp_path / "twice" / "pangolins", {"x.md": "# One\n\npangolin\n"})
    first_folder, second_folder = tmp_path / "idx-1", tmp_path / "idx-2"
    with KnowledgeBase(
        vault, embed_model="hash", chroma_url=chroma_url, index_dir=first_folder
    ) as first:
        first.index()
    with KnowledgeBase(
        vault, embed_model="hash", chroma_url=chroma_url, index_dir=second_folder
    ) as second:
        with pytest.raises(ConfigError, match=r"written from this vault's index folder") as error:
            second.index()
        assert f"--index-dir {first_folder}" in str(error.value)
    shutil.rmtree(first_folder)  # the first index deleted: the second may write
    with KnowledgeBase(
        vault, embed_model="hash", chroma_url=chroma_url, index_dir=second_folder
    ) as second:
        assert "takes over" in second.index().rebuilt
        assert [h.chunk.path for h in second.search("pangolin", 3)] == ["x.md"]


def test_an_index_from_before_workspaces_moves_without_embedding(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault({"a.md": "# Alpha\n\n## Install\n\nquokka\n", "b.md": "# Beta\n\nwombat\n"})
    old = kb(vault)
    old.index()
    # What an older kb-qa left: vectors only, in a collection named after the vault's path.
    from kb_qa.index.claim import legacy_collection_name

    legacy = legacy_collection_name(vault)
    ids = old.store.collection.get(include=["embeddings"])
    old.store.vectors.client.get_or_create_collection(legacy, embedding_function=None).upsert(
        ids=ids["ids"], embeddings=ids["embeddings"]
    )
    old.store.set_meta(records="", collection="")
    old.store.vectors.drop()
    report = old.index()
    assert report.rebuilt.startswith("the index now lives in workspace 'vault'")
    assert "re-chunking every file once" in report.rebuilt
    assert report.embedded == 0 and report.reused == report.chunks > 0
    names = {c.name for c in old.store.vectors.client.list_collections()}
    assert legacy not in names and "kbqa-vault" in names
    record = old.store.collection.get(include=["documents", "metadatas"])
    assert sorted(record["documents"]) == sorted(c.text for c in old.store.chunks())
    assert old.index().rebuilt == ""


OWNER = "owner-token-for-tests"


def test_a_replicas_insights_report_its_own_questions(
    chroma_url: str, tmp_path: Path, write_files: Callable[..., Path]
) -> None:
    vault = write_files(tmp_path / "ins", {"a.md": "# Alpha\n\n## Install\n\nquokka tool\n"})
    with KnowledgeBase(vault, embed_model="hash", chroma_url=chroma_url) as writer:
        writer.index()
    settings = _settings(chroma_url, "ins", rate_limit=0, index_dir=tmp_path / "rep").replace(
        admin_token=OWNER
    )
    with Replica(settings) as replica:
        replica.start()
        with UvicornThread(create_app(replica, settings)) as api:
            asked = {"question": "How do I install the quokka tool?", "stream": False}
            assert httpx.post(api.url + "/api/ask", json=asked, timeout=30).status_code == 200
            report = httpx.get(
                api.url + "/insights", headers={"Authorization": f"Bearer {OWNER}"}, timeout=30
            )
    assert report.status_code == 200, report.text
    assert "How do I install the quokka tool?" in report.text
