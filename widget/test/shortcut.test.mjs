// The keyboard shortcut.
import { test } from "node:test";
import assert from "node:assert/strict";
import { matchesShortcut, parseShortcut } from "../src/shortcut.js";

test("shortcuts: mod is Cmd on Apple systems and Ctrl elsewhere", () => {
  const key = (over) => ({ key: "k", code: "KeyK", ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...over });
  const pc = parseShortcut("mod+k", false);
  const mac = parseShortcut("mod+k", true);
  assert.ok(matchesShortcut(key({ ctrlKey: true }), pc));
  assert.ok(!matchesShortcut(key({ metaKey: true }), pc));
  assert.ok(matchesShortcut(key({ metaKey: true }), mac));
  assert.ok(!matchesShortcut(key({}), pc));
  assert.ok(!matchesShortcut(key({ ctrlKey: true, shiftKey: true }), pc));
  const slash = parseShortcut("/", false);
  assert.ok(matchesShortcut(key({ key: "/", code: "Slash" }), slash));
  const alt = parseShortcut("ctrl+alt+j", false);
  assert.ok(matchesShortcut(key({ key: "∆", code: "KeyJ", ctrlKey: true, altKey: true }), alt));
});

test("shortcuts: Ctrl/Cmd+K by default, Ctrl/Cmd+/ on Zensical pages, whose search takes K", async () => {
  const { defaultShortcut } = await import("../src/options.js");
  const page = (generator) => ({
    querySelector: (sel) => (sel === 'meta[name="generator"]' && generator ? { getAttribute: () => generator } : null),
  });
  assert.equal(defaultShortcut(page("zensical-0.0.73")), "mod+/");
  assert.equal(defaultShortcut(page("mkdocs-1.6.1, mkdocs-material-9.7.0")), "mod+k");
  assert.equal(defaultShortcut(page(null)), "mod+k");
  const slash = parseShortcut("mod+/", false);
  const ev = { key: "/", code: "Slash", ctrlKey: true, metaKey: false, altKey: false, shiftKey: false };
  assert.ok(matchesShortcut(ev, slash));
  assert.ok(!matchesShortcut({ ...ev, ctrlKey: false }, slash));
});
