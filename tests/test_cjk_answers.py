"""Japanese and Korean notes: their grammar is not what a question asks about; Chinese and
Japanese punctuation joins and ends a quoted passage as ASCII's does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa.answer import coverage, extractive
from kb_qa.answer.units import introduces
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.spoken import cjk_topic
from kb_qa.text import cjk_share

GARDEN = {"Garden.md": "# Garden\n\n## Garlic\n\nPlanted in October, lifted in July.\n"}
NOTES = {
    "家計.md": "# 家計\n\n## 固定費\n\n家賃8万5千円、光熱費は約1万2千円。\n\n"
    "## 食費\n\n食費は4万円まで。\n",
    "요리.md": "# 된장찌개\n\n## 만드는 법\n\n물에 된장을 풀고 감자와 양파를 넣는다. "
    "끓으면 두부를 넣고 5분 더 끓인다.\n\n## 재료\n\n된장 2큰술, 감자 1개, 양파 반 개.\n",
    "入社.md": "# 新人研修\n\n## 初日\n\n社員証を受け取り、PCをセットアップする。\n\n"
    "## 準備\n\n`setup.sh` を実行する。VPN に接続する。\n",
    **GARDEN,
}


def _answer(
    make_vault: Callable[..., Path],
    kb: Callable[..., KnowledgeBase],
    notes: dict[str, str],
    question: str,
) -> tuple[bool, str]:
    """Whether the sources cover ``question`` (MiniLM's index of ``notes``) and the
    extractive answer."""
    base = kb(make_vault(notes), embed_model="minilm")
    base.index()
    hits = base.search(question, 10)
    covered = coverage.covered(question, hits, "minilm")
    return covered, "".join(extractive.extract(question, list(enumerate(hits, 1)), covered))


def test_japanese_and_korean_grammar_is_read_apart_from_the_topic() -> None:
    assert cjk_topic("家賃はいくら？").split() == ["家賃", "?"]
    assert cjk_topic("新人は初日に何をする？").split() == ["新人", "初日", "?"]
    assert cjk_topic("두부는 언제 넣어요?").split() == ["두부", "넣?"]
    # Katakana is a word; Chinese has no such grammar and is left as it is.
    assert cjk_topic("ペットは飼えますか").split() == ["ペット", "飼"]
    assert cjk_topic("饺子怎么做？") == "饺子怎么做?"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # は, いくら, の, 언제, 는, 어요: pairs of grammar no note holds were most of the
        # question ("家賃8万5千円" was not found for 家賃はいくら).
        ("家賃はいくら？", True),
        ("毎月の家賃は？", True),
        ("家賃の金額", True),
        ("두부는 언제 넣어요?", True),
        ("ペットは飼えますか？", False),
        ("김치는 어디서 사요?", False),
    ],
)
def test_a_japanese_or_korean_question_is_covered_by_its_topic_words(
    make_vault: Callable[..., Path],
    kb: Callable[..., KnowledgeBase],
    question: str,
    expected: bool,
) -> None:
    covered, answer = _answer(make_vault, kb, NOTES, question)
    assert covered is expected
    if expected:  # the section holding the topic is quoted
        assert ("家賃8万5千円" if "家賃" in question else "두부를 넣고") in answer.split("\n\n")[2]


def test_japanese_kana_does_not_choose_the_passage(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """The する of "…を実行する" outweighed 初日, which only the heading holds."""
    covered, answer = _answer(make_vault, kb, NOTES, "新人は初日に何をする？")
    assert covered
    assert answer.split("\n\n")[1].startswith("**新人研修 › 初日**")


def test_a_full_width_colon_joins_a_paragraph_to_its_code(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """ "用 venv 创建虚拟环境：" was quoted alone, ending on its colon."""
    assert introduces("用 venv 创建虚拟环境：", code=True)
    note = (
        "# Python\n\n## 虚拟环境\n\n用 venv 创建虚拟环境：\n\n"
        "```bash\npython3 -m venv .venv\n```\n\n"
        "## 备份\n\n每周备份一次数据库：\n\n## 日志\n\n日志写在 logs 目录。\n"
    )
    notes = {"笔记.md": note, **GARDEN}
    _, answer = _answer(make_vault, kb, notes, "怎么创建 Python 虚拟环境？")
    assert "用 venv 创建虚拟环境：\n\n```bash\npython3 -m venv .venv\n```" in answer
    # Nothing follows it: it ends as a sentence does, in its own script.
    _, answer = _answer(make_vault, kb, notes, "多久备份一次数据库？")
    assert "每周备份一次数据库。\n" in answer


@pytest.mark.parametrize(
    ("question", "heading", "opening", "lead_in"),
    [
        ("怎么创建虚拟环境？", "虚拟环境", "每个项目一个，依赖互不影响。", "用 venv："),
        ("仮想環境はどうやって作る？", "仮想環境", "プロジェクトごとに一つ。", "venv で："),
        ("가상 환경은 어떻게 만들어요?", "가상 환경", "프로젝트마다 하나씩.", "venv 사용:"),
    ],
)
def test_a_chinese_japanese_or_korean_how_to_question_leans_to_the_code(
    make_vault: Callable[..., Path],
    kb: Callable[..., KnowledgeBase],
    question: str,
    heading: str,
    opening: str,
    lead_in: str,
) -> None:
    """As "how do I ..." does: the section's opening was quoted, not how to do it."""
    note = (
        f"# Python\n\n## {heading}\n\n{opening}\n\n{lead_in}\n\n"
        "```bash\npython3 -m venv .venv\n```\n\n## Logs\n\nLogs go to logs/.\n"
    )
    _, answer = _answer(make_vault, kb, {"Python.md": note, **GARDEN}, question)
    assert "python3 -m venv" in answer and opening not in answer


def test_half_width_katakana_is_cjk() -> None:
    assert cjk_share("ｺｰﾋｰ豆") == 1.0
