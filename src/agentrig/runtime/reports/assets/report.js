/* agentrig report page: draws the table from the index block and a scenario from its data, on demand.
   No network, no library: plain DOM. The scenarios are compressed chunks (ar-cN; a matrix page: a JSON block per
   scenario, ar-sN, dom.js `load`), the table an ar-index block. (dom.js, diff.js, checks.js, conversation.js and
   list.js come before this file in the same script.) */
var index = JSON.parse(document.getElementById("ar-index").textContent);

function delta(now, before, unit, digits) {
  if (typeof now !== "number" || typeof before !== "number") return "";
  var change = now - before;
  var percent = before ? " (" + (change >= 0 ? "+" : "") + Math.round(change / before * 100) + "%)" : "";
  return (change >= 0 ? "+" : "") + change.toFixed(digits) + unit + percent;
}

function rerunBlock(command) {
  if (!command) return null;
  var field = el("input", { type: "text", readonly: true, class: "command", value: command, "aria-label": "command that runs this scenario again",
    onfocus: function () { field.select(); } });
  var done = el("span", { class: "sub", role: "status" });
  var copy = el("button", { type: "button", onclick: function () {
    field.select();
    var copied = navigator.clipboard ? navigator.clipboard.writeText(command).then(function () { return true; }, function () { return false; }) : Promise.resolve(false);
    copied.then(function (ok) { done.textContent = ok || document.execCommand("copy") ? " copied" : " select it and copy"; });
  } }, ["Copy"]);
  return el("div", { class: "rerun" }, [el("span", { class: "sub", text: "Run it again: " }), field, copy, done]);
}

function baselineSection(entry, b) {
  var box = el("div");
  box.appendChild(el("h3", { text: "Against the baseline" }));
  if (b.missing) { box.appendChild(el("p", { text: "Not in the baseline (a new scenario)." })); return box; }
  box.appendChild(el("p", null, ["Status: ", badge(b.status), " → ", badge(entry.status), b.status === entry.status ? " (unchanged)" : " (changed)"]));
  var before = b.usage || {}, now = entry.usage || {};
  box.appendChild(el("table", { class: "deltas" }, [
    el("thead", null, [el("tr", null, ["", "baseline", "this run", "change"].map(function (t) { return el("th", { scope: "col", text: t }); }))]),
    el("tbody", null, [
      ["duration", seconds(b.duration_s), seconds(entry.duration_s), delta(entry.duration_s, b.duration_s, " s", 2)],
      ["requests", before.requests, now.requests, delta(now.requests, before.requests, "", 0)],
      ["input tokens", before.input_tokens, now.input_tokens, delta(now.input_tokens, before.input_tokens, "", 0)],
      ["output tokens", before.output_tokens, now.output_tokens, delta(now.output_tokens, before.output_tokens, "", 0)]
    ].map(function (cells) { return el("tr", null, cells.map(function (c, n) { return el(n ? "td" : "th", { class: n ? "num" : null, scope: n ? null : "row", text: c === undefined ? "" : String(c) }); })); }))]));
  box.appendChild(b.diff ? diffBlock(b.diff) : el("p", { class: "sub", text: "Canonical history identical to the baseline's." }));
  return box;
}

/* The warnings the scenario showed (report.json's `warnings`): each one with its category, module and count. */
function warningsSection(list) {
  var shown = list.reduce(function (sum, w) { return sum + (w.count || 1); }, 0);
  return el("div", { class: "warnings" }, [
    el("h3", { text: "Warnings (" + shown + ")" }),
    el("ul", null, list.map(function (w) {
      return el("li", null, [el("strong", { text: w.category }), ": ", w.message, " ",
        el("span", { class: "sub", text: "(" + w.module + ((w.count || 1) > 1 ? ", shown " + w.count + " times" : "") + ")" })]);
    }))]);
}

