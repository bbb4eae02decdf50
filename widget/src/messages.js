/** The conversation in the log: questions, answers (Markdown with citation chips), sources,
 * copy buttons and the thumbs-up/down feedback form. */
import { announce, copyText, el, flashDone, iconButton, touchOnly } from "./dom.js";
import { citationHref } from "./links.js";
import { parseBlocks, renderBlocks, withoutBidi } from "./markdown.js";
import { stripMarkdown } from "./passage.js";
import { ENGLISH, pageLanguage } from "./strings.js";

/** The most of one answer the widget keeps and lays out; the rest is dropped with a note
 * ("truncated"). A little over the server's max_reply_chars (20,000), so its own note where
 * it cut shows. */
export const MAX_ANSWER_CHARS = 20500;

/** The most of a finished answer a screen reader is read at once; the log holds all of it. */
export const ANNOUNCED_CHARS = 2000;

/** A status event's message as the status line shows it: "Searching your sources…". */
export function statusText(st) {
  return st && st.message ? st.message.replace(/(…|\.\.\.)?$/, "…") : "";
}

/** What a screen reader hears once answer ``m`` has arrived: its text as plain text, without
 * the citation numbers, then how many sources it cites (in the words of ``t``, strings.js). */
export function answerAnnouncement(m, t = ENGLISH) {
  let text = stripMarkdown(withoutBidi(m.text).slice(0, MAX_ANSWER_CHARS).replace(/[ \t]*\[\d{1,3}\]/g, ""))
    .replace(/\s+/g, " ")
    .trim();
  if (text.length > ANNOUNCED_CHARS) text = text.slice(0, ANNOUNCED_CHARS).replace(/\s+\S*$/, "") + " " + t("rest");
  const n = (m.citations || []).length;
  return [text || t("noAnswer"), n ? t("sourceCount", { n: n }) : ""].filter(Boolean).join(" ");
}

export function renderAll(w) {
  const { log, input, t } = w.ui;
  const state = w.state;
  log.textContent = "";
  if (!state.messages.length) {
    let empty = el("div", { class: "kbq-empty" }, [el("p", { text: t("intro") })]);
    // A short window (text zoomed to 400%) has no room for the footer: its words are here.
    const copy = w.ui.foot.cloneNode(true);
    copy.className = "kbq-foot-copy";
    empty.appendChild(copy);
    if (w.options.suggested.length) {
      let list = el("ul", { class: "kbq-suggest", "aria-label": t("suggested") });
      w.options.suggested.forEach(function (q) {
        let b = el("button", { type: "button", class: "kbq-chip", text: q });
        b.addEventListener("click", function () {
          input.value = q;
          w.submit();
        });
        list.appendChild(el("li", null, [b]));
      });
      empty.appendChild(list);
    }
    log.appendChild(empty);
    return;
  }
  state.messages.forEach(function (m) {
    m._node = null;
    log.appendChild(renderMessage(w, m));
  });
  const last = state.messages[state.messages.length - 1];
  showStart(log, last._node);
}

/**
 * Scroll the log to its end, or, when the latest answer is taller than the log, so that its
 * question stays at the top: the reader starts reading an answer at its start. A question
 * that would push its answer (or the error it got) below the middle of the log, a long
 * paste, gives way to the answer's start.
 */
export function showStart(log, node) {
  const end = log.scrollHeight - log.clientHeight;
  const question = node.classList.contains("kbq-bot") && node.previousElementSibling ? node.previousElementSibling : node;
  const offset = (n) => n.getBoundingClientRect().top - log.getBoundingClientRect().top + log.scrollTop;
  let top = offset(question);
  if (question !== node && offset(node) - top > log.clientHeight / 2) top = offset(node);
  log.scrollTop = Math.max(0, Math.min(end, top - 8));
}

