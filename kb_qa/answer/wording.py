"""The fixed sentences of an answer, in the reader's language: the status lines and what an
extractive answer says around the passages it quotes.

The widget sends its page's ``<html lang>`` with a question (``lang`` of POST /api/ask); a
tag whose primary subtag is one of ``PHRASES`` (``fr``, ``fr-CA``, ``pt-BR``, ``zh-Hans``)
is answered in that language, any other (or none: MCP) in English; the CLI answers in the
question's language (``asked_language``). The widget's own strings are in
``widget/src/strings.js``, for the same languages but Hebrew (a site sets its words with
``labels``; the server's sentences follow the page's ``lang``).

A phrase counts with ``{name:one|other}``: the form for one (or, in French and Portuguese,
none) or the other, ``#`` standing for the number, so each language words its own plurals.
"""

from __future__ import annotations

import re

from kb_qa.spoken import asked_in

__all__ = ["PHRASES", "asked_language", "language", "say"]

# Each language's phrases; a key missing from one is said in English.
PHRASES: dict[str, dict[str, str]] = {
    "en": {
        "label": "No language model is configured; this is what your sources say:",
        "label_failed": "The language model did not answer; this is what your sources say:",
        "not_covered": "These docs don't seem to cover that. The nearest sections are:",
        "model_failed": "The language model did not answer.",
        "nothing": "No passage in your sources matches this question.",
        "see_also": "See also: {listed}.",
        "separator": "; ",  # between the sections "See also" lists
        "searching": "Searching your sources…",
        "reading": "Reading {excerpts:# excerpt|# excerpts} from {pages:# page|# pages}…",
        "reading_best": (
            "Reading the {best:best section|# best sections} of {excerpts:# excerpt|# excerpts}…"
        ),
        "updating": "The index is updating; answering from what is indexed so far…",
        "uncited": (
            "(This answer cites none of your sources: check it against the sections that "
            "match the question best.)"
        ),
    },
    "de": {
        "label": "Kein Sprachmodell eingerichtet. Das steht in Ihren Quellen:",
        "label_failed": "Das Sprachmodell hat nicht geantwortet. Das steht in Ihren Quellen:",
        "model_failed": "Das Sprachmodell hat nicht geantwortet.",
        "not_covered": (
            "Dazu scheint diese Dokumentation nichts zu enthalten. Die nächstliegenden Abschnitte:"
        ),
        "nothing": "Keine Stelle in Ihren Quellen passt zu dieser Frage.",
        "see_also": "Siehe auch: {listed}.",
        "searching": "Ihre Quellen werden durchsucht…",
        "reading": (
            "{excerpts:# Auszug|# Auszüge} aus {pages:# Seite|# Seiten} "
            "{excerpts:wird|werden} gelesen…"
        ),
        "reading_best": (
            "{best:Der beste Abschnitt|Die # besten Abschnitte} von "
            "{excerpts:# Auszug|# Auszügen} {best:wird|werden} gelesen…"
        ),
        "updating": "Der Index wird aktualisiert; die Antwort nutzt den bisherigen Stand…",
        "uncited": (
            "(Diese Antwort nennt keine Ihrer Quellen: Prüfen Sie sie anhand der Abschnitte, "
            "die am besten zur Frage passen.)"
        ),
    },
    "es": {
        "label": "No hay ningún modelo de lenguaje configurado; esto es lo que dicen tus fuentes:",
        "label_failed": "El modelo de lenguaje no respondió; esto es lo que dicen tus fuentes:",
        "model_failed": "El modelo de lenguaje no respondió.",
        "not_covered": (
            "Parece que esta documentación no trata ese tema. Las secciones más cercanas son:"
        ),
        "nothing": "Ningún pasaje de tus fuentes responde a esta pregunta.",
        "see_also": "Ver también: {listed}.",
        "searching": "Buscando en tus fuentes…",
        "reading": "Leyendo {excerpts:# fragmento|# fragmentos} de {pages:# página|# páginas}…",
        "reading_best": (
            "Leyendo {best:la mejor sección|las # mejores secciones} de "
            "{excerpts:# fragmento|# fragmentos}…"
        ),
        "updating": "El índice se está actualizando; la respuesta usa lo indexado hasta ahora…",
        "uncited": (
            "(Esta respuesta no cita ninguna de tus fuentes: compruébala con las secciones que "
            "mejor responden a la pregunta.)"
        ),
    },
    "fr": {
        "label": (
            "Aucun modèle de langage n’est configuré\u00a0; voici ce que disent vos sources\u00a0:"
        ),
        "label_failed": (
            "Le modèle de langage n’a pas répondu\u00a0; voici ce que disent vos sources\u00a0:"
        ),
        "model_failed": "Le modèle de langage n’a pas répondu.",
        "not_covered": (
            "Cette documentation ne semble pas traiter ce point. "
            "Les sections les plus proches\u00a0:"
        ),
        "nothing": "Aucun passage de vos sources ne répond à cette question.",
        "see_also": "Voir aussi\u00a0: {listed}.",
        "separator": "\u00a0; ",
        "searching": "Recherche dans vos sources…",
        "reading": (
            "Lecture de {excerpts:# extrait|# extraits} provenant de {pages:# page|# pages}…"
        ),
        "reading_best": (
            "Lecture {best:de la meilleure section|des # meilleures sections} parmi "
            "{excerpts:# extrait|# extraits}…"
        ),
        "updating": (
            "L’index est en cours de mise à jour\u00a0; réponse à partir de ce qui est déjà indexé…"
        ),
        "uncited": (
            "(Cette réponse ne cite aucune de vos sources\u00a0: vérifiez-la à l’aide des "
            "sections qui correspondent le mieux à la question.)"
        ),
    },
    "it": {
        "label": "Nessun modello linguistico configurato; ecco cosa dicono le tue fonti:",
        "label_failed": "Il modello linguistico non ha risposto; ecco cosa dicono le tue fonti:",
        "model_failed": "Il modello linguistico non ha risposto.",
        "not_covered": (
            "Questa documentazione non sembra trattare l’argomento. Le sezioni più vicine sono:"
        ),
        "nothing": "Nessun passaggio delle tue fonti risponde a questa domanda.",
        "see_also": "Vedi anche: {listed}.",
        "searching": "Ricerca nelle tue fonti…",
        "reading": "Lettura di {excerpts:# estratto|# estratti} da {pages:# pagina|# pagine}…",
        "reading_best": (
            "Lettura {best:della sezione migliore|delle # sezioni migliori} su "
            "{excerpts:# estratto|# estratti}…"
        ),
        "updating": "Indice in aggiornamento; la risposta usa ciò che è già indicizzato…",
        "uncited": (
            "(Questa risposta non cita nessuna delle tue fonti: verificala con le sezioni più "
            "pertinenti alla domanda.)"
        ),
    },
    "ja": {
        "label": "言語モデルが設定されていません。ソースの該当箇所は次のとおりです：",
        "label_failed": "言語モデルが応答しませんでした。ソースの該当箇所は次のとおりです：",
        "model_failed": "言語モデルが応答しませんでした。",
        "not_covered": "このドキュメントには該当する内容がないようです。近いセクション：",
        "nothing": "この質問に合う箇所はソースにありません。",
        "see_also": "関連項目：{listed}。",
        "separator": "、",
        "searching": "ソースを検索しています…",
        "reading": "{pages} ページの抜粋 {excerpts} 件を読んでいます…",
        "reading_best": "抜粋 {excerpts} 件のうち上位 {best} セクションを読んでいます…",
        "updating": "インデックスを更新中です。現時点の内容から回答します…",
        "uncited": (
            "（この回答はどの出典も引用していません。"
            "質問に最も合うセクションと照らし合わせて確認してください。）"
        ),
    },
    "pt": {
        "label": "Nenhum modelo de linguagem configurado; isto é o que suas fontes dizem:",
        "label_failed": "O modelo de linguagem não respondeu; isto é o que suas fontes dizem:",
        "model_failed": "O modelo de linguagem não respondeu.",
        "not_covered": "Esta documentação não parece tratar disso. As seções mais próximas são:",
        "nothing": "Nenhum trecho das suas fontes responde a esta pergunta.",
        "see_also": "Veja também: {listed}.",
        "searching": "Pesquisando nas suas fontes…",
        "reading": "Lendo {excerpts:# trecho|# trechos} de {pages:# página|# páginas}…",
        "reading_best": (
            "Lendo {best:a melhor seção|as # melhores seções} de {excerpts:# trecho|# trechos}…"
        ),
        "updating": "O índice está sendo atualizado; a resposta usa o que já foi indexado…",
        "uncited": (
            "(Esta resposta não cita nenhuma das suas fontes: confira-a com as seções que "
            "melhor correspondem à pergunta.)"
        ),
    },
    "ar": {
        "label": "لم يُضبط نموذج لغوي؛ هذا ما تقوله مصادرك:",
        "label_failed": "لم يُجب النموذج اللغوي؛ هذا ما تقوله مصادرك:",
        "model_failed": "لم يُجب النموذج اللغوي.",
        "not_covered": "لا يبدو أن هذه الوثائق تتناول ذلك. أقرب الأقسام:",
        "nothing": "لا يطابق أي مقطع في مصادرك هذا السؤال.",
        "see_also": "انظر أيضًا: {listed}.",
        "separator": "؛ ",
        "searching": "جارٍ البحث في مصادرك…",
        "reading": "جارٍ قراءة {excerpts:مقتطف واحد|# مقتطفات} من {pages:صفحة واحدة|# صفحات}…",
        "reading_best": (
            "جارٍ قراءة {best:أفضل قسم|أفضل # أقسام} من {excerpts:مقتطف واحد|# مقتطفات}…"
        ),
        "updating": "الفهرس قيد التحديث؛ الإجابة مما فُهرس حتى الآن…",
        "uncited": (
            "(لا تستشهد هذه الإجابة بأي من مصادرك: تحقّق منها في الأقسام الأقرب إلى السؤال.)"
        ),
    },
    "he": {
        "label": "לא הוגדר מודל שפה; זה מה שהמקורות שלך אומרים:",
        "label_failed": "מודל השפה לא ענה; זה מה שהמקורות שלך אומרים:",
        "model_failed": "מודל השפה לא ענה.",
        "not_covered": "נראה שהתיעוד הזה לא עוסק בזה. הסעיפים הקרובים ביותר:",
        "nothing": "אף קטע במקורות שלך לא מתאים לשאלה הזו.",
        "see_also": "ראו גם: {listed}.",
        "searching": "מחפש במקורות שלך…",
        "reading": "קורא {excerpts:קטע אחד|# קטעים} מתוך {pages:עמוד אחד|# עמודים}…",
        "reading_best": (
            "קורא את {best:הסעיף הטוב ביותר|# הסעיפים הטובים ביותר} "
            "מתוך {excerpts:קטע אחד|# קטעים}…"
        ),
        "updating": "האינדקס מתעדכן; התשובה מבוססת על מה שכבר נוסף לאינדקס…",
        "uncited": (
            "(התשובה הזו אינה מצטטת אף אחד מהמקורות שלך: בדקו אותה מול הסעיפים המתאימים "
            "ביותר לשאלה.)"
        ),
    },
    "zh": {
        "label": "未配置语言模型，以下是来源中的原文：",
        "label_failed": "语言模型未能回答，以下是来源中的原文：",
        "model_failed": "语言模型未能回答。",
        "not_covered": "这些文档似乎没有涉及这个问题。最接近的章节：",
        "nothing": "来源中没有与此问题匹配的段落。",
        "see_also": "另见：{listed}。",
        "separator": "；",
        "searching": "正在搜索来源…",
        "reading": "正在阅读 {pages} 个页面中的 {excerpts} 个片段…",
        "reading_best": "正在阅读 {excerpts} 个片段中最相关的 {best} 个章节…",
        "updating": "索引正在更新，将根据目前已索引的内容回答…",
        "uncited": "（此回答未引用任何来源：请对照与问题最相关的章节进行核实。）",
    },
}
# Languages whose "one" form is also said of none (CLDR: i = 0,1), as the widget's
# Intl.PluralRules chooses.
_ONE_OR_NONE = frozenset({"fr", "pt"})
_PLACE = re.compile(r"\{(\w+)(?::([^{}|]*)\|([^{}|]*))?\}")