function scenarioDetail(row, data, query) {
  var entry = data.entry;
  var box = el("div");
  var prefix = "s" + row.i + "-";
  function pointAt(message, part) {
    var node = document.getElementById(prefix + "m-" + message);
    if (!node) return;
    box.querySelectorAll(".pointed").forEach(function (n) { n.classList.remove("pointed"); });
    node.classList.add("pointed");
    var target = part === null || part === undefined ? node : node.querySelector('[data-part="' + Number(part) + '"]') || node;
    target.classList.add("pointed");
    node.focus({ preventScroll: true });
    target.scrollIntoView({ block: "center" });
  }
  function pointAtTurn(turn) {
    var node = document.getElementById(prefix + "turn-" + turn);
    if (node) { node.focus({ preventScroll: true }); node.scrollIntoView({ block: "start" }); }
  }
  box.appendChild(el("h2", null, [badge(entry.status), " ", entry.name]));
  box.appendChild(facts([entry.path, seconds(entry.duration_s), usageText(entry.usage), attemptsText(entry.attempts), data.events ? "streamed" : null]));
  (data.retries || []).forEach(function (e) { box.appendChild(el("div", { class: "sub", text: "retry, run " + e.run + " turn " + e.turn + ": " + retryText(e) })); });
  box.appendChild(tags(entry.tags));
  box.appendChild(rerunBlock(data.rerun));
  (data.problems || []).forEach(function (p) { box.appendChild(el("div", { class: "error-box", text: "could not read " + p })); });
  if (entry.warnings && entry.warnings.length) box.appendChild(warningsSection(entry.warnings));
  box.appendChild(verdictSection(entry, { pointAt: pointAt, pointAtTurn: pointAtTurn }));
  if (data.baseline) box.appendChild(baselineSection(entry, data.baseline));
  var byCall = new Map(), loose = [];
  (data.subagents || []).forEach(function (run) {
    if (run.call_id) { var id = String(run.call_id); if (!byCall.has(id)) byCall.set(id, []); byCall.get(id).push(run); } else loose.push(run);
  });
  box.appendChild(el("h3", { text: "Conversation (" + data.messages.length + " messages)" }));
  var talk = conversation(data.messages, { turns: entry.turns || [], compaction: data.compaction, subagents: byCall, events: data.call_outcomes, status: entry.status, prefix: prefix });
  if (query) markMatches(talk, query);
  box.appendChild(talk);
  if (loose.length) {
    box.appendChild(el("h3", { text: "Sub-agent runs (the calling tool call is not known)" }));
    loose.forEach(function (run) { box.appendChild(subagentBlock(run, false)); });
  }
  if (data.events) box.appendChild(timeline(data.events, data.events_total));
  box.appendChild(el("h3", { text: "Files" }));
  box.appendChild(el("ul", null, (data.files || []).map(function (f) { return el("li", null, [fileLink(f)]); })));
  return box;
}

/* The searched text marked where it occurs in the conversation (its folded parts opened). */
function markMatches(root, query) {
  var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT), found = [], node;
  while ((node = walker.nextNode())) if (node.nodeValue.toLowerCase().indexOf(query) >= 0) found.push(node);
  found.forEach(function (text) {
    var value = text.nodeValue, lower = value.toLowerCase(), at = 0, next, parts = document.createDocumentFragment();
    while ((next = lower.indexOf(query, at)) >= 0) {
      parts.appendChild(document.createTextNode(value.slice(at, next)));
      parts.appendChild(el("mark", { class: "search", text: value.slice(next, next + query.length) }));
      at = next + query.length;
    }
    parts.appendChild(document.createTextNode(value.slice(at)));
    for (var up = text.parentNode; up && up !== root; up = up.parentNode) if (up.tagName === "DETAILS") up.open = true;
    text.parentNode.replaceChild(parts, text);
  });
}