export function renderMessage(w, m) {
  const t = w.ui.t;
  if (m.role === "user") {
    // Said before each question, seen by no one: where a turn starts is not only a look.
    const said = el("span", { class: "kbq-said", text: t("question") + ": " });
    m._node = el("div", { class: "kbq-msg kbq-user" }, [said, el("div", { class: "kbq-bubble", dir: "auto", lang: pageLanguage() || null, text: m.text })]);
    return m._node;
  }
  if (!m._node) {
    m._blocks = null;
    m._node = el("div", { class: "kbq-msg kbq-bot" });
    m._status = el("p", { class: "kbq-status" }); // seen only: chat.js announces it
    m._statusKey = m._extraKey = null;
    m._answer = el("div", { class: "kbq-answer", lang: pageLanguage() || null });
    m._extra = el("div", { class: "kbq-extra" });
    m._node.appendChild(m._status);
    m._node.appendChild(m._answer);
    m._node.appendChild(m._extra);
  }
  let streaming = !m.done && !m.error && !m.stopped;
  m._node.setAttribute("aria-busy", String(streaming));
  // Status line
  let st = streaming ? m.status : null;
  m._status.hidden = !st;
  const statusKey = st ? (st.stage || "") + "\n" + (st.message || "") : "";
  if (st && statusKey !== m._statusKey) {
    m._statusKey = statusKey;
    m._status.setAttribute("data-stage", st.stage || "");
    m._status.textContent = "";
    m._status.appendChild(el("span", { class: "kbq-spin", "aria-hidden": "true" }));
    m._status.appendChild(document.createTextNode(statusText(st)));
  }
  // Answer text
  const byNumber = {};
  (m.citations || []).forEach(function (c) {
    byNumber[c.number] = c;
  });
  // Once the answer ended, a marker naming no source (cut off before its sources came) goes.
  const ctx = {
    base: w.options.root,
    origin: location.origin,
    site: w.options.siteUrl.replace(/\/?$/, "/"),
    known: (n) => !!byNumber[n],
    cite: (n) => (streaming || byNumber[n]) && citeChip(w, n, byNumber[n]),
    copy: (text) => codeCopyButton(w, text),
  };
  const truncated = renderAnswer(m, ctx, (m.citations || []).length + ":" + streaming) || m.truncated;
  if (streaming && m.text) m._answer.appendChild(el("span", { class: "kbq-caret", "aria-hidden": "true" }));
  // Sources, errors, actions: rebuilt only when what they show changed (the feedback thumbs
  // and reason form come back through here with the rating or the feedback sent).
  const extraKey = JSON.stringify([truncated, !!m.done, !!m.text, !!m.stopped, m.error || "", m.updating || "", (m.citations || []).map((c) => c.number + " " + headingPath(c, t) + " " + citationHref(c, w.links)), m.rating || "", !!m.feedbackSent]);
  if (extraKey === m._extraKey) return m._node;
  m._extraKey = extraKey;
  m._extra.textContent = "";
  if (truncated) m._extra.appendChild(el("p", { class: "kbq-note kbq-truncated", text: t("truncated") }));
  if (m.updating && m.done) m._extra.appendChild(el("p", { class: "kbq-note kbq-updating", text: m.updating }));
  if (m.done && !m.text) m._extra.appendChild(el("p", { class: "kbq-note", text: t("noAnswer") }));
  if (m.stopped) m._extra.appendChild(el("p", { class: "kbq-note", text: t("stopped") }));
  if (m.error) m._extra.appendChild(el("p", { class: "kbq-error", text: m.error })); // announced once, by chat.js
  if (m.citations && m.citations.length) m._extra.appendChild(sourcesList(w, m.citations));
  if (m.done && m.text) m._extra.appendChild(actions(w, m));
  return m._node;
}

/**
 * Lay out the answer's Markdown incrementally: the blocks it had at the last frame stay in
 * the DOM as they were, and only blocks that changed (while streaming, the last one) and new
 * ones are rendered again, so a long answer costs each frame what its last block costs.
 * At most MAX_ANSWER_CHARS characters and MAX_INLINE_ELEMENTS inline elements are laid out;
 * returns true when the answer was cut to that.
 */
function renderAnswer(m, ctx, context) {
  const text = withoutBidi((m.text || "").slice(0, MAX_ANSWER_CHARS));
  const blocks = parseBlocks(text);
  const keys = blocks.map((b) => JSON.stringify(b));
  let old = m._blocks && m._blocks.context === context ? m._blocks : null;
  if (!old) {
    m._answer.textContent = "";
    old = { context: context, keys: [], nodes: [], laid: [] };
  }
  const caret = m._answer.querySelector(":scope > .kbq-caret");
  if (caret) caret.remove();
  let same = 0;
  while (same < keys.length && same < old.keys.length && keys[same] === old.keys[same]) same++;
  for (let i = old.nodes.length - 1; i >= same; i--) old.nodes[i].remove();
  const nodes = old.nodes.slice(0, same);
  const laid = old.laid.slice(0, same);
  ctx.laid = same ? laid[same - 1] : 0;
  ctx.truncated = false;
  for (let i = same; i < blocks.length && !ctx.truncated; i++) {
    const frag = renderBlocks([blocks[i]], document, ctx);
    const node = frag.firstChild;
    m._answer.appendChild(frag);
    nodes.push(node);
    laid.push(ctx.laid);
  }
  m._blocks = { context: context, keys: keys.slice(0, nodes.length), nodes: nodes, laid: laid };
  return ctx.truncated || (m.text || "").length > MAX_ANSWER_CHARS || nodes.length < blocks.length;
}

