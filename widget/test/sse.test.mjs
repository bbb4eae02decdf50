// The SSE reader.
import { test } from "node:test";
import assert from "node:assert/strict";
import { jsonAnswerText, parseSSE } from "../src/sse.js";

test("SSE frames split across reads are reassembled", () => {
  const stream =
    'event: status\ndata: {"stage": "searching", "message": "Searching your sources…"}\n\n' +
    'event: delta\ndata: {"text": "Retries [1]"}\n\n: keep-alive comment\n\n' +
    'event: done\r\ndata: {"text": "Retries [1]"}\r\n\r\n';
  for (let cut = 0; cut <= stream.length; cut++) {
    const first = parseSSE(stream.slice(0, cut));
    const second = parseSSE(first.rest + stream.slice(cut));
    const events = [...first.events, ...second.events];
    assert.deepEqual(
      events.map((e) => e.event),
      ["status", "delta", "done"],
      `cut at ${cut}`
    );
    assert.equal(JSON.parse(events[1].data).text, "Retries [1]");
    assert.equal(second.rest, "");
  }
});

test("multi-line data fields join with newlines", () => {
  const { events } = parseSSE("event: delta\ndata: a\ndata: b\n\n");
  assert.deepEqual(events, [{ event: "delta", data: "a\nb" }]);
});

test("a JSON reply's text is read from text, or answer from older servers", () => {
  assert.equal(jsonAnswerText({ text: "Five [1].", answer: "Five [1]." }), "Five [1].");
  assert.equal(jsonAnswerText({ answer: "Old [1]." }), "Old [1].");
  assert.equal(jsonAnswerText({ text: "", answer: "ignored" }), "");
  assert.equal(jsonAnswerText({}), "");
  assert.equal(jsonAnswerText(null), "");
});