function runPage() {
  var h = index.head, s = h.summary || {}, t = index.totals, rows = index.rows, base = index.baseline;
  var streamed = rows.filter(function (r) { return r.streamed; }).length;
  var warned = rows.filter(function (r) { return r.warnings; });
  var header = el("header", { class: "top" }, [
    el("h1", { text: "agentrig: " + s.passed + " passed, " + s.failed + " failed, " + s.skipped + " skipped" + (s.error ? ", " + s.error + (s.error === 1 ? " error" : " errors") : "") }),
    facts([s.total + " scenarios", seconds(s.duration_s), "pydantic-ai " + (h.pydantic_ai_version || "?"), index.engine ? "engine " + index.engine : null,
      streamed ? (streamed === rows.length ? "streamed" : "streamed: " + streamed + " of " + rows.length + " scenarios") : null,
      "agentrig " + h.agentrig_version, "Python " + h.python_version, h.model ? "model " + h.model : "scripted models",
      h.shard ? "shard " + h.shard.index + "/" + h.shard.count : null, h.merged_from ? "merged from " + h.merged_from.length + " outputs" : null,
      h.interrupted ? "INTERRUPTED" : null]),
    facts(["usage: " + t.requests + " requests", t.tool_calls + " tool calls", t.input_tokens + " input tokens", t.output_tokens + " output tokens",
      warned.length ? "warnings: " + warned.reduce(function (sum, r) { return sum + r.warnings; }, 0) + " shown in " + warned.length + (warned.length === 1 ? " scenario" : " scenarios") : null]),
    h.totals ? facts(["cost: " + (h.totals.cost_usd === null ? "no price" : "$" + h.totals.cost_usd.toFixed(4)) + (h.totals.spent_usd !== null && h.totals.spent_usd !== h.totals.cost_usd ? " ($" + h.totals.spent_usd.toFixed(4) + " spent live)" : ""),
      h.totals.cost_note, h.totals.not_run_for_budget ? h.totals.not_run_for_budget + " not run: --max-cost $" + h.totals.max_cost_usd + " spent" : null]) : null,
    h.repeats ? facts(["each scenario run " + h.repeats.count + " times", h.repeats.flaky.length ? "flaky: " + h.repeats.flaky.join(", ") : "none flaky"].concat(
      h.repeats.scenarios.filter(function (r) { return r.verdict !== "passed"; }).map(function (r) { return r.name + " " + r.passed + "/" + r.runs + " passed, needs " + Math.round(r.required_rate * 100) + "%: " + r.verdict; }))) : null,
    // Each repeated scenario's pass rate, scores and change against a baseline run, worded by the writer (totals.py).
    index.repeat_lines && index.repeat_lines.length ? el("ul", { class: "repeats" }, index.repeat_lines.map(function (line) {
      return el("li", { text: line.trim(), class: "depth-" + Math.min(3, (line.length - line.trimStart().length) / 2) });
    })) : null]);
  if (base) {
    var changedStatus = rows.filter(function (r) { return r.baseline_status && r.baseline_status !== r.status; }).length;
    var changed = rows.filter(function (r) { return r.changed; }).length;
    var before = index.baseline_totals || {};
    header.appendChild(el("div", { class: "banner" }, [
      "Compared with the baseline ", el("code", { text: base.label }), " (pydantic-ai " + (base.head.pydantic_ai_version || "?") + "): ",
      el("strong", { text: changedStatus + " changed status" }), ", " + changed + " changed (status or canonical history), " +
      rows.filter(function (r) { return r.baseline_status === null; }).length + " new, " + base.only_in_baseline.length + " only in the baseline" +
      (base.only_in_baseline.length ? " (" + base.only_in_baseline.map(function (x) { return x.name; }).slice(0, 20).join(", ") + ")" : "") + ". " +
      "Scenarios in both: time " + delta(before.now_duration_s, before.duration_s, " s", 2) + ", tokens " + delta(before.now_tokens, before.tokens, "", 0) + "."]));
  }
  var columns = [
    { key: "status", title: "Status", width: "96px", cell: function (r) { return el("div", null, [badge(r.status), r.cause ? el("div", { class: "sub", text: r.cause }) : null,
      r.warnings ? el("div", { class: "sub warned", text: r.warnings + (r.warnings === 1 ? " warning" : " warnings") }) : null]); }, sortValue: function (r) { return rank(r.status); } },
    { key: "name", title: "Scenario", width: "minmax(150px, 2fr)", cell: function (r) { return el("div", null, [el("div", { class: "sub", text: r.path || "" })]); }, sortValue: function (r) { return r.name; } },
    { key: "duration", title: "Time", num: true, width: "70px", cell: function (r) { return el("span", { text: seconds(r.duration_s) }); }, sortValue: function (r) { return r.duration_s || 0; } },
    { key: "requests", title: "Req", num: true, width: "48px", cell: function (r) { return el("span", { text: String(r.requests) }); }, sortValue: function (r) { return r.requests; } },
    { key: "tokens", title: "Tokens in / out", num: true, width: "116px", cell: function (r) { return el("span", { text: r.input_tokens + " / " + r.output_tokens }); }, sortValue: function (r) { return r.input_tokens + r.output_tokens; } },
    { key: "cost", title: "Cost", num: true, width: "80px", cell: function (r) { return el("span", { text: r.cost || "—" }); }, sortValue: function (r) { return r.cost_usd || 0; } },
    { key: "tags", title: "Tags", width: "minmax(90px, 1.2fr)", cell: function (r) { return tags(r.tags); }, sortValue: function (r) { return (r.tags || []).join(","); } }];
  if (base) columns.push({ key: "baseline", title: "Baseline", width: "150px", cell: function (r) {
    if (!r.baseline_status) return el("span", { class: "sub", text: "new" });
    return el("div", null, [badge(r.baseline_status), r.changed ? " changed" : "",
      el("div", { class: "sub", text: delta(r.duration_s, r.baseline_duration_s, " s", 2) + " · " + delta(r.input_tokens + r.output_tokens, r.baseline_tokens, " tok", 0) })]);
  }, sortValue: function (r) { return r.changed ? 0 : 1; } });
  var filters = [
    { key: "all", title: "All", test: function () { return true; } },
    { key: "failed", title: "Failed", test: function (r) { return r.status === "failed"; } },
    { key: "passed", title: "Passed", test: function (r) { return r.status === "passed"; } },
    { key: "error", title: "Errors", test: function (r) { return r.status === "error"; } },
    { key: "skipped", title: "Skipped", test: function (r) { return r.status === "skipped"; } }];
  if (warned.length) filters.push({ key: "warnings", title: "Warnings", test: function (r) { return !!r.warnings; } });
  if (base) filters.push({ key: "changed", title: "Changed", test: function (r) { return !!r.changed; } });
  var list = makeList({ rows: rows, columns: columns, filters: filters, defaultSort: "status", linkColumn: 1, label: "scenarios of the run",
    searchConversations: true, statusText: function (r) { return r.status + " " + (r.cause || "") + (r.warnings ? " warnings" : ""); } });
  return layout(header, list, scenarioDetail, rows);
}

