/** The tooltip of a citation chip or source: its heading path and a preview of the passage. */
import { el } from "./dom.js";
import { headingPath } from "./messages.js";
import { withoutBidi } from "./markdown.js";
import { stripMarkdown } from "./passage.js";

const PREVIEW_CHARS = 420;
// Lines that start a row of their own; any other line continues the one before it.
const ROW = /^\s*(\||[-*+]\s|\d{1,9}[.)]\s|>)/;
const TITLE = /^\s*(#{1,6}\s|!!!|\?\?\?|===)/;
const UNDERLINE = /^ {0,3}(=+|-+)\s*$/; // a setext heading's: "Misfire handling" over "-----"
const FENCE = /^\s*(```|~~~)/;

/**
 * The passage as a reader would say it: lines a writer wrapped by hand joined again, one line
 * per list item, table row, title and code line. Its own heading is left out (the path above
 * the preview names it).
 */
export function preview(c) {
  const heading = c.heading_path && c.heading_path[c.heading_path.length - 1];
  const rows = []; // {md, open}: ``open`` rows take the continuation lines that follow
  let fence = false;
  withoutBidi(c.text)
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .forEach((line) => {
      const last = rows[rows.length - 1];
      if (FENCE.test(line)) {
        fence = !fence;
      } else if (fence) {
        rows.push({ text: line.trim(), open: false });
      } else if (!line.trim()) {
        if (last) last.open = false;
      } else if (last && last.open && UNDERLINE.test(line)) {
        last.open = false; // the line above is a heading, not text its underline continues
        last.title = true;
      } else if (last && last.open && !ROW.test(line) && !TITLE.test(line)) {
        last.md += " " + line.trim();
      } else {
        rows.push({ md: line, open: !TITLE.test(line) && !/^\s*\|/.test(line) });
      }
    });
  const out = [];
  rows.forEach((row, i) => {
    const text = row.text != null ? row.text : stripMarkdown(row.md).replace(/\s*\n\s*/g, " ");
    if (!text || (i === 0 && (row.title || /^\s*#/.test(row.md || "")) && text === heading)) return;
    out.push(text);
  });
  return out.join("\n");
}

/** Tooltip behaviour on ``w``: shown on hover and focus, hidden on leave (of the chip and of the
 * tip itself, which the pointer may move onto), blur and scroll. */
export function initTooltip(w) {
  const { log, tip } = w.ui;
  let tipFor = null;
  let tipTimer = 0;

  // A chip is described by the tip only while the tip shows its passage: with the one tip's
  // id on every chip, a screen reader read the last passage shown as each chip's description.
  const describe = (on) => tipFor && (on ? tipFor.setAttribute("aria-describedby", tip.id) : tipFor.removeAttribute("aria-describedby"));
  const show = (target) => {
    const c = target._citation;
    clearTimeout(tipTimer);
    describe(false);
    tipFor = target;
    describe(true);
    tip.textContent = "";
    tip.appendChild(el("p", { class: "kbq-tip-path", dir: "auto", text: headingPath(c, w.ui.t) }));
    let passage = preview(c);
    if (passage.length > PREVIEW_CHARS) passage = passage.slice(0, PREVIEW_CHARS).replace(/\s+\S*$/, "") + " …";
    if (passage) tip.appendChild(el("p", { class: "kbq-tip-text", dir: "auto", text: passage }));
    tip.appendChild(el("p", { class: "kbq-tip-hint", text: w.ui.t("openHint") }));
    tip.hidden = false;
    const r = target.getBoundingClientRect();
    const width = Math.min(360, window.innerWidth - 16);
    tip.style.width = width + "px";
    tip.style.maxHeight = "";
    const left = Math.max(8, Math.min(r.left + r.width / 2 - width / 2, window.innerWidth - width - 8));
    const place = tipPlace(r, tip.offsetHeight, Math.max(8, log.getBoundingClientRect().top), window.innerHeight);
    tip.style.left = left + "px";
    tip.style.top = place.top + "px";
    if (place.maxHeight) tip.style.maxHeight = place.maxHeight + "px";
  };
  const hide = () => {
    clearTimeout(tipTimer);
    tip.hidden = true;
    describe(false);
    tipFor = null;
  };
  const later = () => {
    tipTimer = setTimeout(hide, 150);
  };
  w.hideTip = hide;

  log.addEventListener("mouseover", (ev) => {
    const t = sourceTarget(ev);
    if (t && t !== tipFor) show(t);
    else if (t) clearTimeout(tipTimer); // back on its chip from the tip (or through it)
  });
  log.addEventListener("mouseout", (ev) => {
    if (sourceTarget(ev)) later();
  });
  log.addEventListener("focusin", (ev) => {
    const t = sourceTarget(ev);
    if (t) show(t);
  });
  log.addEventListener("focusout", (ev) => {
    if (sourceTarget(ev)) hide();
  });
  log.addEventListener("scroll", () => {
    // Focus moving to a chip scrolls it into view: its tip follows it while it shows.
    const chip = tipFor && w.ui.shadow.activeElement === tipFor ? tipFor.getBoundingClientRect() : null;
    const view = log.getBoundingClientRect();
    if (chip && chip.bottom > view.top && chip.top < view.bottom) show(tipFor);
    else hide();
  }, { passive: true });
  // The pointer may move onto the tip to read it, select it, or magnify it: it stays open.
  tip.addEventListener("mouseenter", () => clearTimeout(tipTimer));
  tip.addEventListener("mouseleave", later);
  // A tip below its chip may lie over the next line's chips: the pointer over one of them
  // shows that one's tip (never over its own chip), so it can be clicked.
  tip.addEventListener("mousemove", (ev) => {
    const under = w.ui.shadow.elementsFromPoint(ev.clientX, ev.clientY).map((e) => e.closest(".kbq-cite")).find((c) => c && c !== tipFor);
    if (under && under._citation) show(under);
  });
}

/**
 * Where a tooltip of height ``h`` goes for a chip at ``r``: above it while that leaves the
 * panel's title bar (``floor``) clear, else below it; never over the chip itself (the tip
 * takes the pointer), so with no room either way it is cut to the larger side's height.
 */
export function tipPlace(r, h, floor, viewport) {
  const above = r.top - 8 - floor;
  const below = viewport - 8 - (r.bottom + 8);
  if (h <= above) return { top: r.top - h - 8, maxHeight: 0 };
  if (h <= below) return { top: r.bottom + 8, maxHeight: 0 };
  if (above >= below) return { top: floor, maxHeight: Math.max(0, above) };
  return { top: r.bottom + 8, maxHeight: Math.max(0, below) };
}

/** The chip or source link an event happened on, if it carries a citation. */
export function sourceTarget(ev) {
  const t = ev.target && ev.target.closest ? ev.target.closest(".kbq-cite, .kbq-source") : null;
  return t && t._citation ? t : null;
}
