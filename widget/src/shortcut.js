/** Keyboard shortcuts: "mod+k" parsed, matched against key events and named for people. */

/** "mod+k" -> {key, ctrl, meta, alt, shift}; "mod" is ⌘ on Apple systems, Ctrl elsewhere. */
export function parseShortcut(spec, apple) {
  let parts = String(spec || "mod+k").toLowerCase().split("+");
  let key = parts.pop() || "k";
  let mods = { ctrl: false, meta: false, alt: false, shift: false };
  parts.forEach(function (p) {
    if (p === "mod") mods[apple ? "meta" : "ctrl"] = true;
    else if (p in mods) mods[p] = true;
  });
  mods.key = key;
  return mods;
}

export function matchesShortcut(ev, sc) {
  let key = (ev.key || "").toLowerCase();
  let code = ev.code || "";
  let same = key === sc.key || code === "Key" + sc.key.toUpperCase() || code === "Digit" + sc.key;
  let letter = /^[a-z0-9]$/.test(sc.key);
  return same && ev.ctrlKey === sc.ctrl && ev.metaKey === sc.meta && ev.altKey === sc.alt && (!letter || ev.shiftKey === sc.shift);
}

export function shortcutLabel(sc, apple) {
  let out = [];
  if (sc.ctrl) out.push(apple ? "⌃" : "Ctrl");
  if (sc.alt) out.push(apple ? "⌥" : "Alt");
  if (sc.shift) out.push(apple ? "⇧" : "Shift");
  if (sc.meta) out.push(apple ? "⌘" : "Meta");
  out.push(sc.key.toUpperCase());
  return out.join(apple ? "" : "+");
}

export function ariaShortcut(sc) {
  let out = [];
  if (sc.ctrl) out.push("Control");
  if (sc.alt) out.push("Alt");
  if (sc.shift) out.push("Shift");
  if (sc.meta) out.push("Meta");
  out.push(sc.key.toUpperCase());
  return out.join("+");
}