/** Re-render a message in place; a reader at the end of the log keeps seeing it from its start. */
export function updateMessage(w, m, following = atEnd(w.ui.log)) {
  if (!m._node || !m._node.parentNode) renderAll(w);
  else renderMessage(w, m);
  if (following) showStart(w.ui.log, m._node);
}

/** Whether the reader is at the end of the log (following the conversation as it comes). */
export function atEnd(log) {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 48;
}

export function headingPath(c, t = ENGLISH) {
  return withoutBidi((c.heading_path && c.heading_path.length ? c.heading_path : [c.path || c.url || t("source")]).join(" › "));
}

function citeChip(w, n, c) {
  const t = w.ui.t;
  const href = c ? citationHref(c, w.links) : null;
  let chip = el(href ? "a" : "span", {
    class: "kbq-cite",
    href: href,
    "data-n": String(n),
    "aria-label": c ? t("sourceN", { n: n }) + ": " + headingPath(c, t) : t("sourceN", { n: n }),
    tabindex: href ? null : "-1",
  }, [String(n)]);
  if (c) {
    chip._citation = c;
    chip._href = href;
  }
  return el("sup", { class: "kbq-sup" }, [chip]);
}

function sourcesList(w, citations) {
  const t = w.ui.t;
  let list = el("ol", { class: "kbq-sources", "aria-label": t("sources") });
  citations.forEach(function (c) {
    const href = citationHref(c, w.links);
    let link = el(href ? "a" : "span", { class: "kbq-source", href: href }, [
      el("span", { class: "kbq-source-n", text: String(c.number) }),
      el("span", { class: "kbq-source-t", dir: "auto", text: headingPath(c, t) }),
    ]);
    link._citation = c;
    link._href = href;
    list.appendChild(el("li", null, [link]));
  });
  return list;
}

function codeCopyButton(w, text) {
  const t = w.ui.t;
  let b = iconButton("copy", t("copyCode"), "kbq-copy-code");
  b.addEventListener("click", function () {
    copyText(text).then(function () {
      flashDone(b, t("copied"));
      announce(w.ui.announcer, t("codeCopied"));
    }, function () {});
  });
  return b;
}

function answerAsText(w, m) {
  const t = w.ui.t;
  let out = withoutBidi(m.text); // as shown: nothing pastes reversed
  if (m.citations && m.citations.length) {
    out += "\n\n" + t("sourcesCopied") + "\n" + m.citations.map(function (c) {
      return "[" + c.number + "] " + headingPath(c, t) + " — " + (citationHref(c, w.links) || c.url);
    }).join("\n");
  }
  return out;
}

function actions(w, m) {
  const t = w.ui.t;
  let row = el("div", { class: "kbq-actions" });
  let copy = iconButton("copy", t("copyAnswer"));
  copy.addEventListener("click", function () {
    copyText(answerAsText(w, m)).then(function () {
      flashDone(copy, t("copied"));
      announce(w.ui.announcer, t("answerCopied"));
    }, function () {});
  });
  row.appendChild(copy);
  if (m.feedbackSent) {
    row.appendChild(el("span", { class: "kbq-note", text: t("thanks") }));
    return row;
  }
  // The server takes a rating only with the id it gave the answer (a conversation kept from
  // before it signed answers has none): no thumbs that could not be sent.
  if (!m.answerId) return row;
  ["up", "down"].forEach(function (rating) {
    let b = iconButton(rating, t(rating === "up" ? "helpful" : "notHelpful"), "kbq-rate");
    b.setAttribute("aria-pressed", String(m.rating === rating));
    b.addEventListener("click", function () {
      m.rating = rating;
      w.save();
      renderMessage(w, m);
      // Focus the reason box, except on a touch screen: there it brought the keyboard up over
      // the answer for a one-tap rating.
      let box = m._node.querySelector(".kbq-reason input");
      if (box && !touchOnly()) box.focus();
    });
    row.appendChild(b);
  });
  let wrapRow = el("div", null, [row]);
  if (m.rating) {
    let reason = el("input", { type: "text", maxlength: "1000", "aria-label": t("reason"), placeholder: t(m.rating === "up" ? "whatHelped" : "whatWasWrong") });
    let reasonForm = el("form", { class: "kbq-reason" }, [reason, el("button", { type: "submit", class: "kbq-small", text: t("send") })]);
    reasonForm.addEventListener("submit", function (ev) {
      ev.preventDefault();
      w.sendFeedback(m, reason.value.trim());
      renderMessage(w, m);
      if (!touchOnly()) w.ui.input.focus();
    });
    wrapRow.appendChild(reasonForm);
  }
  return wrapRow;
}

