/** Opening a citation: on this page (scroll and highlight), through Material's instant
 * navigation, or with a plain page load; and highlighting the passage a URL names. */
import { announce, el } from "./dom.js";
import { clearHighlights, focusPassage, headingOf, highlight, scrollToMarks } from "./highlight.js";
import { HL_PARAM } from "./links.js";
import { dock, panelCovers } from "./panel.js";

function anchorOf(url) {
  try {
    return decodeURIComponent(url.hash.slice(1));
  } catch (e) {
    return url.hash.slice(1);
  }
}

/** Highlight a passage. The open panel docks beside the page: it neither covers the passage
 * nor stays a modal dialog over a page the reader came to read. A screen reader is told where
 * the passage is. */
export function showPassage(w, anchor, spec, smooth) {
  const marks = highlight(anchor, spec, smooth);
  w.state.highlighted = marks.length;
  if (!marks.length) return;
  const heading = headingOf(anchor);
  const where = heading ? heading.textContent.replace(/[¶#]\s*$/, "").trim() : document.title;
  announce(w.ui.announcer, w.ui.t("passageShown", { where: where }));
  if (w.ui.panel.hidden) return;
  // Focus on the page (a citation opened another page): it goes to the passage. In the
  // panel (a citation of this page), it stays for the next citation.
  const inPanel = document.activeElement === w.ui.host;
  // The reader came to check the passage and may check the next one: keep the conversation in
  // view beside the page. Only a window too narrow for both hides the panel (the shortcut or
  // the launcher brings it back) when it covers the passage; keyboard focus goes to the passage
  // then, else to the launcher: it must not fall back to the top of the page with the panel.
  if (!dock(w, true)) {
    if (!panelCovers(w.ui, marks) && inPanel) return;
    w.setOpen(false, false);
    if (!focusPassage(marks)) w.ui.launcher.focus({ preventScroll: true });
    return;
  }
  if (!inPanel) focusPassage(marks);
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

let pending = 0;

/** Per page: highlight the passage named in the URL (after Material scrolled to #anchor), or
 * none when it names none (Back from a citation). The URL is read when it is done: Material
 * and Back may both ask for it. */
export function onPage(w) {
  clearTimeout(pending);
  pending = setTimeout(() => {
    const url = new URL(location.href);
    const spec = url.searchParams.get(HL_PARAM);
    if (spec) showPassage(w, anchorOf(url), spec, false);
    else clearHighlights();
  }, 30);
}
