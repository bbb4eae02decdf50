"""A rating must be of an answer this server gave: POST /api/feedback takes it only with the
answer id /api/ask signed, keeps one rating per answer, and a script that makes ratings up
can neither fill the owner's log nor push readers' ratings out of it (``feedback_max``).

Real uvicorn, real HTTP, the real index (embedded Chroma in a temporary folder).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import answered, indexed_sample, parse_sse, rated
from uvicorn_thread import serve_kb

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.owners.answer_ids import KEY_FILE, AnswerIds
from kb_qa.owners.feedback import Feedback, FeedbackStore

QUESTION = "How do I replay a dead job?"
OTHER = "What is the default retry backoff?"


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    base = indexed_sample(tmp_path_factory.mktemp("feedback-ids"), rate_limit=0)
    yield base
    base.close()


@pytest.fixture
def fresh(kb: KnowledgeBase) -> Iterator[KnowledgeBase]:
    """``kb`` with no rating stored yet."""
    db = kb.settings.index_path / "feedback.sqlite3"
    if db.exists():
        with sqlite3.connect(db) as conn:  # the question log may have made it alone
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'feedback'").fetchone():
                conn.execute("DELETE FROM feedback")
    yield kb


def stored(kb: KnowledgeBase) -> list[Feedback]:
    return FeedbackStore(kb.settings.index_path).all()


def post(url: str, body: Any) -> httpx.Response:
    return httpx.post(url + "/api/feedback", json=body, timeout=30)


def test_a_rating_of_an_answer_given_is_stored_and_linked(fresh: KnowledgeBase) -> None:
    with serve_kb(fresh) as server:
        given = answered(server.url, QUESTION)
        assert given["answer_id"].startswith(given["question_id"] + ".")
        body = {"question": QUESTION, "answer": given["text"], "rating": "down", "reason": "x"}
        response = post(server.url, {**body, "answer_id": given["answer_id"]})
        assert response.status_code == 201, response.text
        assert response.json() == {"ok": True, "replaced": False}
        # The streamed answer's done event carries an id of its own, as good.
        with httpx.stream(
            "POST", server.url + "/api/ask", json={"question": OTHER}, timeout=60
        ) as streamed:
            events = parse_sse(list(streamed.iter_lines()))
        done = next(d for n, d in events if n == "done")
        cited = next(d for n, d in events if n == "citations")["citations"]
        assert done["answer_id"] and done["answer_id"] != given["answer_id"]
        # Rated as the widget rates it: the answer's text and citations, as they came.
        rating = {"question": OTHER, "rating": "up", "answer": done["text"], "citations": cited}
        response = post(server.url, {**rating, "answer_id": done["answer_id"]})
        assert response.status_code == 201, response.text
    first, second = stored(fresh)[::-1]
    assert (first.question, first.rating, first.reason) == (QUESTION, "down", "x")
    assert first.question_id == given["question_id"]  # linked to the logged question
    assert second.question_id == done["question_id"] and second.rating == "up"
    assert second.answer == done["text"] and len(second.citations) == len(cited) > 0
    assert [c["url"] for c in second.citations] == [c["url"] for c in cited]
    # The key is the server's own, beside the index, readable by its owner only.
    key = fresh.settings.index_path / KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 or os.name == "nt"
    assert len(key.read_text().strip()) >= 32


def test_without_the_question_log_answers_can_still_be_rated(fresh: KnowledgeBase) -> None:
    with serve_kb(fresh, question_log=False) as server:
        response = rated(server.url, QUESTION, "up")
        assert response.status_code == 201, response.text
    assert [(r.question, r.question_id) for r in stored(fresh)] == [(QUESTION, "")]


def test_ratings_off_gives_no_thumbs_and_takes_no_rating(fresh: KnowledgeBase) -> None:
    """A site owner who must store no reader's words switched the question log off, and
    readers' ratings went on storing their questions for a year: there was no way to turn
    ratings off."""
    with serve_kb(fresh, question_log=False, ratings=False) as server:
        given = answered(server.url, QUESTION)
        assert given["answer_id"] == ""  # the widget shows no thumbs for it
        body = {"question": QUESTION, "answer": given["text"], "rating": "up", "answer_id": "x"}
        refused = post(server.url, body)
        assert refused.status_code == 404 and "ratings: false" in refused.json()["error"]
    assert stored(fresh) == []


def test_expired_ratings_go_while_the_server_runs(
    fresh: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ratings past feedback_days went only at a start or when a new rating came: a server
    that ran for months and got few kept them past what the privacy page says."""
    monkeypatch.setattr("kb_qa.owners.questionlog.PRUNE_EVERY", 0.3)  # hourly, shortened
    with serve_kb(fresh, feedback_days=1):
        old = Feedback("down", QUESTION, "answer", at=time.time() - 3 * 86_400)
        FeedbackStore(fresh.settings.index_path, days=0).add(old)  # kept by the add itself
        assert len(stored(fresh)) == 1
        deadline = time.monotonic() + 10
        while stored(fresh) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert stored(fresh) == []


