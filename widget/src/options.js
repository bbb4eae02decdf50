/** The widget's options: from the MkDocs plugin's data-kb-qa-options="{json}", or from the
 * drop-in tag's data-* attributes. */
import { pageLanguage, readLabels, strings } from "./strings.js";

/** The <script> tag that loaded the widget (the plugin's, or the drop-in one). */
export function widgetScript() {
  return document.currentScript || document.querySelector("script[data-kb-qa-options]") || document.querySelector('script[src*="kb-qa.js"]');
}

export function readOptions(script) {
  let opts = {};
  let data = script && script.getAttribute("data-kb-qa-options");
  if (data) {
    try {
      opts = JSON.parse(data) || {};
    } catch (e) {
      opts = {};
    }
  } else if (script) {
    let d = script.dataset;
    opts = {
      endpoint: d.endpoint,
      title: d.title,
      placeholder: d.placeholder,
      suggested: d.suggested ? d.suggested.split("|").filter(Boolean) : [],
      shortcut: d.shortcut,
      root: d.root,
      site_url: d.siteUrl,
      preview_endpoint: d.previewEndpoint,
      labels: d.labels,
    };
  }
  let src = script && script.src ? script.src : location.href;
  // The widget's words in the page's language, with the site owner's labels.
  const t = strings(pageLanguage(document), readLabels(opts.labels));
  // The title and placeholder options, when set, come before any label of the same name. The
  // root is resolved once: after instant navigation the page URL no longer matches this tag.
  return {
    endpoint: endpointOf(opts, location),
    title: opts.title || t("title"),
    placeholder: opts.placeholder || t("placeholder"),
    t: t,
    suggested: Array.isArray(opts.suggested) ? opts.suggested.slice(0, 6).map(String) : [],
    shortcut: opts.shortcut || defaultShortcut(document),
    root: new URL(opts.root != null ? opts.root : "/", location.href).href,
    siteUrl: opts.site_url || "",
    css: src.replace(/\.js(\?.*)?$/, ".css$1"),
  };
}

/** The API's base URL: the configured endpoint; without one, on a page previewed on this
 * machine, the preview endpoint its options name (`kb-qa serve` nearby: the tags and loader
 * `kb-qa init` writes name http://127.0.0.1:8321 unless told another); otherwise "" (the
 * page's own origin). */
export function endpointOf(opts, where) {
  let endpoint = String(opts.endpoint || "").replace(/\/+$/, "");
  let preview = String(opts.preview_endpoint || "").replace(/\/+$/, "");
  let local = /^(localhost|127\.0\.0\.1|\[::1\])$/.test(where.hostname);
  if (!endpoint && preview && local && preview.indexOf(where.origin) !== 0) return preview;
  return endpoint;
}

/** Ctrl/⌘+K, unless the site's own search takes it: Zensical's does (its header shows
 * "Search Ctrl+K"), so there the widget listens to Ctrl/⌘+/ instead. */
export function defaultShortcut(doc) {
  let meta = doc.querySelector('meta[name="generator"]');
  let generator = meta ? String(meta.getAttribute("content") || "").toLowerCase() : "";
  return generator.startsWith("zensical") ? "mod+/" : "mod+k";
}
