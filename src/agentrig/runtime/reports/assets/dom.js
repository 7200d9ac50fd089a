/* DOM helpers shared by the page. Data never becomes markup: every string goes in as text (textContent or a text
   node), links only as relative paths, and lookups keyed by data go through Map or `own` (a tool call id may be
   `constructor` or `__proto__`). */
var app = document.getElementById("app");
var STATUS_RANK = new Map([["error", 0], ["failed", 1], ["missing", 2], ["skipped", 3], ["passed", 4]]);

function own(object, key) {
  return object !== null && typeof object === "object" && Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;
}
function rank(status) { var value = STATUS_RANK.get(status); return value === undefined ? 2 : value; }

/* Characters that change how text reads without showing (bidirectional controls, zero-width characters): each is
   drawn as a visible marker with its code point, so a prompt cannot reverse or hide what it says. A zero-width
   joiner between two pictographs is an emoji sequence and is kept. */
var INVISIBLE = /[\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/;
var INVISIBLE_ALL = /[\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;
var INVISIBLE_NAMES = new Map([
  [0x00AD, "SHY soft hyphen"], [0x061C, "ALM Arabic letter mark"], [0x180E, "MVS Mongolian vowel separator"],
  [0x200B, "ZWSP zero-width space"], [0x200C, "ZWNJ zero-width non-joiner"], [0x200D, "ZWJ zero-width joiner"],
  [0x200E, "LRM left-to-right mark"], [0x200F, "RLM right-to-left mark"], [0x202A, "LRE left-to-right embedding"],
  [0x202B, "RLE right-to-left embedding"], [0x202C, "PDF pop directional formatting"], [0x202D, "LRO left-to-right override"],
  [0x202E, "RLO right-to-left override"], [0x2060, "WJ word joiner"], [0x2061, "function application"],
  [0x2062, "invisible times"], [0x2063, "invisible separator"], [0x2064, "invisible plus"],
  [0x2066, "LRI left-to-right isolate"], [0x2067, "RLI right-to-left isolate"], [0x2068, "FSI first strong isolate"],
  [0x2069, "PDI pop directional isolate"], [0xFEFF, "ZWNBSP zero-width no-break space (BOM)"]]);
var PICTOGRAPH = /\p{Extended_Pictographic}/u;

function appendText(node, text) {
  text = String(text);
  if (!INVISIBLE.test(text)) { node.appendChild(document.createTextNode(text)); return node; }
  var last = 0, match;
  INVISIBLE_ALL.lastIndex = 0;
  while ((match = INVISIBLE_ALL.exec(text)) !== null) {
    var at = match.index, code = text.charCodeAt(at);
    if (code === 0x200D && PICTOGRAPH.test(text.slice(Math.max(0, at - 2), at)) && PICTOGRAPH.test(text.slice(at + 1, at + 3))) continue;
    if (at > last) node.appendChild(document.createTextNode(text.slice(last, at)));
    var name = INVISIBLE_NAMES.get(code) || "invisible character";
    var hex = "U+" + code.toString(16).toUpperCase().padStart(4, "0");
    var marker = document.createElement("span");
    marker.className = "invisible";
    marker.title = hex + " " + name + " (hidden in the text; shown here)";
    marker.textContent = "\u27E6" + name.split(" ")[0] + "\u27E7";
    node.appendChild(marker);
    last = at + 1;
  }
  if (last < text.length) node.appendChild(document.createTextNode(text.slice(last)));
  return node;
}

/* A relative link, or none: the page links only to files beside it (encoded path segments, written by the report
   writer); anything with a scheme (`javascript:`, `data:`) or a network path is refused. */
function safeHref(href) {
  if (typeof href !== "string" || /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(href) || href.slice(0, 2) === "//" || /^\s/.test(href)) return null;
  return href;
}

function el(tag, attrs, children) {
  var node = document.createElement(tag);
  if (attrs) {
    Object.keys(attrs).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "text") appendText(node, value);
      else if (key === "class") node.className = value;
      else if (key === "href") { var safe = safeHref(value); if (safe !== null) node.setAttribute("href", safe); }
      else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    });
  }
  (children || []).forEach(function (child) {
    if (child === null || child === undefined || child === false) return;
    if (typeof child === "string") appendText(node, child); else node.appendChild(child);
  });
  return node;
}
/* A scenario's data, as a promise. report.html holds the scenarios `index.chunk_size` to a block (ar-cN: their JSON
   texts one a line, gzipped, base64): a block is decompressed the first time one of its scenarios is needed, by the
   browser's own DecompressionStream (no network: a Blob's stream, which the page's policy does not restrict).
   compatibility.html (and pages written before issue 45) hold one JSON block per scenario (ar-sN). */
var chunkLines = new Map();
function bytesOf(base64) {
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(base64);
  var text = atob(base64), bytes = new Uint8Array(text.length);
  for (var n = 0; n < text.length; n++) bytes[n] = text.charCodeAt(n);
  return bytes;
}
function linesOf(chunk) {
  var lines = chunkLines.get(chunk);
  if (!lines) {
    var block = document.getElementById("ar-c" + chunk);
    lines = !block ? Promise.resolve([]) : new Response(new Blob([bytesOf(block.textContent.trim())]).stream()
      .pipeThrough(new DecompressionStream("gzip"))).text().then(function (text) { return text.split("\n"); });
    chunkLines.set(chunk, lines);
  }
  return lines;
}
function blockText(i) {
  var size = index.chunk_size;
  if (!size) { var block = document.getElementById("ar-s" + i); return Promise.resolve(block ? block.textContent : ""); }
  return linesOf(Math.floor(i / size)).then(function (lines) { return lines[i % size] || ""; });
}
function load(i) { return blockText(i).then(function (text) { return JSON.parse(text); }); }
function badge(status, prefix) { return el("span", { class: "badge " + (prefix || "s-") + status, text: status }); }
function pretty(value) { return typeof value === "string" ? value : JSON.stringify(value, null, 2); }
function pre(value, cls) { return el("pre", { class: cls || null, text: pretty(value === undefined ? null : value) }); }
function seconds(value) { return value === null || value === undefined ? "" : Number(value).toFixed(2) + " s"; }
function tags(list) { return el("span", { class: "tags" }, (list || []).map(function (t) { return el("span", { class: "tag", text: t }); })); }
/* A request the provider layer sent again (an events.jsonl request_retry event), and a scenario's attempts. */
function retryText(e) {
  return "request " + e.request + ", attempt " + e.attempt + ": " + (e.status ? "HTTP " + e.status + " " : "") + e.kind + ", retried after " + seconds(e.wait_s) + " · " + e.message;
}
function attemptsText(a) {
  return a ? a.attempts + " attempts for " + a.requests + " requests, " + a.retries + " retries (" + seconds(a.retry_wait_s) + " waited), " + seconds(a.queue_wait_s) + " queued" : null;
}
function usageText(u) {
  if (!u) return "";
  var text = (u.requests || 0) + " req · " + (u.input_tokens || 0) + " in / " + (u.output_tokens || 0) + " out tokens";
  if (u.tool_calls) text += " · " + u.tool_calls + " tool calls";
  if (u.estimated) text += " (estimated)";
  return text;
}
function facts(items) {
  return el("div", { class: "facts" }, items.filter(Boolean).map(function (t) { return el("span", { text: t }); }));
}
function fileLink(file) {
  // {path, href} since issue 31; a bare string in pages of older writers.
  var path = typeof file === "string" ? file : file.path, href = typeof file === "string" ? null : file.href;
  return el("a", { href: href, text: String(path).split("/").slice(-2).join("/") });
}