function matrixPage() {
  var h = index.head, versions = index.versions, rows = index.rows;
  var regressions = h.regressions || [];
  var header = el("header", { class: "top" }, [
    el("h1", { text: "agentrig matrix: " + (regressions.length ? regressions.length + " regression(s)" : "no regression") + " against " + h.baseline + notBuiltTitle(h) }),
    facts(["versions " + versions.join(", "), "Python " + h.python_version, "generated " + h.generated_on, "agentrig " + h.agentrig_version]),
    facts((h.versions || []).map(function (v) {
      var c = v.counts || {};
      var t = h.axis === "model" ? v.totals : null;
      return v.version + ": " + (c.passed || 0) + " passed, " + (c.failed || 0) + " failed" + (c.error ? ", " + c.error + " errors" : "") + (v.build_error ? " (not built)" : v.error ? " (run error)" : "") +
        (t ? ", " + t.requests + " requests, " + t.input_tokens + " / " + t.output_tokens + " tokens, " + (t.cost_usd === null ? "no price" : "$" + t.cost_usd.toFixed(4)) : "");
    })),
    el("div", { class: "facts" }, versions.filter(function (v) { return own(index.links, v); }).map(function (v) { return el("span", null, [el("a", { href: own(index.links, v), text: v + " report" })]); })),
    matrixEnvironment(h),
    regressions.length ? el("div", { class: "banner" }, ["Regressions: " + regressions.map(regressionText).join("; ")]) : null]);
  function statusOn(r, v) { return own(r.statuses, v) || "missing"; }
  function regressed(r) { return versions.some(function (v) { return statusOn(r, h.baseline) === "passed" && (statusOn(r, v) === "failed" || statusOn(r, v) === "error"); }); }
  function worst(r) { return Math.min.apply(null, versions.map(function (v) { return rank(statusOn(r, v)); })); }
  var columns = [{ key: "name", title: "Scenario", width: "minmax(160px, 2fr)", cell: function (r) { return el("div", null, [tags(r.tags)]); }, sortValue: function (r) { return r.name; } }];
  versions.forEach(function (v) {
    columns.push({ key: "v:" + v, width: "110px", title: v + (v === h.baseline ? " (baseline)" : ""), cell: function (r) { return badge(statusOn(r, v)); }, sortValue: function (r) { return rank(statusOn(r, v)); } });
  });
  columns.push({ key: "canonical", title: "Canonical history", cell: function (r) { return r.canonical_differs.length ? el("strong", { text: "differs on " + r.canonical_differs.join(", ") }) : el("span", { class: "sub", text: "identical" }); }, sortValue: function (r) { return r.canonical_differs.length ? 0 : 1; } });
  columns.unshift({ key: "worst", title: "Worst", width: "84px", cell: function (r) { var w = versions.map(function (v) { return statusOn(r, v); }).sort(function (a, b) { return rank(a) - rank(b); })[0]; return badge(w); }, sortValue: worst });
  var filters = [
    { key: "all", title: "All", test: function () { return true; } },
    { key: "regressions", title: "Regressions", test: regressed },
    { key: "status", title: "Status differs", test: function (r) { return new Set(versions.map(function (v) { return statusOn(r, v); })).size > 1; } },
    { key: "history", title: "History differs", test: function (r) { return r.canonical_differs.length > 0 || r.raw_differs.length > 0; } },
    { key: "failing", title: "Failing somewhere", test: function (r) { return worst(r) < 4; } }];
  var list = makeList({ rows: rows, columns: columns, filters: filters, defaultSort: "worst", linkColumn: 1, label: "scenarios across versions",
    searchConversations: false, statusText: function (r) { return versions.map(function (v) { return statusOn(r, v); }).join(" "); } });
  return layout(header, list, matrixDetail, rows);
}

