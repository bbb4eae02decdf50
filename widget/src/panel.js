/** The panel: launcher, dialog, question box, in a Shadow DOM; opening, closing, the focus trap,
 * the keyboard shortcut, and docking beside the page while a cited passage is shown (docked,
 * the panel is not modal: no focus trap). */
import { announce, el, icon, iconButton, touchOnly } from "./dom.js";
import { clearHighlights } from "./highlight.js";
import { HL_PARAM } from "./links.js";
import { ariaShortcut, matchesShortcut, shortcutLabel } from "./shortcut.js";

export const IDS = { panel: "kbq-panel", title: "kbq-title", input: "kbq-input", tip: "kbq-tip" };
const DOCKED = "data-kb-qa-docked"; // on <html>: kb-qa.css makes room for the docked panel
const OPEN = "data-kb-qa-open"; // on <html> while the panel is open: kb-qa.css
const MIN_PAGE_WIDTH = 600; // narrower than this beside the panel, the page is not readable
// Where the panel takes the whole screen (kb-qa.css): a phone, upright or on its side.
const FULL_SCREEN = "(max-width: 600px), (max-height: 500px) and (pointer: coarse)";

/** The widget's elements (nothing is shown until the stylesheet has loaded). */
export function buildPanel(options, shortcut, apple) {
  const t = options.t;
  const host = el("div", { id: "kb-qa", "data-kb-qa-host": "" });
  const shadow = host.attachShadow({ mode: "open" });
  const keys = shortcutLabel(shortcut, apple);
  const launcher = el(
    "button",
    {
      type: "button",
      class: "kbq-launcher",
      "aria-haspopup": "dialog",
      "aria-expanded": "false",
      "aria-controls": IDS.panel,
      "aria-keyshortcuts": ariaShortcut(shortcut),
      "aria-label": options.title + " (" + keys + ")",
      title: options.title + " (" + keys + ")",
    },
    [icon("chat"), el("span", { class: "kbq-launcher-label", text: options.title })]
  );
  const newButton = iconButton("reset", t("newConversation"));
  const closeButton = iconButton("close", t("close"));
  // The log is not a live region: its text changes every frame while an answer streams.
  // What a screen reader should hear once (status, finished answer, error) goes to ``announcer``.
  const log = el("div", { class: "kbq-log", role: "log", "aria-live": "off", "aria-label": t("conversation"), tabindex: "-1" });
  const input = el("textarea", { id: IDS.input, class: "kbq-input", dir: "auto", rows: "1", placeholder: options.placeholder, "aria-label": t("question"), enterkeyhint: "send" });
  const sendButton = el("button", { type: "submit", class: "kbq-send", "aria-label": t("sendQuestion"), title: t("send") }, [icon("send")]);
  const form = el("form", { class: "kbq-form" }, [input, sendButton]);
  const foot = el("p", { class: "kbq-foot" }, [t("disclaimer"), el("span", { class: "kbq-keys", text: " " + t("keys", { keys: keys }) })]);
  const panel = el("div", { id: IDS.panel, class: "kbq-panel", role: "dialog", "aria-modal": "true", "aria-labelledby": IDS.title, hidden: true }, [
    el("div", { class: "kbq-head" }, [el("h2", { id: IDS.title, class: "kbq-title", text: options.title }), newButton, closeButton]),
    log,
    form,
    foot,
  ]);
  const tip = el("div", { id: IDS.tip, class: "kbq-tip", role: "tooltip", hidden: true });
  // In the frame, not the panel: it speaks after the panel closed too (a passage highlighted).
  const announcer = el("div", { class: "kbq-sr", role: "status", "aria-live": "polite", "aria-atomic": "true" });
  const frame = el("div", { class: "kbq" }, [launcher, panel, tip, announcer]);
  if (t.foreign) {
    // An Arabic page's widget speaks English: said so, and laid out left to right (its
    // full stops jumped to the line's start). What the reader asks and the docs' words
    // quoted keep the page's language (messages.js).
    frame.setAttribute("lang", t.lang);
    frame.setAttribute("dir", "ltr");
  } else if (t.lang === "ar" || document.dir === "rtl") {
    // The host's `all: initial` sets direction back to ltr: the widget's Arabic (or an owner's
    // Hebrew labels on a right-to-left page) had its full stops at the line's start.
    frame.setAttribute("dir", "rtl");
  }
  // Through CSSOM, not a style attribute: a site's `style-src 'self'` refuses the attribute.
  frame.style.visibility = "hidden";
  const styleLink = el("link", { rel: "stylesheet", href: options.css });
  const show = () => frame.style.removeProperty("visibility");
  styleLink.addEventListener("load", show);
  styleLink.addEventListener("error", show);
  shadow.appendChild(styleLink);
  shadow.appendChild(frame);
  return { host, shadow, frame, launcher, newButton, closeButton, log, input, sendButton, form, foot, panel, tip, announcer, t };
}

