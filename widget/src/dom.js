/** Small DOM helpers: elements from a description, icons, copying to the clipboard, and what
 * a screen reader is told (the announcer). */

const ICONS = {
  chat: "M12 3C6.5 3 2 6.58 2 11a7.2 7.2 0 0 0 2.87 5.6c0 .6-.42 2.17-2.87 4.4 2.33-.1 4.46-1.03 6.16-2.44A11 11 0 0 0 12 19c5.5 0 10-3.58 10-8s-4.5-8-10-8m1 13h-2v-2h2zm1.07-5.25-.9.92C12.45 12.4 12 13 12 14.5h-2V14c0-1.1.45-2.1 1.17-2.83l1.24-1.26A1.97 1.97 0 0 0 13 8.5a2 2 0 0 0-4 0H7a4 4 0 0 1 8 0c0 .88-.36 1.68-.93 2.25",
  close: "M19 6.41 17.59 5 12 10.59 6.41 5 5 6.41 10.59 12 5 17.59 6.41 19 12 13.41 17.59 19 19 17.59 13.41 12z",
  send: "M2.01 21 23 12 2.01 3 2 10l15 2-15 2z",
  stop: "M6 6h12v12H6z",
  copy: "M19 21H8V7h11m0-2H8a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h11a2 2 0 0 0 2-2V7a2 2 0 0 0-2-2m-3-4H4a2 2 0 0 0-2 2v14h2V3h12z",
  check: "M21 7 9 19l-5.5-5.5 1.41-1.41L9 16.17 19.59 5.59z",
  up: "M5 9v12H1V9zm4 12a2 2 0 0 1-2-2V9c0-.55.22-1.05.59-1.41L14.17 1l1.06 1.06c.27.27.44.64.44 1.05l-.03.32L14.69 8H21a2 2 0 0 1 2 2v2c0 .26-.05.5-.14.73l-3.02 7.05C19.54 20.5 18.83 21 18 21zm0-2h9.03L21 12v-2h-8.79l1.13-5.32L9 9.03z",
  down: "M19 15V3h4v12zM15 3a2 2 0 0 1 2 2v10c0 .55-.22 1.05-.59 1.41L9.83 23l-1.06-1.06c-.27-.27-.44-.64-.44-1.06l.03-.31.95-4.57H3a2 2 0 0 1-2-2v-2c0-.26.05-.5.14-.73l3.02-7.05C4.46 3.5 5.17 3 6 3zm0 2H5.97L3 12v2h8.78l-1.13 5.32L15 14.97z",
  reset: "M17.65 6.35A7.96 7.96 0 0 0 12 4a8 8 0 1 0 7.73 10h-2.08A6 6 0 1 1 12 6c1.66 0 3.14.69 4.22 1.78L13 11h7V4z",
};

export function el(tag, attrs, children) {
  let node = document.createElement(tag);
  if (attrs) {
    for (let k in attrs) {
      if (attrs[k] == null || attrs[k] === false) continue;
      if (k === "text") node.textContent = attrs[k];
      else if (k === "class") node.className = attrs[k];
      else node.setAttribute(k, attrs[k] === true ? "" : attrs[k]);
    }
  }
  (children || []).forEach((c) => {
    if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  });
  return node;
}

export function icon(name) {
  let ns = "http://www.w3.org/2000/svg";
  let svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  let path = document.createElementNS(ns, "path");
  path.setAttribute("d", ICONS[name]);
  svg.appendChild(path);
  return svg;
}

export function iconButton(name, label, cls) {
  return el("button", { type: "button", class: "kbq-icon " + (cls || ""), "aria-label": label, title: label }, [icon(name)]);
}

export function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  return new Promise((resolve, reject) => {
    let area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.cssText = "position:fixed;top:-1000px;opacity:0";
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (e) {
      ok = false;
    }
    area.remove();
    if (ok) resolve();
    else reject(new Error("copy failed"));
  });
}

export function flashDone(button, label) {
  let old = button.getAttribute("aria-label");
  button.replaceChild(icon("check"), button.firstChild);
  button.setAttribute("aria-label", label);
  button.title = label;
  setTimeout(() => {
    button.replaceChild(icon("copy"), button.firstChild);
    button.setAttribute("aria-label", old);
    button.title = old;
  }, 1500);
}

export const ANNOUNCE_DELAY_MS = 50;

/**
 * Have a screen reader say ``text`` once, through ``announcer`` (the widget's one visually
 * hidden polite status region). It is emptied first and filled a moment later, so the same
 * words said twice ("Copied") are read twice; an announcement still waiting is replaced.
 */
export function announce(announcer, text) {
  if (!announcer) return;
  clearTimeout(announcer._timer);
  announcer.textContent = "";
  if (!text) return;
  announcer._timer = setTimeout(() => (announcer.textContent = text), ANNOUNCE_DELAY_MS);
}

/** A touch screen and no mouse: focusing a text box there brings up the on-screen keyboard. */
export function touchOnly() {
  return !!(window.matchMedia && matchMedia("(pointer: coarse) and (hover: none)").matches);
}
