// The conversation sent with a question: answered turns only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { historyFor, indexingText, pageLanguage, retryDelay } from "../src/chat.js";

const user = (text) => ({ role: "user", text });
const answer = (text) => ({ role: "assistant", text, done: true });
const failed = { role: "assistant", text: "", error: "Could not reach the answer service." };

test("a follow-up to an answer that broke off is about its question, with what it said", () => {
  const broken = { role: "assistant", text: "It is attempted five [1]", error: "The language model's answer broke off. Try again." };
  const messages = [user("How do I pause a queue?"), answer("Pause it [1]."), user("How many times is a failing job attempted?"), broken];
  assert.deepEqual(historyFor(messages, messages.length, "how do I change it?"), [
    { role: "user", content: "How do I pause a queue?" },
    { role: "assistant", content: "Pause it [1]." },
    { role: "user", content: "How many times is a failing job attempted?" },
    { role: "assistant", content: "It is attempted five [1]" },
  ]);
  // A stopped answer is sent as what it said; nothing in a turn says an answer is whole.
  const stopped = { role: "assistant", text: "Pause", stopped: true };
  assert.deepEqual(historyFor([user("How do I pause a queue?"), stopped], 2, "And resume?").at(-1), { role: "assistant", content: "Pause" });
});

test("a question that got no word of an answer stays, for a follow-up; asked again, it does not", () => {
  const messages = [user("How are retries set?"), answer("Five attempts [1]."), user("How do I pause a queue?"), failed];
  assert.deepEqual(historyFor(messages, messages.length, "And resume it?"), [
    { role: "user", content: "How are retries set?" },
    { role: "assistant", content: "Five attempts [1]." },
    { role: "user", content: "How do I pause a queue?" },
  ]);
  // The question back in the box, asked again: not sent twice.
  assert.deepEqual(historyFor(messages, messages.length, "How do I pause a queue?"), [
    { role: "user", content: "How are retries set?" },
    { role: "assistant", content: "Five attempts [1]." },
  ]);
});

test("failures do not push the answered conversation out of the history", () => {
  let messages = [user("First?"), answer("First answer.")];
  for (let n = 0; n < 6; n++) messages.push(user(`Retry ${n}?`), failed);
  const turns = historyFor(messages, messages.length, "Retry 5?");
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
