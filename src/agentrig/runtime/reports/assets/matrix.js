/* compatibility.html: what the matrix says of each version's environment, from compatibility.json (the page's
   index.head): how `--versions` was resolved, the lock file, environments that could not be built (their error and
   the end of their build log), the packages that differ from the baseline's environment, fields of pydantic-ai's
   messages the canonical form does not carry, and warnings new on a version. report.js's matrixPage and
   matrixDetail call these. */

function versionEntry(head, version) {
  return (head.versions || []).filter(function (v) { return v.version === version; })[0] || {};
}

function packageChangeText(c) {
  if (c.before === null) return c.name + " " + c.after + " (new)";
  if (c.after === null) return c.name + " " + c.before + " (gone)";
  return c.name + " " + c.before + " → " + c.after;
}

function warningText(w) { return w.category + " (" + w.module + "): " + w.message; }

/* A regression as the banner names it, with the other packages that changed in its environment. */
function regressionText(r) {
  return r.scenario + " (" + r.status + " on " + r.version + ")" + (r.also_changed ? ": " + r.also_changed : "");
}

function fieldName(e) { return (e["class"] || e.owner) + "." + e.field; }

function fieldsText(v, baseline) {
  var f = v.fields;
  if (!f) return null;
  if (f.error) return v.version + ": no field inventory (" + f.error + ")";
  var parts = [];
  if (f.new_not_carried.length) parts.push("new fields not carried (absent on " + baseline + "): " + f.new_not_carried.map(function (e) {
    var detail = [e.how, e.reason].filter(Boolean).join(": ");
    return fieldName(e) + (detail ? " (" + detail + ")" : "");
  }).join(", "));
  if (f.unknown.length) parts.push("fields on neither of agentrig's lists: " + f.unknown.map(fieldName).join(", "));
  return parts.length ? v.version + ": " + parts.join("; ") : null;
}

/* The header's block about the environments: one line or box per fact, nothing when there is nothing to say. */
function matrixEnvironment(h) {
  var items = [];
  var r = h.resolution;
  if (r) items.push(el("div", { class: "facts env-resolution" }, [el("span", { text: "--versions " + r.requested.join(",") + " came to " + r.versions.join(", ") })].concat(
    r.notes.map(function (n) { return el("span", { text: n }); }))));
  if (h.lock) items.push(el("div", { class: "facts env-lock" }, [el("span", { text: "built from " + h.lock.file + " (" + h.lock.format + ", " + h.lock.packages + " packages, pydantic-ai " + h.lock.pydantic_ai + "), only pydantic-ai moved" })]));
  (h.versions || []).forEach(function (v) {
    if (v.build_error) {
      items.push(el("div", { class: "error-box env-not-built" }, [
        el("strong", { text: v.version + ": environment not built" }), ": ", v.build_error.replace("pydantic-ai " + v.version + ": ", ""),
        v.build_log ? el("div", null, [el("a", { href: (index.base || "") + v.build_log, text: v.build_log })]) : null,
        v.build_log_tail ? el("pre", { text: v.build_log_tail }) : null]));
      return;
    }
    if (v.package_changes && v.package_changes.length) {
      items.push(el("div", { class: "facts env-packages" }, [
        el("span", { text: v.version + ": packages that differ from " + h.baseline + ": " + v.package_changes.map(packageChangeText).join(", ") }),
        v.also_changed ? el("span", null, [el("strong", { text: v.also_changed.replace("the regression may be theirs", "a difference may be theirs") })]) : null]));
    }
    if (v.lock_changes && v.lock_changes.length) items.push(el("div", { class: "facts env-lock-changes" }, [el("span", { text: v.version + ": moved from the lock: " + v.lock_changes.map(packageChangeText).join(", ") })]));
    var fields = fieldsText(v, h.baseline);
    if (fields) items.push(el("div", { class: "facts env-fields" }, [el("span", { text: fields })]));
    (v.new_warnings || []).forEach(function (w) {
      items.push(el("div", { class: "facts env-warnings" }, [el("span", { text: v.version + ": new warning " + warningText(w) + " in " + w.scenarios.join(", ") })]));
    });
  });
  return items.length ? el("div", { class: "environments" }, items) : null;
}

/* What a scenario's column says of its version beyond the run: not built, or the warnings new there. */
function scenarioVersionNotes(scenario, version) {
  var fresh = own(scenario.new_warnings || {}, version) || [];
  return fresh.map(function (w) { return el("div", { class: "sub new-warning", text: "new warning: " + warningText(w) }); });
}

/* The h1's note of environments that could not be built ("" when every one was). */
function notBuiltTitle(h) {
  var count = (h.versions || []).filter(function (v) { return v.build_error; }).length;
  return count ? ", " + count + (count === 1 ? " environment" : " environments") + " not built" : "";
}

function notReported(h, version) {
  var v = versionEntry(h, version);
  return v.build_error ? "environment not built: " + v.build_error : "not reported on this version";
}