/**
 * Open/close behaviour on ``w`` (the widget: options, shortcut, state, save, ui, and the
 * renderAll / submit / hideTip / flushFeedback / stop functions the other modules add).
 */
export function initPanel(w) {
  const ui = w.ui;
  let lastFocus = null;
  let backWatcher = null;

  // On a phone the open panel is the whole screen and reads as a page of its own: Android's
  // back button (or gesture) closes it, as it closes the browser's own dialogs, instead of
  // leaving the page behind it. A CloseWatcher, where the browser has one: no history entry
  // for the site's own navigation (Material's instant pages) to trip over.
  const watchBack = (open) => {
    if (backWatcher) backWatcher.destroy();
    backWatcher = null;
    if (!open || typeof window.CloseWatcher !== "function" || !window.matchMedia || !matchMedia(FULL_SCREEN).matches) return;
    try {
      backWatcher = new window.CloseWatcher();
    } catch (e) {
      return; // refused (too many without a user's gesture): the close button still works
    }
    backWatcher.addEventListener("close", () => {
      backWatcher = null;
      w.setOpen(false);
    });
  };

  w.setOpen = (open, focusInput) => {
    if (w.state.open === open && !ui.panel.hidden === open) return;
    w.state.open = open;
    ui.panel.hidden = !open;
    ui.launcher.hidden = open;
    ui.launcher.setAttribute("aria-expanded", String(open));
    document.documentElement.toggleAttribute(OPEN, open); // a phone's page stays put (kb-qa.css)
    w.hideTip();
    watchBack(open);
    if (open) {
      const active = document.activeElement;
      if (active && active !== ui.host && active !== document.body) lastFocus = active;
      w.renderAll();
      w.autosize();
      // On a touch screen the reader comes back from a citation to read on: the conversation
      // where they left it, and no keyboard over it (focus on the log, not the question box).
      const place = w.state.place; // where a citation was followed from (main.js), once
      w.state.place = null;
      const back = touchOnly() && w.state.messages.length > 0;
      if (back && place && place.count === w.state.messages.length) ui.log.scrollTop = place.top;
      if (back && focusInput !== false) ui.log.focus({ preventScroll: true });
      else if (focusInput !== false) ui.input.focus(); // at once: the next keystroke belongs here
    } else {
      dock(w, false);
      w.flushFeedback();
      if (focusInput !== false) (lastFocus && document.contains(lastFocus) ? lastFocus : ui.launcher).focus({ preventScroll: true });
      lastFocus = null;
    }
    w.save();
  };

  // Docked only while open (setOpen undocks).
  const docked = () => ui.panel.classList.contains("kbq-docked");
  // A window that narrows (a tablet turned upright) leaves the page too little room beside the
  // docked panel: it floats again, or fills a phone's screen, over the page and its passage.
  addEventListener("resize", () => docked() && dock(w, true));

  w.autosize = () => {
    ui.input.style.height = "auto";
    if (ui.input.scrollHeight) ui.input.style.height = Math.min(ui.input.scrollHeight, 160) + "px";
  };

  // Keystrokes typed in the widget stay in it: Material (and other sites) bind single keys such
  // as "s", "/", "f", "n" and "p" on window and would see them, since document.activeElement is
  // the shadow host, not our textarea.
  ["keydown", "keyup", "keypress"].forEach((type) => ui.host.addEventListener(type, (ev) => ev.stopPropagation()));

  ui.frame.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") {
      ev.preventDefault();
      if (!ui.tip.hidden) w.hideTip();
      else w.setOpen(false);
    } else if (matchesShortcut(ev, w.shortcut)) {
      ev.preventDefault();
      w.setOpen(!w.state.open);
    } else if (ev.key === "Tab" && w.state.open && !docked()) {
      trapFocus(ui, ev); // docked beside the page, the panel is not modal: Tab goes on into it
    }
  });

  // Whether a dialog of the site was open when the key went down, before the site's own
  // handlers (Material's search closes on Escape) ran.
  let siteHadIt = false;
  window.addEventListener("keydown", (ev) => {
    siteHadIt = ev.key === "Escape" && siteDialogOpen(ev.composedPath ? ev.composedPath() : []);
  }, true);
  window.addEventListener("keydown", (ev) => {
    // A site that handles the same keys first (calls preventDefault) keeps them. Keys typed in
    // the widget never get here (the host stops them): focus is on the page.
    if (ev.defaultPrevented) return;
    const path = ev.composedPath ? ev.composedPath() : [ev.target];
    const t = path[0] || ev.target; // inside a site's shadow root too (Zensical's search)
    const typing = t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
    if (ev.key === "Escape" && !typing && docked() && !siteHadIt) {
      // The docked panel stays open beside the page the reader went to: Esc closes it there
      // too, once the site's own dialogs (its search) have had theirs, and the reader's place
      // in the page keeps focus (it jumped to the launcher, at the window's corner).
      w.setOpen(false, false);
      return;
    }
    if (!matchesShortcut(ev, w.shortcut)) return;
    const sc = w.shortcut;
    if (!(sc.ctrl || sc.meta || sc.alt) && typing) return;
    ev.preventDefault();
    if (w.state.open && document.activeElement !== ui.host) ui.input.focus(); // back to the question
    else w.setOpen(!w.state.open);
  });

  ui.launcher.addEventListener("click", () => w.setOpen(true));
  ui.closeButton.addEventListener("click", () => w.setOpen(false));
  ui.newButton.addEventListener("click", () => {
    w.stop();
    w.flushFeedback();
    w.state.messages = [];
    w.renderAll();
    w.save(true);
    ui.input.focus();
    announce(ui.announcer, ui.t("newConversation"));
    // The old answer's passage goes too, from the page and from the URL.
    clearHighlights();
    const url = new URL(location.href);
    if (url.searchParams.has(HL_PARAM)) {
      url.searchParams.delete(HL_PARAM);
      history.replaceState(history.state, "", url);
    }
  });

  ui.input.value = w.state.draft;
  ui.input.addEventListener("input", () => {
    w.state.draft = ui.input.value;
    w.autosize();
    w.save();
  });
  ui.input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing && ev.keyCode !== 229) {
      ev.preventDefault();
      w.submit();
    }
  });
  // The button sends, then stops the answer; not within a double-click (its second click came
  // to Stop and stopped the question at once, or asked it again once Stop put it back).
  let clicked = -Infinity; // a first click soon after the page loaded (its timeStamp < 500) counts
  ui.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (ev.timeStamp - clicked < 500) return;
    clicked = ev.timeStamp;
    if (!w.stop()) w.submit();
  });
}

