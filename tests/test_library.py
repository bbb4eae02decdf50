"""kb-qa as a library in someone's Python code: a whole answer with its citations (``ask``,
``ask_async``), what type checkers and ``dir()`` see of the package, arguments refused in
words, and index runs of one object from two threads. Found by using it from a bot: only
search was public, and answering meant importing an internal module typed ``Any``."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from api_helpers import indexed_sample
from llm_server import LLMServer, Reply

import kb_qa
from kb_qa import Answer, KnowledgeBase, LLMError, Turn, ask, ask_async

QUESTION = "How many times is a failing job attempted by default?"


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    with indexed_sample(tmp_path_factory.mktemp("library")) as base:
        yield base  # closed: its manifest connections would count in test_long_running's


def test_ask_gives_the_answer_whole_with_its_passages(kb: KnowledgeBase) -> None:
    reply = ask(kb, QUESTION)
    assert isinstance(reply, Answer) and reply.covered and reply.model == ""
    assert "five times" in reply.text and reply.citations
    for c in reply.citations:  # each citation is the passage of its page, byte for byte
        source = (Path(kb.settings.vault) / c.path).read_text(encoding="utf-8")
        assert source[c.start : c.end] == c.text and f"[{c.number}]" in reply.text
    # A follow-up with the conversation before it; from an event loop, ask_async.
    history = [Turn("user", QUESTION), Turn("assistant", reply.text)]
    later = asyncio.run(ask_async(kb, "and how long is the wait between them?", history=history))
    assert later.citations and later.text


def test_a_failed_model_raises_what_to_check(kb: KnowledgeBase, tmp_path: Path) -> None:
    with LLMServer(Reply(status=500, text="boom")) as llm:
        settings = kb.settings.replace(model="openai/test", api_base=llm.url)
        with KnowledgeBase(settings=settings) as configured:
            with pytest.raises(LLMError) as raised:
                ask(configured, QUESTION)
    assert "HTTP 500" in str(raised.value) and "boom" in raised.value.detail


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"question": None}, "ask: the question must be a string"),
        ({"include": "docs/*"}, "ask: include must be a list of vault paths or globs"),
        ({"exclude": None}, "ask: exclude must be a list"),
        ({"history": ["hi"]}, "ask: history must be a list of kb_qa.Turn"),
        ({"lang": 3}, "ask: lang must be a language tag such as 'en'"),
        ({"lang": None}, "ask: lang must be a language tag"),
    ],
)
def test_wrong_arguments_are_refused_in_words(
    kb: KnowledgeBase, arguments: dict[str, object], said: str
) -> None:
    """`include="docs/*"` was taken letter by letter (the answer not filtered), a `None`
    question or a history of strings raised AttributeError from deep inside."""
    call = {"question": QUESTION, **arguments}
    question = call.pop("question")
    with pytest.raises(TypeError, match=said):
        ask(kb, question, **call)  # type: ignore[arg-type]


def test_asking_an_index_never_built_says_to_index_the_vault(tmp_path: Path) -> None:
    """A script that forgot kb.index() was told "No passage in your sources matches this
    question" (search returned [], problem() said nothing): the likeliest first mistake."""
    (tmp_path / "a.md").write_text("# A\n\n## Tokens\n\nTokens expire after 90 days.\n")
    with KnowledgeBase(tmp_path, embed_model="hash", index_dir=tmp_path / ".idx") as fresh:
        with pytest.raises(kb_qa.IndexStateError, match=r"index the vault first \(kb\.index\(\)"):
            ask(fresh, "When do tokens expire?")
        fresh.index()
        assert "90 days" in ask(fresh, "When do tokens expire?").text


def test_a_knowledge_base_opened_with_wrong_arguments_says_what_to_pass() -> None:
    """`KnowledgeBase("")` failed with "expected str, bytes or os.PathLike object, not
    NoneType", and `settings={"top_k": 3}` with "'dict' object has no attribute"."""
    with pytest.raises(ValueError, match="the vault path is empty"):
        KnowledgeBase("")
    with pytest.raises(TypeError, match=r"keyword arguments instead, KnowledgeBase\(vault"):
        KnowledgeBase(settings={"top_k": 3})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"top_k": -1}, r"top_k \(KBQA_TOP_K\) has an invalid value -1: must not be negative"),
        ({"chunk_chars": "big"}, "chunk_chars .* must be a whole number"),
        ({"model": ["gpt"]}, r"model \(KBQA_MODEL\) has an invalid value \['gpt'\]: must be text"),
        ({"fusion": "best"}, "use one of zscore, rrf"),
    ],
)
def test_settings_made_in_code_are_checked_as_the_environment_s_are(
    tmp_path: Path, given: dict[str, object], said: str
) -> None:
    """`Settings(top_k=-1)` was taken as it was and failed deep inside (a model of the
    wrong type with "'list' object has no attribute"), though `KBQA_TOP_K=-1` and
    `KnowledgeBase(vault, top_k=-1)` were refused in words."""
    with pytest.raises(kb_qa.ConfigError, match=said):
        kb_qa.Settings(vault=tmp_path, **given)  # type: ignore[arg-type]
    made = kb_qa.Settings(vault=tmp_path, top_k="7", workspace=2024)  # type: ignore[arg-type]
    assert (made.top_k, made.workspace) == (7, "2024")  # as from mkdocs.yml or the env
    unset = kb_qa.Settings(vault=tmp_path, model=None, index_dir=None)  # type: ignore[arg-type]
    assert (unset.model, unset.index_dir) == ("", None)  # None is "not given", as it was


def test_the_package_shows_what_it_offers() -> None:
    """`dir(kb_qa)` and `help(kb_qa)` named no KnowledgeBase, and mypy read it as `object`."""
    assert {"KnowledgeBase", "ask", "ask_async", "Answer", "Citation", "Turn"} <= set(dir(kb_qa))
    assert kb_qa.KnowledgeBase is KnowledgeBase and kb_qa.Citation.__name__ == "Citation"
    source = Path(kb_qa.__file__).read_text(encoding="utf-8")
    assert "if TYPE_CHECKING:" in source and "import KnowledgeBase" in source


def test_two_threads_indexing_one_object_take_turns(tmp_path: Path) -> None:
    """The second raised IndexBusyError, "Another kb-qa process is updating the index", of a
    thread of the same process."""
    own = indexed_sample(tmp_path)
    (Path(own.settings.vault) / "docs" / "new.md").write_text("# New\n\nKumquats.\n")
    failures: list[BaseException] = []

    def run(progress: Callable[[int, int], None] | None) -> None:
        try:
            own.index(progress=progress)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            failures.append(exc)

    slow = threading.Thread(target=run, args=(lambda done, total: time.sleep(1.5),))
    slow.start()
    time.sleep(0.3)  # the first run is embedding the new page
    run(None)
    slow.join(60)
    own.close()
    assert failures == []