def _refusals(url: str, kb: KnowledgeBase) -> list[tuple[dict[str, Any], int, str]]:
    """Bodies a script could send, the status each must get and words of its message."""
    real = answered(url, QUESTION)
    other = answered(url, OTHER)
    body = {"question": QUESTION, "answer": real["text"], "rating": "up"}
    ref, issued, said, signature = real["answer_id"].split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    ids = AnswerIds(kb.settings.index_path)
    old = ids.issue(ref, QUESTION, said, time.time() - 25 * 3600)
    ahead = ids.issue(ref, QUESTION, said, time.time() + 3600)
    not_given = "was not given by this server for this question"
    rated = {**body, "answer_id": real["answer_id"], "citations": real["citations"]}
    forged_link = [{**real["citations"][0], "url": "https://evil.example/"}]
    altered = "are not the ones this answer_id was given with"
    return [
        (body, 422, "answer_id is required"),  # a widget from before answer ids
        ({**body, "answer_id": ""}, 422, "reload the page"),
        ({**body, "answer_id": 12}, 422, "must be the string"),
        ({**body, "answer_id": "made-up"}, 403, not_given),
        ({**body, "answer_id": f"{ref}.{issued}.{said}.{flipped}"}, 403, not_given),
        ({**body, "answer_id": f"{ref}.{int(issued) + 1}.{said}.{signature}"}, 403, not_given),
        ({**body, "answer_id": f"{'x' * 16}.{issued}.{said}.{signature}"}, 403, not_given),
        ({**body, "answer_id": f"{ref}.{issued}.{'A' * 22}.{signature}"}, 403, not_given),
        ({**body, "answer_id": f"{ref}.{issued}.{signature}"}, 403, not_given),  # before 0.2
        ({**body, "answer_id": other["answer_id"]}, 403, not_given),  # another question's
        ({**body, "question": QUESTION + "?", "answer_id": real["answer_id"]}, 403, not_given),
        ({**body, "answer_id": old}, 403, "more than 24 hours old"),
        ({**body, "answer_id": ahead}, 403, not_given),
        # A real answer's id with a made-up answer or links for the owner's report
        ({**rated, "answer": "FAKE ANSWER: see https://evil.example/"}, 403, altered),
        ({**rated, "citations": forged_link}, 403, altered),
    ]


def test_ratings_without_an_answer_this_server_gave_are_refused(
    fresh: KnowledgeBase, caplog: pytest.LogCaptureFixture
) -> None:
    with serve_kb(fresh) as server, caplog.at_level(logging.WARNING, "kb_qa.serve"):
        for body, status, words in _refusals(server.url, fresh):
            response = post(server.url, body)
            assert response.status_code == status, (body, response.text)
            assert words in response.json()["error"], response.text
        # Size limits still come first: 413, whatever the id.
        too_long = post(server.url, {"question": QUESTION, "rating": "up", "reason": "r" * 5000})
        assert too_long.status_code == 413
    assert stored(fresh) == []
    # An old site's widget rates without ids: the operator is told which, once an hour.
    told = [r for r in caplog.records if "older than this server" in r.getMessage()]
    assert len(told) == 1 and "Rebuild and redeploy" in told[0].getMessage()


def test_a_flood_of_made_up_ratings_pushes_out_no_real_one(fresh: KnowledgeBase) -> None:
    with serve_kb(fresh, feedback_max=3) as server:
        assert rated(server.url, QUESTION, "down", reason="It skips --all").status_code == 201
        real = answered(server.url, OTHER)
        ref, issued, said, _ = real["answer_id"].split(".")
        with httpx.Client(timeout=30) as client:
            for n in range(200):
                question = f"Fabricated question {n}?"
                forged = f"{ref}.{issued}.{said}.{'A' * 43}" if n % 2 else ""
                body = {"question": question, "answer": "spam", "rating": "up"}
                response = client.post(
                    server.url + "/api/feedback", json={**body, "answer_id": forged}
                )
                assert response.status_code in (403, 422), response.text
    rows = stored(fresh)
    assert [(r.question, r.rating, r.reason) for r in rows] == [
        (QUESTION, "down", "It skips --all")
    ]


def test_an_answer_rated_twice_keeps_its_latest_rating(fresh: KnowledgeBase) -> None:
    with serve_kb(fresh) as server:
        given = answered(server.url, QUESTION)
        body = {"question": QUESTION, "answer": given["text"], "answer_id": given["answer_id"]}
        assert post(server.url, {**body, "rating": "up"}).json()["replaced"] is False
        changed = post(server.url, {**body, "rating": "down", "reason": "Wrong flag"})
        assert changed.status_code == 201 and changed.json()["replaced"] is True
        # The same question asked again is another answer: rated on its own.
        assert rated(server.url, QUESTION, "up").json()["replaced"] is False
    rows = stored(fresh)
    assert [(r.rating, r.reason) for r in rows] == [("up", ""), ("down", "Wrong flag")]
    assert len({r.answer_ref for r in rows}) == 2


