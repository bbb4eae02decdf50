/** The conversation in sessionStorage: it survives page loads in the same tab, not the tab. */

const KEPT_MESSAGES = 40;

/** {state, save(now)}: the saved state of ``key`` (or an empty one) and a debounced writer;
 * an answer the page was left in the middle of ends with the error ``interrupted``. */
export function createStore(key, interrupted) {
  // place: where the log was scrolled when a citation was followed ({count of messages, top})
  const state = { open: false, messages: [], draft: "", highlighted: 0, place: null };
  try {
    const saved = JSON.parse(sessionStorage.getItem(key) || "null");
    if (saved && Array.isArray(saved.messages)) {
      state.open = !!saved.open;
      state.draft = String(saved.draft || "");
      if (saved.place && typeof saved.place.top === "number") state.place = saved.place;
      state.messages = saved.messages.map((m) => {
        // An answer still streaming when the page was left cannot resume.
        if (m.role === "assistant" && !m.done && !m.error && !m.stopped) m.error = interrupted;
        return m;
      });
    }
  } catch (e) {
    /* storage blocked or corrupt: start empty */
  }
  let timer = 0;
  const write = () => {
    try {
      // Keys starting with "_" hold DOM nodes and other things of this page only.
      const messages = state.messages.map((m) => {
        const copy = {};
        for (const k in m) if (k[0] !== "_") copy[k] = m[k];
        return copy;
      });
      sessionStorage.setItem(key, JSON.stringify({ open: state.open, draft: state.draft, place: state.place, messages: messages.slice(-KEPT_MESSAGES) }));
    } catch (e) {
      /* quota or privacy mode: the conversation just does not survive a reload */
    }
  };
  const save = (now) => {
    clearTimeout(timer);
    if (now) write();
    else timer = setTimeout(write, 300);
  };
  return { state: state, save: save };
}
