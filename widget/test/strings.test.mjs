// The widget's words in its page's language, and a site owner's labels over them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { errorText, httpMessage, indexingText } from "../src/chat.js";
import { answerAnnouncement } from "../src/messages.js";
import { readOptions } from "../src/options.js";
import { LANGUAGES, languageOf, readLabels, strings } from "../src/strings.js";

const PLACES = /\{(\w+)(?::[^{}|]*\|[^{}|]*)?\}/g;
const places = (text) => [...text.matchAll(PLACES)].map((m) => m[1]).sort();

test("the page's primary language subtag chooses the words; any other language is English", () => {
  const cases = { fr: "fr", "fr-CA": "fr", "zh-Hans": "zh", "zh-Hant-TW": "zh", "pt-BR": "pt", PT_br: "pt", de: "de", "es-419": "es", it: "it", ja: "ja", en: "en", "en-GB": "en", nl: "en", ar: "ar", "ar-EG": "ar", he: "en", fa: "en", "": "en", undefined: "en" };
  for (const [tag, lang] of Object.entries(cases)) assert.equal(languageOf(tag === "undefined" ? undefined : tag), lang, tag);
  assert.deepEqual(Object.keys(LANGUAGES).sort(), ["ar", "de", "en", "es", "fr", "it", "ja", "pt", "zh"]);
});

test("every language says every string, with the same values filled in", () => {
  const keys = Object.keys(LANGUAGES.en).sort();
  for (const [lang, table] of Object.entries(LANGUAGES)) {
    assert.deepEqual(Object.keys(table).sort(), keys, lang);
    for (const key of keys) {
      assert.ok(table[key].trim(), `${lang}.${key}`);
      assert.deepEqual([...new Set(places(table[key]))], [...new Set(places(LANGUAGES.en[key]))], `${lang}.${key}`);
    }
  }
});

test("a French page's widget speaks French, counting as French does", () => {
  const t = strings("fr-FR");
  assert.equal(t.lang, "fr");
  assert.equal(t("title"), "Interroger la doc");
  assert.equal(t("send"), "Envoyer");
  assert.equal(t("sourceN", { n: 2 }), "Source 2");
  assert.equal(answerAnnouncement({ text: "Oui [1].", citations: [{}] }, t), "Oui. 1 source.");
  assert.equal(answerAnnouncement({ text: "Oui [1].", citations: [{}, {}] }, t), "Oui. 2 sources.");
  assert.equal(answerAnnouncement({ text: "", citations: [] }, t), "Aucune réponse n’a été reçue.");
  assert.equal(
    indexingText({ embedded: 4, to_embed: 12 }, t),
    "La documentation est encore en cours d’indexation\u00a0: 4 sections sur 12. Votre question recevra une réponse dès que ce sera fait…",
  );
  assert.equal(strings("de")("sourceCount", { n: 1 }), "1 Quelle.");
  assert.equal(strings("de")("sourceCount", { n: 3 }), "3 Quellen.");
  assert.equal(strings("ja")("sourceCount", { n: 3 }), "出典 3 件。");
  assert.equal(strings("nl")("send"), "Send");
  // Arabic counts one apart from two and more (its "zero", "two" and "few" take the other form).
  assert.equal(strings("ar")("sourceCount", { n: 1 }), "مصدر واحد.");
  assert.equal(strings("ar")("title"), "اسأل الوثائق");
});

test("a site owner's labels replace any string, for every language or for one", () => {
  const labels = readLabels('{"send": "Go", "fr": {"send": "Allez", "close": "Fermer le chat"}, "title": "", "stop": 7}');
  assert.deepEqual(labels, { send: "Go", fr: { send: "Allez", close: "Fermer le chat" } });
  assert.equal(strings("en", labels)("send"), "Go");
  assert.equal(strings("de", labels)("send"), "Go");
  assert.equal(strings("fr-CA", labels)("send"), "Allez");
  assert.equal(strings("fr", labels)("close"), "Fermer le chat");
  assert.equal(strings("en", labels)("close"), "Close");
  assert.equal(strings("fr", labels)("stop"), "Arrêter"); // not text: the language's own
  assert.equal(strings("en", readLabels({ sourceCount: "{n:one link|# links}" }))("sourceCount", { n: 1 }), "one link");
  assert.deepEqual(readLabels("{not json"), {});
  assert.deepEqual(readLabels(["send"]), {});
  assert.deepEqual(readLabels(undefined), {});
});

/** readOptions on a page in ``lang`` for the plugin's options, or the drop-in tag's data-*. */
function optionsOn(lang, { plugin, dataset }) {
  globalThis.location = new URL("https://docs.example.com/guide/");
  globalThis.document = { documentElement: { lang: lang }, querySelector: () => null };
  const script = {
    src: "https://docs.example.com/kb-qa/kb-qa.js",
    dataset: dataset || {},
    getAttribute: (name) => (name === "data-kb-qa-options" && plugin ? JSON.stringify(plugin) : null),
  };
  try {
    return readOptions(script);
  } finally {
    delete globalThis.document;
    delete globalThis.location;
  }
}

