/** Reader feedback: a thumb up or down on an answer, with an optional reason, sent once. */

// The server keeps the start of a rated answer only (kb_qa.owners.feedback.STORED_ANSWER_CHARS).
const STORED_ANSWER_CHARS = 2000;

function questionOf(messages, m) {
  for (let i = messages.indexOf(m) - 1; i >= 0; i--) if (messages[i].role === "user") return messages[i].text;
  return "";
}

/** The start of an answer the server keeps, never half of a character: a cut through an
 * emoji's surrogate pair is not valid text, and the server refused the rating (400). The
 * server cuts the same way (kb_qa.owners.feedback.answer_digest). */
export function answerStart(text) {
  let end = Math.min(text.length, STORED_ANSWER_CHARS);
  const last = text.charCodeAt(end - 1);
  if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** POST /api/feedback for answer ``m`` with the id its done event carried (best effort: the
 * reader is never told it failed). An answer without one (a stopped or failed answer, or one
 * kept from before the server signed answers) cannot be rated. */
export function sendFeedback(w, m, reason) {
  if (!m.rating || m.feedbackSent || !m.answerId) return;
  m.feedbackSent = true;
  w.save();
  const body = { answer_id: m.answerId, question: questionOf(w.state.messages, m), answer: answerStart(m.text || ""), citations: m.citations || [], rating: m.rating };
  if (reason) body.reason = reason;
  try {
    fetch(w.apiUrl("/api/feedback"), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      keepalive: true,
      credentials: "omit",
    }).catch(() => {});
  } catch (e) {
    /* feedback is best effort */
  }
}

/** A thumb pressed but no reason sent yet still counts (on close, new question, page exit). */
export function flushFeedback(w) {
  w.state.messages.forEach((m) => {
    if (m.rating && !m.feedbackSent) sendFeedback(w, m, "");
  });
}
