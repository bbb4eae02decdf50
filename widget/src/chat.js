/** Asking: the question and the conversation go to POST /api/ask; the answer streams back as
 * Server-Sent Events (status, delta, citations, done, error) into the message being shown. */
import { announce } from "./dom.js";
import { answerAnnouncement, atEnd, MAX_ANSWER_CHARS, renderAll, renderMessage, statusText, updateMessage } from "./messages.js";
import { setBusy } from "./panel.js";
import { jsonAnswerText, parseSSE } from "./sse.js";
import { ENGLISH, pageLanguage } from "./strings.js";

export { pageLanguage };

const HISTORY_MESSAGES = 8;
const HISTORY_CHARS = 12000;
// An answer whose connection sends no byte for this long is given up (the server sends a
// comment every 15 s while a model thinks: a proxy or a network holds it).
const SILENCE_SECONDS = 45;

/** The conversation before message ``before``, as the API's ``history`` for ``question``. */
export function historyFor(messages, before, question) {
  let turns = [];
  let chars = 0;
  for (let i = before - 1; i >= 0 && turns.length < HISTORY_MESSAGES; i--) {
    const m = messages[i];
    if (m.role === "assistant" && !(m.done && m.text)) {
      // A failed or stopped answer: its question, on screen, stays (a follow-up is about it)
      // with what the answer said; not when it is asked again, nor an older one left unanswered.
      const asked = (messages[i - 1] || {}).text;
      if (i === before - 1 ? asked === question : !m.text) {
        i--;
        continue;
      }
      if (!m.text) continue;
    }
    let content = m.text; // the server drops old citation numbers itself
    if (chars + content.length > HISTORY_CHARS) break;
    chars += content.length;
    turns.unshift({ role: m.role, content: content });
  }
  // The API wants a user turn first.
  while (turns.length && turns[0].role !== "user") turns.shift();
  return turns;
}

/** Asking: ``w.submit()`` sends the question box, ``w.stop()`` stops the answer streaming now. */
export function initChat(w) {
  w.controller = null; // AbortController of the answer streaming now
  w.apiUrl = (path) => (w.options.endpoint || location.origin) + path;
  w.submit = () => submit(w);
  w.stop = () => {
    if (!w.controller) return false;
    w.controller.abort();
    return true;
  };
}

function submit(w) {
  const { input, log } = w.ui;
  const state = w.state;
  const question = input.value.trim();
  if (!question || w.controller) return;
  w.flushFeedback();
  const history = historyFor(state.messages, state.messages.length, question);
  let user = { role: "user", text: question };
  let bot = { role: "assistant", text: "", citations: [], status: { stage: "sending", message: "" } };
  state.messages.push(user, bot);
  input.value = "";
  state.draft = "";
  w.autosize();
  if (state.messages.length === 2) renderAll(w);
  else {
    log.appendChild(renderMessage(w, user));
    log.appendChild(renderMessage(w, bot));
  }
  log.scrollTop = log.scrollHeight;
  w.save();
  stream(w, question, history, bot);
}

/** The answer failed with ``message`` (none: the reader stopped it). The question goes back
 * into the box (unless the reader typed on): Enter asks it again. */
function fail(w, bot, message) {
  if (w.left) return;
  if (message) bot.error = message;
  else bot.stopped = true;
  const following = atEnd(w.ui.log); // before the box grows and the log shrinks
  // First, so that the log is scrolled to the error at the height the box leaves it.
  const at = w.state.messages.indexOf(bot);
  const asked = at > 0 && w.state.messages[at - 1].role === "user" ? w.state.messages[at - 1].text : "";
  const back = asked && !w.ui.input.value.trim();
  if (back) {
    w.ui.input.value = w.state.draft = asked;
    w.autosize();
  }
  updateMessage(w, bot, following);
  // Once: the error in the log is not a live region. That the question is back in the box is
  // said too: a screen-reader user typing the next one added it to the old.
  message = message || w.ui.t("stopped");
  announce(w.ui.announcer, back ? message + " " + w.ui.t("questionBack") : message);
}

/** What a failed request's reply says, in words (``data``: its JSON body, or {}; ``res``:
 * its status, headers and URL). The server's message on an English page; in another
 * language the widget's own words (the server words its errors in English): a question
 * too long, too many questions, or the status that failed. */
