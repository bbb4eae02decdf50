// The conversation sent with a question: answered turns only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { historyFor, indexingText, pageLanguage, retryDelay } from "../src/chat.js";

const user = (text) => ({ role: "user", text });
const answer = (text) => ({ role: "assistant", text, done: true });
const failed = { role: "assistant", text: "", error: "Could not reach the answer service." };

test("a failed answer's question is not sent as history", () => {
  const messages = [user("How are retries set?"), answer("Five attempts [1]."), user("Huh?"), failed];
  assert.deepEqual(historyFor(messages, messages.length), [
    { role: "user", content: "How are retries set?" },
    { role: "assistant", content: "Five attempts [1]." },
  ]);
});

test("failures do not push the answered conversation out of the history", () => {
  let messages = [user("First?"), answer("First answer.")];
  for (let n = 0; n < 6; n++) messages.push(user(`Retry ${n}?`), failed);
  const turns = historyFor(messages, messages.length);
  assert.deepEqual(turns.map((t) => t.content), ["First?", "First answer."]);
});

test("while the docs are indexed, the question waits and says how far the index is", () => {
  assert.equal(
    indexingText({ embedded: 1200, to_embed: 3400 }),
    "The docs are still being indexed: 1,200 of 3,400 sections. Your question is answered as soon as that is done…",
  );
  assert.equal(indexingText({}), "The docs are still being indexed. Your question is answered as soon as that is done…");
});

test("it is asked again when the server says, within reason", () => {
  assert.equal(retryDelay("10"), 10);
  assert.equal(retryDelay(null), 10);
  assert.equal(retryDelay("0"), 10);
  assert.equal(retryDelay("1"), 2);
  assert.equal(retryDelay("3600"), 30);
  assert.equal(retryDelay("soon"), 10);
});

test("the question carries the page's language, as its <html lang> names it", () => {
  const page = (lang) => ({ documentElement: { lang: lang } });
  assert.equal(pageLanguage(page("fr")), "fr");
  assert.equal(pageLanguage(page("pt-BR")), "pt-BR");
  assert.equal(pageLanguage(page("")), "");
  assert.equal(pageLanguage({ documentElement: null }), "");
  assert.equal(pageLanguage(page("x".repeat(36))), ""); // the API refuses longer ones
});
