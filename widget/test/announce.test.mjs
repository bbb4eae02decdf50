// What a screen reader is told: the finished answer as plain text, once, and the announcer's
// empty-then-fill, so the same words said twice are read twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { announce, ANNOUNCE_DELAY_MS } from "../src/dom.js";
import { ANNOUNCED_CHARS, answerAnnouncement, statusText } from "../src/messages.js";

test("the answer is said as plain text without citation numbers, then its sources", () => {
  const m = { text: "Jobs are **retried** with `backoff` [1]. Tokens rotate [2][3].\n\n- one\n- two [1]", citations: [{}, {}, {}] };
  assert.equal(answerAnnouncement(m), "Jobs are retried with backoff. Tokens rotate. one two 3 sources.");
  assert.equal(answerAnnouncement({ text: "Yes [1].", citations: [{}] }), "Yes. 1 source.");
  assert.equal(answerAnnouncement({ text: "", citations: [] }), "No answer was returned.");
  // Character references are said as the characters the log shows (it had said "Within 0.5 C").
  assert.equal(answerAnnouncement({ text: "Within &plusmn;0.5&nbsp;&deg;C.", citations: [] }), "Within ±0.5 °C.");
});

test("a long answer is said up to a limit; the log holds the rest", () => {
  const said = answerAnnouncement({ text: "word ".repeat(2000), citations: [] });
  assert.ok(said.length < ANNOUNCED_CHARS + 60, said.length);
  assert.match(said, /… \(the rest is in the conversation\)$/);
});

test("the status is said as the status line shows it", () => {
  assert.equal(statusText({ stage: "searching", message: "Searching your sources" }), "Searching your sources…");
  assert.equal(statusText({ stage: "searching", message: "Searching..." }), "Searching…");
  assert.equal(statusText({ stage: "sending", message: "" }), "");
});

test("announce empties the region, then fills it; a newer announcement replaces one waiting", async () => {
  const region = { textContent: "Copied" };
  announce(region, "Copied");
  assert.equal(region.textContent, "");
  announce(region, "Answer copied");
  await new Promise((resolve) => setTimeout(resolve, ANNOUNCE_DELAY_MS + 20));
  assert.equal(region.textContent, "Answer copied");
  announce(null, "nowhere"); // no announcer yet: nothing happens
});