export function httpMessage(res, data, t = ENGLISH) {
  const message = ownWords(t) ? "" : (data && data.error) || "";
  if (res.status === 413 && !message) return t("tooLong");
  if (res.status === 429) {
    let wait = parseInt(res.headers.get("Retry-After") || "", 10);
    return (message || t("tooMany")) + (wait > 0 ? " " + t("tryAgainIn", { seconds: wait }) : "");
  }
  if (!(data && data.error) && (res.status === 404 || res.status === 405 || res.status === 501)) {
    // Not kb-qa (whose errors say what went wrong): nothing answers questions there.
    return t("noService", { url: res.url, status: res.status });
  }
  return message || t("serviceFailed", { status: res.status });
}

/** Whether the widget says things in its own words rather than the server's: the server
 * words its errors in English, a reader of a page in another language gets the widget's. */
function ownWords(t) {
  return t.lang !== "en";
}

// An answer's error codes (the `error` event's `code`) the widget words itself.
const ERROR_WORDS = { llm_error: "modelFailed", llm_timeout: "modelTimeout" };

/** What an answer's `error` event tells the reader: the server's words on an English page,
 * the widget's own in any other language (those of its code, else "The answer failed"). */
export function errorText(data, t = ENGLISH) {
  const message = (data && data.message) || "";
  if (message && !ownWords(t)) return message;
  return t(ERROR_WORDS[data && data.code] || "failed");
}

/** While the docs are still being indexed (a first `mkdocs serve` of a big site), the
 * question waits and is asked again: how far the index is, in words (of ``t``, strings.js). */
export function indexingText(data, t = ENGLISH) {
  const done = Number(data && data.embedded) || 0;
  const total = Number(data && data.to_embed) || 0;
  return total ? t("indexingOf", { done: done, total: total }) : t("indexing");
}

/** Seconds to wait before asking again, from a Retry-After header: 2 to 30, 10 if absent. */
export function retryDelay(header) {
  const wait = parseInt(header || "", 10);
  return Math.min(30, Math.max(2, wait > 0 ? wait : 10));
}

function pause(seconds, signal) {
  return new Promise(function (resolve, reject) {
    const timer = setTimeout(resolve, seconds * 1000);
    signal.addEventListener("abort", function () {
      clearTimeout(timer);
      reject(new Error("stopped"));
    }, { once: true });
  });
}