test("the title and placeholder: the owner's option, else their label, else the language's own", () => {
  const french = optionsOn("fr", { plugin: { endpoint: "" } });
  assert.equal(french.title, "Interroger la doc");
  assert.equal(french.placeholder, "Posez une question sur cette documentation…");
  assert.equal(french.t("copyAnswer"), "Copier la réponse");
  const english = optionsOn("en", { plugin: { title: "" } });
  assert.equal(english.title, "Ask the docs");
  assert.equal(english.placeholder, "Ask a question about these docs…");
  const labelled = optionsOn("fr", { plugin: { labels: { title: "Demandez à Lumen", send: "Poser" } } });
  assert.equal(labelled.title, "Demandez à Lumen");
  assert.equal(labelled.t("send"), "Poser");
  const both = optionsOn("fr", { plugin: { title: "Ask Lumen", placeholder: "Your question…", labels: { title: "Demandez à Lumen", placeholder: "Votre question…" } } });
  assert.equal(both.title, "Ask Lumen");
  assert.equal(both.placeholder, "Your question…");
  const dropIn = optionsOn("pt-BR", { dataset: { labels: '{"close": "Fechar chat"}' } });
  assert.equal(dropIn.title, "Pergunte à documentação");
  assert.equal(dropIn.t("close"), "Fechar chat");
  assert.equal(optionsOn("pt-BR", { dataset: { title: "Ajuda", labels: '{"title": "x"}' } }).title, "Ajuda");
});

test("an answer's error is the server's words on an English page, the widget's own in another language", () => {
  const timedOut = { code: "llm_timeout", message: "The language model did not answer within 60 s. Try again." };
  assert.equal(errorText(timedOut, strings("en")), timedOut.message);
  assert.equal(errorText(timedOut, strings("de")), "Das Sprachmodell hat zu lange für die Antwort gebraucht. Versuchen Sie es erneut.");
  assert.equal(errorText({ code: "llm_error", message: "The language model's answer broke off. Try again." }, strings("fr")), "Le modèle de langage n’a pas pu terminer la réponse. Réessayez.");
  assert.equal(errorText({ code: "retrieval_error", message: "The index cannot be opened." }, strings("ja")), strings("ja")("failed"));
  assert.equal(errorText({}, strings("es")), strings("es")("failed"));
  assert.equal(errorText({}, strings("en")), "The answer failed. Try again.");
  // A site owner's own words still come first
  assert.equal(errorText(timedOut, strings("de", { de: { modelTimeout: "Zu langsam." } })), "Zu langsam.");
});

test("a refused request is the server's words on an English page, the widget's own in another language", () => {
  const reply = (status, retryAfter = "") => ({ status, url: "http://127.0.0.1:8000/api/ask", headers: { get: () => retryAfter } });
  const tooLong = { error: "The question is 3,000 characters; the limit is 2,000 (max_question_chars)." };
  assert.equal(httpMessage(reply(413), tooLong, strings("en")), tooLong.error);
  assert.equal(httpMessage(reply(413), tooLong, strings("de")), "Die Frage ist zu lang. Kürzen Sie sie und fragen Sie erneut.");
  assert.equal(httpMessage(reply(413), {}, strings("en")), "The question is too long. Shorten it and ask again.");
  const busy = { error: "Too many requests from this address." };
  assert.equal(httpMessage(reply(429, "5"), busy, strings("en")), "Too many requests from this address. Try again in 5 s.");
  assert.equal(httpMessage(reply(429, "5"), busy, strings("fr")), strings("fr")("tooMany") + " " + strings("fr")("tryAgainIn", { seconds: 5 }));
  const malformed = { error: "history must be a list of {role, content} messages." };
  assert.equal(httpMessage(reply(422), malformed, strings("en")), malformed.error);
  assert.equal(httpMessage(reply(422), malformed, strings("ja")), strings("ja")("serviceFailed", { status: 422 }));
  // A kb-qa server that refused with its words is no missing service, in any language.
  assert.equal(httpMessage(reply(404), { error: "No such page." }, strings("es")), strings("es")("serviceFailed", { status: 404 }));
  assert.equal(httpMessage(reply(404), {}, strings("es")), strings("es")("noService", { url: "http://127.0.0.1:8000/api/ask", status: 404 }));
});

test("a rated answer's start never ends on half an emoji", async () => {
  const { answerStart } = await import("../src/feedback.js");
  const emoji = "\u{1F680}";
  assert.equal(answerStart("a".repeat(1999) + emoji + "b"), "a".repeat(1999));
  assert.equal(answerStart("a".repeat(1998) + emoji + "b"), "a".repeat(1998) + emoji);
  assert.equal(answerStart("short " + emoji), "short " + emoji);
});
