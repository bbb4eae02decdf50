/** Opening a citation: on this page (scroll and highlight), through Material's instant
 * navigation, or with a plain page load; and highlighting the passage a URL names. */
import { el } from "./dom.js";
import { focusPassage, headingOf, highlight, scrollToMarks } from "./highlight.js";
import { HL_PARAM } from "./links.js";
import { dock, panelCovers } from "./panel.js";

function anchorOf(url) {
  try {
    return decodeURIComponent(url.hash.slice(1));
  } catch (e) {
    return url.hash.slice(1);
  }
}

/** Highlight a passage; the open panel docks beside the page rather than cover it. */
export function showPassage(w, anchor, spec, smooth) {
  const marks = highlight(anchor, spec, smooth);
  w.state.highlighted = marks.length;
  if (!panelCovers(w.ui, marks)) return;
  // The reader came to check the passage and may check the next one: keep the conversation in
  // view beside the page. Only a window too narrow for both hides the panel (the shortcut or
  // the launcher brings it back). Keyboard focus goes to the passage, else to the launcher:
  // it must not fall back to the top of the page with the panel.
  if (!dock(w, true)) {
    w.setOpen(false, false);
    if (!focusPassage(marks)) w.ui.launcher.focus({ preventScroll: true });
    return;
  }
  const heading = headingOf(anchor);
  requestAnimationFrame(() => scrollToMarks(marks, smooth, heading)); // the page reflowed beside the panel
}

/** Follow a citation link ``href`` the way this site navigates. */
export function openCitation(w, href) {
  const url = new URL(href);
  const spec = url.searchParams.get(HL_PARAM);
  if (url.origin === location.origin && url.pathname === location.pathname) {
    history.pushState(null, "", url.href);
    showPassage(w, anchorOf(url), spec, true);
    return;
  }
  w.save(true);
  if (url.origin === location.origin && window.document$ && document.querySelector("[data-md-component=container]")) {
    // Material's instant navigation handles clicks on light-DOM links inside <body>.
    const a = el("a", { href: url.href, hidden: true });
    document.body.appendChild(a);
    a.click();
    a.remove();
    return;
  }
  location.href = url.href;
}

/** Per page: highlight the passage named in the URL (after Material scrolled to #anchor). */
export function onPage(w) {
  const url = new URL(location.href);
  const spec = url.searchParams.get(HL_PARAM);
  if (!spec) return;
  setTimeout(() => showPassage(w, anchorOf(url), spec, false), 30);
}
