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
