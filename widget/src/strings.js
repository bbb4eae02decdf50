/** Every word the widget shows or has a screen reader say, in its page's language: the
 * language of `<html lang>` (its primary subtag: `pt-BR` is pt, `zh-Hans` zh) when the widget
 * has it (lang/*.js), English otherwise. A site owner's `labels` replace any of them.
 *
 * A string fills in `{name}`; `{name:one|other}` is said of one (in French and Portuguese, of
 * none too: Intl.PluralRules) or of another number, `#` standing for the number. */
import ar from "./lang/ar.js";
import de from "./lang/de.js";
import en from "./lang/en.js";
import es from "./lang/es.js";
import fr from "./lang/fr.js";
import it from "./lang/it.js";
import ja from "./lang/ja.js";
import pt from "./lang/pt.js";
import zh from "./lang/zh.js";

export const LANGUAGES = { en, ar, de, es, fr, it, ja, pt, zh };

const PLACE = /\{(\w+)(?::([^{}|]*)\|([^{}|]*))?\}/g;

/** The widget's language for a language tag ("fr-CA" -> "fr"): one it has, else "en". */
export function languageOf(tag) {
  const primary = String(tag || "").trim().toLowerCase().split(/[-_]/)[0];
  return Object.prototype.hasOwnProperty.call(LANGUAGES, primary) ? primary : "en";
}

/** A site owner's labels as given (the plugin's JSON object, or the drop-in tag's
 * data-labels JSON text): {key: text}, and {lang: {key: text}} for pages in that language
 * only. What is not text is left out. */
export function readLabels(given) {
  let data = given;
  if (typeof given === "string") {
    try {
      data = JSON.parse(given);
    } catch (e) {
      data = null;
    }
  }
  const labels = {};
  if (!data || typeof data !== "object" || Array.isArray(data)) return labels;
  for (const key of Object.keys(data)) {
    const value = data[key];
    if (typeof value === "string" && value.trim()) labels[key] = value;
    else if (value && typeof value === "object" && !Array.isArray(value)) labels[key] = readLabels(value);
  }
  return labels;
}

/**
 * ``t(key, values)``: the text of ``key`` for a page in language ``tag``: the owner's label
 * for the page's language, else the owner's label for every language, else the language's
 * own, else English. ``t.lang`` is the language chosen.
 */
export function strings(tag, labels) {
  const lang = languageOf(tag);
  const own = labels || {};
  const only = own[lang] && typeof own[lang] === "object" ? own[lang] : {};
  const text = (key) => [only[key], own[key], LANGUAGES[lang][key], en[key]].find((v) => typeof v === "string");
  const unknown = Object.keys(own).filter((k) => !(k in en) && !(k in LANGUAGES) && typeof own[k] === "string");
  if (unknown.length && typeof console !== "undefined") console.warn("kb-qa: unknown labels (see widget/src/lang/en.js): " + unknown.join(", "));
  let rules = null;
  try {
    rules = new Intl.PluralRules(lang);
  } catch (e) {
    rules = null;
  }
  const number = (n) => (typeof n === "number" ? n.toLocaleString(lang) : String(n));
  const t = (key, values) => {
    const v = values || {};
    const found = text(key);
    if (found == null) return key;
    return found.replace(PLACE, (whole, name, one, other) => {
      if (!(name in v)) return whole;
      if (one == null) return number(v[name]);
      const n = Number(v[name]);
      const single = rules ? rules.select(n) === "one" : n === 1;
      return (single ? one : other).replace(/#/g, number(n));
    });
  };
  t.lang = lang;
  // The page is in a language the widget does not speak and the owner gave no words of their
  // own: the widget's words are English, said so (a screen reader's voice, their direction).
  const primary = String(tag || "").trim().toLowerCase().split(/[-_]/)[0];
  t.foreign = !!primary && primary !== lang && !Object.keys(own).length;
  return t;
}

/** English, as the pure functions of other modules say things when not told a language. */
export const ENGLISH = strings("en");

/** The page's language as its <html lang> names it ("" when it names none). */
export function pageLanguage(doc = document) {
  let lang = (doc.documentElement && doc.documentElement.lang) || "";
  return lang.length <= 35 ? lang : "";
}