function matrixDetail(row, data) {
  var box = el("div");
  box.appendChild(el("h2", { text: row.name }));
  box.appendChild(tags(row.tags));
  box.appendChild(el("div", { class: "side" }, index.versions.map(function (v) {
    var cell = own(data.versions, v);
    if (!cell) return el("div", null, [el("strong", { text: v }), " ", badge("missing"), el("p", { class: "sub", text: notReported(index.head, v) })]);
    return el("div", null, [
      el("strong", { text: v }), " ", badge(cell.status), el("div", { class: "sub", text: seconds(cell.duration_s) }),
      cell.error ? el("div", { class: "error-box", text: cell.error.kind + ": " + cell.error.message }) : null,
      el("div", null, cell.checks.map(function (c) { return checkBlock(c, null); })),
      el("div", null, scenarioVersionNotes(data.scenario, v)),
      el("a", { href: cell.folder, text: "files" }),
      own(index.links, v) ? el("span", null, [" · ", el("a", { href: own(index.links, v) + "#" + encodeURIComponent(row.name), text: "conversation" })]) : null]);
  })));
  box.appendChild(el("h3", { text: data.diffs.length ? "Differences from " + index.head.baseline : "No difference from " + index.head.baseline + " in the canonical history or the raw dump" }));
  data.diffs.forEach(function (d) {
    box.appendChild(el("div", null, [el("a", { href: d.file, text: d.name })]));
    box.appendChild(d.text === null ? el("p", { class: "sub", text: "(diff file missing)" }) : diffBlock(d.text));
  });
  return box;
}

// When the page was drawn (with the scenario its address names, once decompressed) and when that drawing was first
// on screen (ms since navigation started): the tests wait for data-ready, bench/bench_report_html.py reads both.
Promise.resolve(index.kind === "matrix" ? matrixPage() : runPage()).then(function () {
  document.documentElement.setAttribute("data-ready", String(Math.round(performance.now())));
  requestAnimationFrame(function () {
    setTimeout(function () { document.documentElement.setAttribute("data-painted", String(Math.round(performance.now()))); }, 0);
  });
});