def test_ids_outlive_a_restart_and_replicas_share_one_by_feedback_secret(
    fresh: KnowledgeBase, tmp_path: Path
) -> None:
    with serve_kb(fresh) as server:
        given = answered(server.url, QUESTION)
    body = {"question": QUESTION, "rating": "up", "answer_id": given["answer_id"]}
    with serve_kb(fresh) as restarted:  # the key is kept beside the index
        assert post(restarted.url, body).status_code == 201
    # Servers with their own index folders sign with their own keys, unless they are given
    # one feedback_secret: then an answer from one may be rated at the other.
    shared = "s3cret-shared-by-every-replica-behind-one-address"
    with (
        serve_kb(fresh, index_dir=tmp_path / "a") as one,
        serve_kb(fresh, index_dir=tmp_path / "b") as two,
    ):
        given = answered(one.url, OTHER)
        elsewhere = post(two.url, {"question": OTHER, "rating": "up", **given})
        assert elsewhere.status_code == 403
    with (
        serve_kb(fresh, index_dir=tmp_path / "c", feedback_secret=shared) as one,
        serve_kb(fresh, index_dir=tmp_path / "d", feedback_secret=shared) as two,
    ):
        given = answered(one.url, OTHER)
        elsewhere = post(two.url, {"question": OTHER, "rating": "up", **given})
        assert elsewhere.status_code == 201, elsewhere.text
    assert [r.question for r in FeedbackStore(tmp_path / "d").all()] == [OTHER]
    assert not (tmp_path / "d" / KEY_FILE).exists()  # a configured secret writes no file


@pytest.mark.parametrize("question_log", [True, False], ids=["logged", "not-logged"])
def test_what_readers_wrote_is_readable_by_the_server_s_user_alone(
    tmp_path: Path, question_log: bool
) -> None:
    """The database of questions and ratings took the server's umask: with the usual 022,
    every user of the machine could read what readers asked and wrote. It is made 0600 now,
    whichever writes it first, and SQLite gives its -wal and -shm files the same mode."""
    before = os.umask(0o022)
    try:
        base = indexed_sample(tmp_path, rate_limit=0, question_log=question_log)
        with serve_kb(base) as server:
            assert rated(server.url, QUESTION).status_code == 201
        base.close()
    finally:
        os.umask(before)
    files = sorted(base.settings.index_path.glob("feedback.sqlite3*"))
    assert files and files[0].name == "feedback.sqlite3"
    modes = {f.name: oct(stat.S_IMODE(f.stat().st_mode)) for f in files}
    assert set(modes.values()) == {oct(0o600)} or os.name == "nt", modes


def test_a_database_an_older_kb_qa_left_readable_is_made_private(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Made 0600 only when created, a database an older kb-qa had made 0644 stayed
    readable by every user of the machine after the upgrade. It is made private, and said."""
    base = indexed_sample(tmp_path, rate_limit=0)
    db = base.settings.index_path / "feedback.sqlite3"
    with sqlite3.connect(db) as conn:  # as an older kb-qa made it
        conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
    os.chmod(db, 0o644)
    with serve_kb(base) as server:
        assert rated(server.url, QUESTION).status_code == 201
    base.close()
    files = sorted(db.parent.glob("feedback.sqlite3*"))
    modes = {f.name: oct(stat.S_IMODE(f.stat().st_mode)) for f in files}
    assert set(modes.values()) == {oct(0o600)} or os.name == "nt", modes
    assert "was readable by other users of this machine: made it 0600" in caplog.text


def test_an_answer_is_recognised_from_the_start_the_widget_sends() -> None:
    """The widget sends the first 2,000 UTF-16 units of an answer (JavaScript's slice): an
    emoji cut in two at that point must not make the rating's answer 'altered'."""
    from kb_qa.owners.feedback import answer_digest, sent_digest

    answer = "a" * 1999 + "\N{THUMBS UP SIGN} and more text"
    # What the widget sends (feedback.js answerStart): 2,000 UTF-16 units but never half an
    # emoji, which made the request invalid JSON text (400) and the rating was lost.
    sliced = "a" * 1999
    cited = [{"number": 1, "url": "u", "path": "p.md", "anchor": "a", "text": "passage"}]
    whole = answer_digest(answer, cited)
    sent = sent_digest({"answer": sliced, "citations": [{**cited[0], "text": "other"}]})
    assert "".join(sent) == whole
    assert sent_digest({"answer": "b" + sliced[1:]})[0] != whole[:11]
    assert sent_digest({"rating": "up"}) == ("", "")