def language(tag: str) -> str:
    """The language of ``PHRASES`` a language tag names ("fr-CA" -> "fr"), else "en"."""
    primary = tag.strip().replace("_", "-").split("-", 1)[0].lower()
    return primary if primary in PHRASES else "en"


# A question's script, where it tells the language (its words are most of that script)
_SCRIPTS = (
    ("ja", re.compile("[\u3040-\u30ff]")),  # kana: Japanese, whatever its kanji
    ("zh", re.compile("[\u4e00-\u9fff]")),
    ("ar", re.compile("[\u0600-\u06ff]")),
    ("he", re.compile("[\u0590-\u05ff]")),
)


def asked_language(question: str) -> str:
    """The language of ``PHRASES`` a question is asked in, for a reader who sent no tag (the
    CLI): told by its script, or by its function words (``spoken.asked_in``); "en" when
    neither tells. A German question in a terminal was answered "See also:" and "These docs
    don't seem to cover that", the widget on the same site in German."""
    letters = len(re.findall(r"[^\W\d_]", question)) or 1
    for lang, script in _SCRIPTS:
        if 3 * len(script.findall(question)) >= letters:
            return lang
    return language(asked_in(question))


def say(tag: str, key: str, **values: object) -> str:
    """Phrase ``key`` in the language of ``tag``, ``values`` filled in."""
    lang = language(tag)
    phrase = PHRASES[lang].get(key, PHRASES["en"][key])

    def fill(m: re.Match[str]) -> str:
        value = values[m[1]]
        if m[2] is None:
            return str(value)
        one = value == 1 or (lang in _ONE_OR_NONE and value == 0)
        return (m[2] if one else m[3]).replace("#", str(value))

    return _PLACE.sub(fill, phrase)