/** Whether the key came from, or the page shows, a dialog of the site's own (Material's or
 * Zensical's search): Esc is theirs then. */
function siteDialogOpen(path) {
  const modal = (n) => n && n.nodeType === 1 && (n.tagName === "DIALOG" || n.getAttribute("aria-modal") === "true");
  if (path.some(modal)) return true;
  return !!document.querySelector('input[data-md-toggle="search"]:checked, dialog[open]');
}

function trapFocus(ui, ev) {
  const list = Array.prototype.filter.call(ui.panel.querySelectorAll("button, [href], textarea, input, [tabindex]:not([tabindex='-1'])"), (n) => !n.disabled && n.getClientRects().length > 0);
  if (!list.length) return;
  const active = ui.shadow.activeElement;
  const at = list.indexOf(active);
  // Focus on something of the panel's own that is not in the list (a code block or table
  // the browser lets the keyboard scroll) moves on in the browser's order: the panel opens
  // with its header and ends with the question box, so that never leaves it.
  const outside = at === -1 && !(active && ui.panel.contains(active));
  if (ev.shiftKey && (at === 0 || outside)) {
    ev.preventDefault();
    list[list.length - 1].focus();
  } else if (!ev.shiftKey && (at === list.length - 1 || outside)) {
    ev.preventDefault();
    list[0].focus();
  }
}

/** The send button as Send, or as Stop while an answer streams. */
export function setBusy(ui, busy) {
  const t = ui.t;
  const b = ui.sendButton;
  b.replaceChild(icon(busy ? "stop" : "send"), b.firstChild);
  b.setAttribute("aria-label", t(busy ? "stopAnswering" : "sendQuestion"));
  b.title = t(busy ? "stop" : "send");
  b.classList.toggle("kbq-busy", busy);
}

/** True when the open panel hides part of the highlighted passage. */
export function panelCovers(ui, marks) {
  if (ui.panel.hidden || !marks.length) return false;
  const p = ui.panel.getBoundingClientRect();
  return marks.some((m) => {
    const r = m.getBoundingClientRect();
    return r.right > p.left && r.left < p.right; // scrolling cannot uncover it
  });
}

/**
 * Dock the open panel at the right edge, the page narrowed beside it (true), or float it again
 * (false, or a window too narrow to show the page next to the panel). Returns whether it docked.
 */
export function dock(w, on) {
  const root = document.documentElement;
  const width = Math.min(440, Math.round(innerWidth * 0.4));
  on = on && innerWidth - width >= MIN_PAGE_WIDTH;
  if (on) root.style.setProperty("--kb-qa-dock-width", width + "px"); // read only while docked
  root.toggleAttribute(DOCKED, on);
  w.ui.panel.classList.toggle("kbq-docked", on);
  w.ui.panel.setAttribute("aria-modal", !on); // docked beside the page, not over it
  return on;
}