function stream(w, question, history, bot) {
  const t = w.ui.t;
  let ctl = new AbortController();
  w.controller = ctl;
  setBusy(w.ui, true);
  let timing = { submitted: performance.now() };
  w.timing = timing;
  let frameReq = 0;
  let schedule = function () {
    if (!frameReq) frameReq = requestAnimationFrame(function () {
      frameReq = 0;
      updateMessage(w, bot);
    });
  };
  let finished = false;
  let silent = false;
  let idle = 0;
  let alive = function () {
    clearTimeout(idle);
    idle = setTimeout(function () {
      silent = true;
      ctl.abort();
    }, SILENCE_SECONDS * 1000);
  };
  let handle = function (ev) {
    let data;
    try {
      data = JSON.parse(ev.data);
    } catch (e) {
      return;
    }
    if (ev.event === "status") {
      if (!timing.status) timing.status = performance.now();
      const said = statusText(bot.status);
      bot.status = data;
      // Kept under the answer: it may not hold an edit being indexed (mkdocs serve, --watch).
      if (data.stage === "updating") bot.updating = statusText(data);
      updateMessage(w, bot); // at once: the status line is the first sign of life
      const now = statusText(data);
      if (now && now !== said) announce(w.ui.announcer, now);
    } else if (ev.event === "delta") {
      if (!timing.delta) timing.delta = performance.now();
      // What could never be shown is not kept either (a model may stream megabytes).
      if (bot.text.length <= MAX_ANSWER_CHARS) bot.text += data.text || "";
      else bot.truncated = true;
      schedule();
    } else if (ev.event === "citations") {
      bot.citations = data.citations || [];
      schedule();
    } else if (ev.event === "done") {
      finished = true;
      timing.done = performance.now();
      if (typeof data.text === "string" && data.text) {
        if (data.text.length > MAX_ANSWER_CHARS + 1) bot.truncated = true;
        bot.text = data.text.slice(0, MAX_ANSWER_CHARS + 1);
      }
      bot.done = true;
      bot.mode = data.mode;
      // Sent back with a thumb: the server takes a rating only for an answer it gave.
      if (typeof data.answer_id === "string") bot.answerId = data.answer_id;
      updateMessage(w, bot);
      announce(w.ui.announcer, answerAnnouncement(bot, t));
    } else if (ev.event === "error") {
      finished = true;
      fail(w, bot, errorText(data, t));
    }
  };
  // The page's language goes with the question: a translated site answers from the reader's
  // own pages first.
  let post = function () {
    alive();
    return fetch(w.apiUrl("/api/ask"), {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ question: question, history: history, lang: pageLanguage() }),
      signal: ctl.signal,
      credentials: "omit",
      cache: "no-store",
    }).then(answered);
  };
  let answered = function (res) {
    if (!res.ok) return res.text().then(function (body) {
      let data = {};
      try {
        data = JSON.parse(body) || {};
      } catch (e) {
        data = {};
      }
      if (res.status === 503 && data.code === "indexing") {
        // Asked again when the server says to, until the index answers (or Stop).
        const already = bot.status && bot.status.stage === "indexing";
        bot.status = { stage: "indexing", message: indexingText(data, t) };
        updateMessage(w, bot);
        if (!already) announce(w.ui.announcer, statusText(bot.status));
        clearTimeout(idle);
        return pause(retryDelay(res.headers.get("Retry-After")), ctl.signal).then(post);
      }
      finished = true;
      fail(w, bot, httpMessage(res, data, t));
    });
    const type = res.headers.get("Content-Type") || "";
    if (!/event-stream|json/.test(type)) {
      // A web page (a proxy's, a static host's): nothing that answers questions is there.
      finished = true;
      fail(w, bot, t("webPage", { url: res.url }));
      return;
    }
    if (!res.body || !/event-stream/.test(type)) {
      return res.json().then(function (data) {
        finished = true;
        const text = jsonAnswerText(data);
        if (!text) {
          fail(w, bot, t("noAnswerSent"));
          return;
        }
        bot.text = text.slice(0, MAX_ANSWER_CHARS + 1);
        bot.truncated = text.length > MAX_ANSWER_CHARS + 1;
        bot.citations = data.citations || [];
        bot.done = true;
        updateMessage(w, bot);
        announce(w.ui.announcer, answerAnnouncement(bot, t));
      });
    }
    let reader = res.body.getReader();
    let decoder = new TextDecoder();
    let buffer = "";
    let pump = function () {
      return reader.read().then(function (chunk) {
        alive();
        if (chunk.done) {
          buffer += decoder.decode();
          parseSSE(buffer + "\n\n").events.forEach(handle);
          return;
        }
        let parsed = parseSSE(buffer + decoder.decode(chunk.value, { stream: true }));
        buffer = parsed.rest;
        parsed.events.forEach(handle);
        return pump();
      });
    };
    // A connection lost once the answer started (the server stopped) cut it off: it was reached.
    return pump().catch(function (err) {
      if (ctl.signal.aborted) throw err;
    });
  };
  post()
    .then(function () {
      if (!finished) fail(w, bot, t("cutOff"));
    })
    .catch(function (err) {
      if (finished) return;
      if (silent) fail(w, bot, t("silent"));
      else if (ctl.signal.aborted) fail(w, bot);
      else if (navigator.onLine === false) fail(w, bot, t("offline"));
      else {
        let where = w.options.endpoint || location.origin;
        // A browser reports a refused cross-origin call like a network failure.
        let elsewhere = where.indexOf(location.origin) !== 0;
        let hint = elsewhere ? " " + t("cors", { origin: location.origin }) : "";
        fail(w, bot, t("unreachable", { url: where, error: err && err.message ? err.message : "network error" }) + hint);
      }
    })
    .then(function () {
      clearTimeout(idle);
      if (w.controller === ctl) w.controller = null;
      setBusy(w.ui, false);
      w.save(true);
    });
}
