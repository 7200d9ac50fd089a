/* What the user attached to a message (a canonical `user-content` part, docs/canonical-format.md): each attachment
   a labelled chip, its kind, media type, size and short SHA-256; a URL as text, never a link and never fetched.
   An image's own bytes (already in the page, in the history) may be drawn inline as a data: image: the page's
   policy allows `img-src data:` and nothing else, so no image can come from anywhere but the page. Only raster
   types a browser decodes without running anything (PNG, JPEG, GIF, WebP; never SVG, which is a document) and
   only up to INLINE_IMAGE_LIMIT bytes; anything else is its chip alone. */

var INLINE_IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
var INLINE_IMAGE_LIMIT = 4 * 1024 * 1024;
var URL_KINDS = new Map([["image-url", "image URL"], ["document-url", "document URL"], ["audio-url", "audio URL"], ["video-url", "video URL"]]);
var DOCUMENT_TYPES = /^(application\/pdf|text\/|application\/msword|application\/vnd\.(openxmlformats|ms-excel|oasis))/;
var BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function isAttachment(item) { return item !== null && typeof item === "object" && !Array.isArray(item); }
/* The bytes a base64 text stands for (standard or URL-safe, padding optional), or null when it is no base64. */
function base64Text(data) {
  if (typeof data !== "string") return null;
  var text = data.replace(/-/g, "+").replace(/_/g, "/");
  return BASE64.test(text) && text.replace(/=+$/, "").length % 4 !== 1 ? text : null;
}
function base64Size(text) { var bare = text.replace(/=+$/, ""); return Math.floor(bare.length * 3 / 4); }
function byteSize(n) {
  return n < 1024 ? n + " B" : n < 1024 * 1024 ? (n / 1024).toFixed(1) + " KB" : (n / 1024 / 1024).toFixed(1) + " MB";
}
function fileKind(mediaType) {
  var type = String(mediaType || "");
  var top = type.split("/")[0];
  if (top === "image" || top === "audio" || top === "video") return top;
  return DOCUMENT_TYPES.test(type) ? "document" : "file";
}

/* The chip's words, as one line: what a screen reader reads and a compact header shows. */
function attachmentFacts(item) {
  if (item.kind === "binary") {
    var text = base64Text(item.data);
    return { kind: fileKind(item.media_type), facts: [String(item.media_type || "no media type"), text === null ? "bytes unreadable" : byteSize(base64Size(text)),
      typeof item.sha256 === "string" ? "sha256:" + item.sha256.slice(0, 12) : null, item.identifier ? "id " + item.identifier : null] };
  }
  var urlKind = URL_KINDS.get(String(item.kind));
  if (urlKind) return { kind: urlKind, facts: [item.media_type ? String(item.media_type) : "media type not given", item.identifier ? "id " + item.identifier : null], url: String(item.url) };
  return { kind: String(item.kind), facts: ["kept as it was read"] };
}

/* An attachment's chip: its kind, then its facts and its URL; `compact` (a turn's header): kind and media type. */
function attachmentChip(item, compact) {
  var about = attachmentFacts(item);
  var words = about.facts.filter(Boolean).slice(0, compact ? 1 : undefined);
  var chip = el("span", { class: "attachment", title: item.kind === "binary" && typeof item.sha256 === "string" ? "SHA-256 " + item.sha256 : null }, [
    el("strong", { text: about.kind }), " ", el("span", { class: "sub", text: words.join(" · ") })]);
  // A URL is text: an element that could be followed or loaded (a link, an image) is never made of it.
  if (about.url !== undefined && !compact) chip.appendChild(el("code", { class: "url", text: about.url }));
  return chip;
}

/* The attachment's own image, drawn from its bytes when that is safe (see above), else null. */
function inlineImage(item) {
  var text = item.kind === "binary" ? base64Text(item.data) : null;
  if (text === null || !INLINE_IMAGE_TYPES.has(item.media_type) || base64Size(text) > INLINE_IMAGE_LIMIT) return null;
  var image = document.createElement("img");
  image.className = "attached-image";
  image.alt = "the attached " + attachmentFacts(item).facts.filter(Boolean).join(", ");
  image.decoding = "async";
  image.src = "data:" + item.media_type + ";base64," + text;
  return image;
}

/* A user message with attachments, in order: text pieces as text, each attachment a chip (and its image). */
function userContent(content) {
  var items = Array.isArray(content) ? content : [content];
  return el("div", { class: "user-content" }, items.map(function (item) {
    if (!isAttachment(item)) return pre(item);
    return el("div", { class: "attached" }, [attachmentChip(item, false), inlineImage(item)]);
  }));
}

/* The attachments of a turn's user message, as compact chips for the turn's header; null when there are none. */
function attachmentSummary(part) {
  var items = part && part.part_kind === "user-content" && Array.isArray(part.content) ? part.content.filter(isAttachment) : [];
  if (!items.length) return null;
  return el("div", { class: "attachments sub" }, [items.length + (items.length === 1 ? " attachment:" : " attachments:")].concat(
    items.map(function (item) { return attachmentChip(item, true); })));
}
