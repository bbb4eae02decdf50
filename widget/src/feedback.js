/** Reader feedback: a thumb up or down on an answer, with an optional reason, sent once. */

// The server keeps the start of a rated answer only (kb_qa.owners.feedback.STORED_ANSWER_CHARS).
const STORED_ANSWER_CHARS = 2000;

function questionOf(messages, m) {
  for (let i = messages.indexOf(m) - 1; i >= 0; i--) if (messages[i].role === "user") return messages[i].text;
  return "";
}

/** POST /api/feedback for answer ``m`` with the id its done event carried (best effort: the
 * reader is never told it failed). An answer without one (a stopped or failed answer, or one
 * kept from before the server signed answers) cannot be rated. */
export function sendFeedback(w, m, reason) {
  if (!m.rating || m.feedbackSent || !m.answerId) return;
  m.feedbackSent = true;
  w.save();
  const body = { answer_id: m.answerId, question: questionOf(w.state.messages, m), answer: (m.text || "").slice(0, STORED_ANSWER_CHARS), citations: m.citations || [], rating: m.rating };
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
