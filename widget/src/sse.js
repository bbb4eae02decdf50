/** Server-Sent Events: complete events out of a growing buffer. */

/** Complete events in ``buffer`` and the unfinished rest: {events: [{event, data}], rest}. */
export function parseSSE(buffer) {
  let events = [];
  let text = buffer.replace(/\r\n/g, "\n");
  let keep = "";
  if (text[text.length - 1] === "\r") {
    keep = "\r";
    text = text.slice(0, -1);
  }
  text = text.replace(/\r/g, "\n");
  let at;
  while ((at = text.indexOf("\n\n")) !== -1) {
    let block = text.slice(0, at);
    text = text.slice(at + 2);
    let name = "message";
    let data = [];
    block.split("\n").forEach(function (line) {
      if (!line || line[0] === ":") return;
      let colon = line.indexOf(":");
      let field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    });
    if (data.length) events.push({ event: name, data: data.join("\n") });
  }
  return { events: events, rest: text + keep };
}

/** The answer's text in a one-object JSON reply (``"stream": false``): ``text``, as the
 * streamed ``done`` event names it, or ``answer`` from a server before that name. */
export function jsonAnswerText(data) {
  if (data && typeof data.text === "string") return data.text;
  return data && typeof data.answer === "string" ? data.answer : "";
}
