/* agentrig report page: draws the table from the index block and a scenario from its own JSON block, on demand.
   No network, no library: plain DOM. Each scenario is a JSON script block with the id ar-sN, the table an ar-index block. */
(function () {
  "use strict";
  var index = JSON.parse(document.getElementById("ar-index").textContent);
  var app = document.getElementById("app");
  var STATUS_RANK = { error: 0, failed: 1, missing: 2, skipped: 3, passed: 4 };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value === null || value === undefined || value === false) return;
        if (key === "text") node.textContent = String(value);
        else if (key === "class") node.className = value;
        else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value === true ? "" : String(value));
      });
    }
    (children || []).forEach(function (child) {
      if (child === null || child === undefined || child === false) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }
  function load(i) { return JSON.parse(document.getElementById("ar-s" + i).textContent); }
  function badge(status, prefix) { return el("span", { class: "badge " + (prefix || "s-") + status, text: status }); }
  function pretty(value) { return typeof value === "string" ? value : JSON.stringify(value, null, 2); }
  function pre(value) { return el("pre", { text: pretty(value) }); }
  function seconds(value) { return value === null || value === undefined ? "" : Number(value).toFixed(2) + " s"; }
  function tags(list) { return el("span", null, (list || []).map(function (t) { return el("span", { class: "tag", text: t }); })); }
  function usageText(u) {
    if (!u) return "";
    var text = (u.requests || 0) + " req · " + (u.input_tokens || 0) + " in / " + (u.output_tokens || 0) + " out tokens";
    if (u.tool_calls) text += " · " + u.tool_calls + " tool calls";
    if (u.estimated) text += " (estimated)";
    return text;
  }
  function diffBlock(text) {
    var block = el("pre", { class: "diff" });
    text.split("\n").forEach(function (line, n, all) {
      if (n === all.length - 1 && line === "") return;
      var cls = /^(\+\+\+|---) /.test(line) ? "file" : line[0] === "+" ? "add" : line[0] === "-" ? "del" : line.slice(0, 2) === "@@" ? "hunk" : null;
      block.appendChild(cls ? el("span", { class: cls, text: line }) : document.createTextNode(line + "\n"));
    });
    return block;
  }
  function detailText(text) { return /^--- /.test(text) ? diffBlock(text) : pre(text); }
  function facts(items) {
    return el("div", { class: "facts" }, items.filter(Boolean).map(function (t) { return el("span", { text: t }); }));
  }

  /* ---------------------------------------------------------------- list: filters, search, sorting */
  function makeList(options) {
    var state = { filter: "all", query: "", sort: options.defaultSort, asc: true };
    var rows = options.rows;
    var trs = rows.map(function (row) {
      var tr = el("tr", { "data-i": row.i, onclick: function () { location.hash = "#" + encodeURIComponent(row.name); } },
        options.columns.map(function (c) { return el("td", { class: c.num ? "num" : null }, [c.cell(row)]); }));
      row._search = (row.name + " " + (row.path || "") + " " + (row.tags || []).join(" ") + " " + options.statusText(row)).toLowerCase();
      row._tr = tr;
      return tr;
    });
    var tbody = el("tbody", null, trs);
    var heads = options.columns.map(function (c) {
      return el("th", { class: c.num ? "num" : null, title: "sort", onclick: function () {
        state.asc = state.sort === c.key ? !state.asc : true; state.sort = c.key; apply();
      } }, [c.title]);
    });
    var counter = el("span", { class: "count" });
    var buttons = options.filters.map(function (f) {
      var count = rows.filter(f.test).length;
      var button = el("button", { "data-filter": f.key, onclick: function () { state.filter = f.key; apply(); } }, [f.title + " (" + count + ")"]);
      button._key = f.key;
      return button;
    });
    var search = el("input", { type: "search", placeholder: "search name, path, tag, status", oninput: function () { state.query = search.value.trim().toLowerCase(); apply(); } });
    function apply() {
      var filter = options.filters.filter(function (f) { return f.key === state.filter; })[0];
      var column = options.columns.filter(function (c) { return c.key === state.sort; })[0];
      var shown = 0;
      rows.forEach(function (row) {
        var visible = filter.test(row) && (!state.query || row._search.indexOf(state.query) >= 0);
        row._tr.hidden = !visible;
        if (visible) shown++;
      });
      var sorted = rows.slice().sort(function (a, b) {
        var x = column.sortValue(a), y = column.sortValue(b);
        var order = x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
        return state.asc ? order : -order;
      });
      sorted.forEach(function (row) { tbody.appendChild(row._tr); });
      heads.forEach(function (th, n) {
        th.className = (options.columns[n].num ? "num " : "") + (options.columns[n].key === state.sort ? "sorted" + (state.asc ? " asc" : "") : "");
      });
      buttons.forEach(function (b) { b.className = b._key === state.filter ? "on" : ""; });
      counter.textContent = shown + " of " + rows.length + " shown";
    }
    apply();
    return {
      toolbar: el("div", { class: "toolbar" }, buttons.concat([search, counter])),
      table: el("table", { id: "scenarios" }, [el("thead", null, [el("tr", null, heads)]), tbody]),
      select: function (i) { rows.forEach(function (row) { row._tr.classList.toggle("selected", row.i === i); }); }
    };
  }

  function layout(header, list, showDetail, rows) {
    var detail = el("section", { id: "detail" }, [el("p", { class: "empty", text: "Select a scenario to see its conversation, its checks and what changed." })]);
    app.appendChild(header);
    app.appendChild(list.toolbar);
    app.appendChild(el("main", null, [el("section", { id: "list" }, [list.table]), detail]));
    function route() {
      var name = decodeURIComponent(location.hash.slice(1));
      var row = rows.filter(function (r) { return r.name === name; })[0];
      if (!row) return;
      list.select(row.i);
      detail.textContent = "";
      detail.appendChild(showDetail(row, load(row.i)));
      detail.scrollTop = 0;
    }
    window.addEventListener("hashchange", route);
    route();
  }

  /* ---------------------------------------------------------------- one scenario's conversation */
  function callOutcomes(messages, fromEvents) {
    var outcomes = {};
    messages.forEach(function (m) {
      (m.parts || []).forEach(function (p) {
        if (p.part_kind === "tool-return") outcomes[p.tool_call_id] = p.outcome || "success";
        if (p.part_kind === "retry-prompt" && p.tool_call_id) outcomes[p.tool_call_id] = "retried";
      });
    });
    Object.keys(fromEvents || {}).forEach(function (id) {
      if (!outcomes[id]) outcomes[id] = fromEvents[id] === "retry" ? "retried" : fromEvents[id];
    });
    return outcomes;
  }

  function renderPart(part, kind, ctx) {
    var k = part.part_kind;
    if (k === "text" && kind === "request") return el("div", { class: "part" }, [el("div", { class: "label", text: "User" }), pre(part.content)]);
    if (k === "system-prompt") return el("div", { class: "part" }, [el("div", { class: "label", text: "System prompt" }), pre(part.content)]);
    if (k === "text") {
      var interrupted = typeof part.content === "string" && part.content.indexOf("[INTERRUPTED]") === 0;
      return el("div", { class: "part" + (interrupted ? " interrupted" : "") }, [
        el("div", { class: "label" }, ["Text ", interrupted ? badge("interrupted", "o-") : null]), pre(part.content)]);
    }
    if (k === "thought") {
      return el("details", { class: "part" }, [el("summary", { class: "label", text: "Thinking (" + String(part.content || "").length + " chars)" }), pre(part.content)]);
    }
    if (k === "tool-call") {
      var outcome = ctx.outcomes[part.tool_call_id] || (ctx.last ? "pending" : "unanswered");
      var raw = typeof part.args === "string";
      var node = el("div", { class: "part" }, [
        el("div", { class: "label" }, ["Tool call ", el("code", { text: part.tool_name }), " ", el("span", { class: "sub", text: part.tool_call_id }), " ",
          // deferred to the host, answered in a later run: both are true, both are shown
          ctx.deferred[part.tool_call_id] && outcome !== "deferred" ? el("span", null, [badge("deferred", "o-"), " then "]) : null, badge(outcome, "o-")]),
        raw ? el("div", { class: "sub", text: "arguments are not a JSON object (kept as the model wrote them)" }) : null,
        pre(part.args)]);
      (ctx.subagents[part.tool_call_id] || []).forEach(function (run) { node.appendChild(subagentBlock(run, true)); });
      return node;
    }
    if (k === "tool-return") {
      return el("div", { class: "part" }, [
        el("div", { class: "label" }, ["Tool return ", el("code", { text: part.tool_name || "" }), " ", el("span", { class: "sub", text: part.tool_call_id }), " ", badge(part.outcome || "success", "o-")]),
        pre(part.content)]);
    }
    if (k === "retry-prompt") {
      return el("div", { class: "part" }, [
        el("div", { class: "label" }, [part.tool_name ? "Retry prompt for tool " : "Retry prompt (output)", part.tool_name ? el("code", { text: part.tool_name }) : null, " ", el("span", { class: "sub", text: part.tool_call_id || "" }), " ", badge("retried", "o-")]),
        pre(part.content)]);
    }
    return el("div", { class: "part" }, [el("div", { class: "label", text: "Part " + k }), pre(part)]);
  }

  function subagentBlock(run, open) {
    return el("details", { class: "nested", open: open }, [
      el("summary", { class: "label", text: "Sub-agent " + run.spec + (run.run ? ", run " + run.run : "") + " (" + run.messages.length + " messages)" }),
      conversation(run.messages, { turns: [], compaction: null, subagents: {}, events: {} })]);
  }

  function conversation(messages, info) {
    var box = el("div");
    var outcomes = callOutcomes(messages, info.events);
    var deferred = {};
    Object.keys(info.events || {}).forEach(function (id) { if (info.events[id] === "deferred") deferred[id] = true; });
    var compacted = info.compaction ? info.compaction.compacted_message_count || 0 : 0;
    var turn = 0;
    function turnHeader(t) {
      var head = el("div", { class: "turn" }, [
        el("strong", { text: "Turn " + (t.index !== undefined ? t.index + 1 : turn) }), " ",
        t.interrupted ? badge("interrupted", "o-") : null, t.error ? badge("error") : null,
        el("span", { class: "usage", text: "  " + usageText(t.usage) + (t.duration_s !== undefined ? " · " + seconds(t.duration_s) : "") })]);
      if (t.instructions) head.appendChild(el("details", null, [el("summary", { class: "sub", text: "Instructions the model got" }), pre(t.instructions)]));
      if (t.error) head.appendChild(el("div", { class: "error-box", text: t.error.kind + ": " + t.error.message }));
      return head;
    }
    messages.forEach(function (m, n) {
      if (info.compaction && n === compacted && compacted > 0) box.appendChild(compactionBlock(info.compaction));
      var parts = m.parts || [];
      if (m.kind === "request" && parts.some(function (p) { return p.part_kind === "text"; }) && turn < info.turns.length) {
        box.appendChild(turnHeader(info.turns[turn++]));
      }
      var last = n === messages.length - 1;
      var ctx = { outcomes: outcomes, subagents: info.subagents, last: last, deferred: deferred };
      var who = m.kind === "request" ? "REQUEST" : "MODEL RESPONSE";
      var msg = el("div", { class: "msg " + m.kind + (n < compacted ? " summarized" : "") }, [
        el("div", { class: "who" }, [who, n < compacted ? " (summarized for the model)" : "", m.usage ? el("span", { class: "usage", text: "  " + usageText(m.usage) }) : null])]);
      parts.forEach(function (p) { msg.appendChild(renderPart(p, m.kind, ctx)); });
      box.appendChild(msg);
    });
    while (turn < info.turns.length) box.appendChild(turnHeader(info.turns[turn++]));
    return box;
  }

  function compactionBlock(c) {
    return el("div", { class: "compaction" }, [
      el("strong", { text: "Compaction" }),
      el("span", { class: "sub", text: "  the " + c.compacted_message_count + " messages above were summarized for the model (about " + c.tokens_before + " → " + c.tokens_after + " tokens, compaction " + c.count + ")" }),
      pre(c.summary),
      c.previous_summary ? el("details", null, [el("summary", { class: "sub", text: "previous summary" }), pre(c.previous_summary)]) : null]);
  }

  function checkBlock(check) {
    var status = check.skipped_reason ? "skipped" : check.passed ? "passed" : "failed";
    return el("div", { class: "check " + status }, [
      el("div", null, [badge(status), " ", el("strong", { text: check.name })]),
      el("div", { class: "kv" }, [
        el("span", { class: "sub", text: "expected" }), pre(check.expected === undefined ? null : check.expected),
        el("span", { class: "sub", text: "actual" }), pre(check.actual === undefined ? null : check.actual)]),
      check.skipped_reason ? el("div", { class: "sub", text: check.skipped_reason }) : null,
      check.detail ? detailText(check.detail) : null]);
  }

  function eventText(e) {
    if (e.type === "message_update") return (e.part_kind || "") + (e.tool_name ? " " + e.tool_name : "") + ": " + String(e.delta || "").slice(0, 200);
    if (e.type === "tool_execution_start") return e.tool_name + " " + JSON.stringify(e.args).slice(0, 200);
    if (e.type === "tool_execution_end") return e.tool_name + " → " + e.outcome;
    if (e.type === "message_end") return e.state + (e.usage ? " · " + usageText(e.usage) : "");
    if (e.type === "agent_end") return e.outcome + (e.error ? " · " + e.error.kind + ": " + e.error.message : "");
    if (e.type === "agent_start") return e.prompt ? String(e.prompt).slice(0, 200) : "(resumes deferred calls)";
    if (e.type === "request_retry") return retryText(e);
    return "";
  }
  function retryText(e) {
    return "request " + e.request + ", attempt " + e.attempt + ": " + (e.status ? "HTTP " + e.status + " " : "") + e.kind + ", retried after " + seconds(e.wait_s) + " · " + e.message;
  }
  function attemptsText(a) {
    return a ? a.attempts + " attempts for " + a.requests + " requests, " + a.retries + " retries (" + seconds(a.retry_wait_s) + " waited), " + seconds(a.queue_wait_s) + " queued" : null;
  }

  function scenarioDetail(row, data) {
    var entry = data.entry;
    var box = el("div");
    box.appendChild(el("h2", null, [badge(entry.status), " ", entry.name]));
    box.appendChild(facts([entry.path, seconds(entry.duration_s), usageText(entry.usage), attemptsText(entry.attempts)]));
    (data.retries || []).forEach(function (e) { box.appendChild(el("div", { class: "sub", text: "retry, run " + e.run + " turn " + e.turn + ": " + retryText(e) })); });
    box.appendChild(tags(entry.tags));
    if (entry.error) box.appendChild(el("div", { class: "error-box" }, [el("strong", { text: entry.error.kind + ": " }), entry.error.message]));
    (data.problems || []).forEach(function (p) { box.appendChild(el("div", { class: "error-box", text: "could not read " + p })); });
    var checks = entry.checks || [];
    var failed = checks.filter(function (c) { return !c.passed && !c.skipped_reason; });
    box.appendChild(el("h3", { text: failed.length ? "Why it failed: " + failed.length + " check(s)" : "Checks" }));
    failed.forEach(function (c) { box.appendChild(checkBlock(c)); });
    var others = checks.filter(function (c) { return failed.indexOf(c) < 0; });
    if (others.length) box.appendChild(el("details", { open: !failed.length && others.length <= 12 }, [el("summary", { text: (failed.length ? "Other checks" : "All checks") + " (" + others.length + ")" })].concat(others.map(checkBlock))));
    if (data.baseline) {
      var b = data.baseline;
      box.appendChild(el("h3", { text: "Against the baseline" }));
      if (b.missing) box.appendChild(el("p", { text: "Not in the baseline (a new scenario)." }));
      else {
        box.appendChild(el("p", null, ["Status: ", badge(b.status), " → ", badge(entry.status), b.status === entry.status ? " (unchanged)" : " (changed)"]));
        box.appendChild(b.diff ? diffBlock(b.diff) : el("p", { class: "sub", text: "Canonical history identical to the baseline's." }));
      }
    }
    var byCall = {}, loose = [];
    (data.subagents || []).forEach(function (run) { if (run.call_id) (byCall[run.call_id] = byCall[run.call_id] || []).push(run); else loose.push(run); });
    box.appendChild(el("h3", { text: "Conversation (" + data.messages.length + " messages)" }));
    box.appendChild(conversation(data.messages, { turns: entry.turns || [], compaction: data.compaction, subagents: byCall, events: data.call_outcomes }));
    if (loose.length) {
      box.appendChild(el("h3", { text: "Sub-agent runs (the calling tool call is not known)" }));
      loose.forEach(function (run) { box.appendChild(subagentBlock(run, false)); });
    }
    if (data.events) {
      var rowsOut = data.events.map(function (e) {
        return el("tr", null, [el("td", { class: "num", text: e.seq }), el("td", { text: e.run + (e.turn ? "." + e.turn : "") }), el("td", { text: e.type }), el("td", { text: eventText(e) })]);
      });
      box.appendChild(el("details", null, [
        el("summary", { text: "Event timeline (streamed: " + data.events.length + (data.events_total > data.events.length ? " of " + data.events_total : "") + " events)" }),
        el("table", null, [el("thead", null, [el("tr", null, ["seq", "run.turn", "type", "what"].map(function (t) { return el("th", { text: t }); }))]), el("tbody", null, rowsOut)])]));
    }
    box.appendChild(el("h3", { text: "Files" }));
    box.appendChild(el("ul", null, (data.files || []).map(function (f) { return el("li", null, [el("a", { href: f, text: f.split("/").slice(-2).join("/") })]); })));
    return box;
  }

  /* ---------------------------------------------------------------- the run */
  function runPage() {
    var h = index.head, s = h.summary || {}, t = index.totals, rows = index.rows, base = index.baseline;
    var header = el("header", { class: "top" }, [
      el("h1", { text: "agentrig: " + s.passed + " passed, " + s.failed + " failed, " + s.skipped + " skipped" + (s.error ? ", " + s.error + " errors" : "") }),
      facts([s.total + " scenarios", seconds(s.duration_s), "pydantic-ai " + (h.pydantic_ai_version || "?"), index.engine ? "engine " + index.engine : null,
        "agentrig " + h.agentrig_version, "Python " + h.python_version, h.model ? "model " + h.model : "scripted models",
        h.shard ? "shard " + h.shard.index + "/" + h.shard.count : null, h.merged_from ? "merged from " + h.merged_from.length + " outputs" : null,
        h.interrupted ? "INTERRUPTED" : null]),
      facts(["usage: " + t.requests + " requests", t.tool_calls + " tool calls", t.input_tokens + " input tokens", t.output_tokens + " output tokens"])]);
    if (base) {
      var changedStatus = rows.filter(function (r) { return r.baseline_status && r.baseline_status !== r.status; }).length;
      var changed = rows.filter(function (r) { return r.changed; }).length;
      header.appendChild(el("div", { class: "banner" }, [
        "Compared with the baseline ", el("code", { text: base.label }), " (pydantic-ai " + (base.head.pydantic_ai_version || "?") + "): ",
        el("strong", { text: changedStatus + " changed status" }), ", " + changed + " changed (status or canonical history), " +
        rows.filter(function (r) { return r.baseline_status === null; }).length + " new, " + base.only_in_baseline.length + " only in the baseline" +
        (base.only_in_baseline.length ? " (" + base.only_in_baseline.map(function (x) { return x.name; }).slice(0, 20).join(", ") + ")" : "") + "."]));
    }
    var columns = [
      { key: "status", title: "Status", cell: function (r) { return badge(r.status); }, sortValue: function (r) { return STATUS_RANK[r.status]; } },
      { key: "name", title: "Scenario", cell: function (r) { return el("div", null, [el("div", { text: r.name }), el("div", { class: "sub", text: r.path || "" })]); }, sortValue: function (r) { return r.name; } },
      { key: "duration", title: "Time", num: true, cell: function (r) { return seconds(r.duration_s); }, sortValue: function (r) { return r.duration_s || 0; } },
      { key: "requests", title: "Req", num: true, cell: function (r) { return String(r.requests); }, sortValue: function (r) { return r.requests; } },
      { key: "tokens", title: "Tokens in / out", num: true, cell: function (r) { return r.input_tokens + " / " + r.output_tokens; }, sortValue: function (r) { return r.input_tokens + r.output_tokens; } },
      { key: "tags", title: "Tags", cell: function (r) { return tags(r.tags); }, sortValue: function (r) { return (r.tags || []).join(","); } }];
    if (base) columns.push({ key: "baseline", title: "Baseline", cell: function (r) { return r.baseline_status ? el("span", null, [badge(r.baseline_status), r.changed ? " changed" : ""]) : el("span", { class: "sub", text: "new" }); }, sortValue: function (r) { return r.changed ? 0 : 1; } });
    var filters = [
      { key: "all", title: "All", test: function () { return true; } },
      { key: "failed", title: "Failed", test: function (r) { return r.status === "failed"; } },
      { key: "passed", title: "Passed", test: function (r) { return r.status === "passed"; } },
      { key: "error", title: "Errors", test: function (r) { return r.status === "error"; } },
      { key: "skipped", title: "Skipped", test: function (r) { return r.status === "skipped"; } }];
    if (base) filters.push({ key: "changed", title: "Changed", test: function (r) { return !!r.changed; } });
    var list = makeList({ rows: rows, columns: columns, filters: filters, defaultSort: "status", statusText: function (r) { return r.status; } });
    layout(header, list, scenarioDetail, rows);
  }

  /* ---------------------------------------------------------------- the matrix */
  function matrixPage() {
    var h = index.head, versions = index.versions, rows = index.rows;
    var regressions = h.regressions || [];
    var header = el("header", { class: "top" }, [
      el("h1", { text: "agentrig matrix: " + (regressions.length ? regressions.length + " regression(s)" : "no regression") + " against " + h.baseline }),
      facts(["versions " + versions.join(", "), "Python " + h.python_version, "generated " + h.generated_on, "agentrig " + h.agentrig_version]),
      facts((h.versions || []).map(function (v) {
        var c = v.counts || {};
        return v.version + ": " + (c.passed || 0) + " passed, " + (c.failed || 0) + " failed" + (c.error ? ", " + c.error + " errors" : "") + (v.error ? " (run error)" : "");
      })),
      el("div", { class: "facts" }, versions.filter(function (v) { return index.links[v]; }).map(function (v) { return el("span", null, [el("a", { href: index.links[v], text: v + " report" })]); })),
      regressions.length ? el("div", { class: "banner" }, ["Regressions: " + regressions.map(function (r) { return r.scenario + " (" + r.status + " on " + r.version + ")"; }).join(", ")]) : null]);
    function regressed(r) { return versions.some(function (v) { return r.statuses[h.baseline] === "passed" && (r.statuses[v] === "failed" || r.statuses[v] === "error"); }); }
    function worst(r) { return Math.min.apply(null, versions.map(function (v) { var rank = STATUS_RANK[r.statuses[v] || "missing"]; return rank === undefined ? 2 : rank; })); }
    var columns = [{ key: "name", title: "Scenario", cell: function (r) { return el("div", null, [el("div", { text: r.name }), tags(r.tags)]); }, sortValue: function (r) { return r.name; } }];
    versions.forEach(function (v) {
      columns.push({ key: "v:" + v, title: v + (v === h.baseline ? " (baseline)" : ""), cell: function (r) { return badge(r.statuses[v] || "missing"); }, sortValue: function (r) { var x = STATUS_RANK[r.statuses[v] || "missing"]; return x === undefined ? 2 : x; } });
    });
    columns.push({ key: "canonical", title: "Canonical history", cell: function (r) { return r.canonical_differs.length ? el("strong", { text: "differs on " + r.canonical_differs.join(", ") }) : el("span", { class: "sub", text: "identical" }); }, sortValue: function (r) { return r.canonical_differs.length ? 0 : 1; } });
    columns.unshift({ key: "worst", title: "Worst", cell: function (r) { var w = versions.map(function (v) { return r.statuses[v] || "missing"; }).sort(function (a, b) { return (STATUS_RANK[a] || 0) - (STATUS_RANK[b] || 0); })[0]; return badge(w); }, sortValue: worst });
    var filters = [
      { key: "all", title: "All", test: function () { return true; } },
      { key: "regressions", title: "Regressions", test: regressed },
      { key: "status", title: "Status differs", test: function (r) { var set = {}; versions.forEach(function (v) { set[r.statuses[v] || "missing"] = 1; }); return Object.keys(set).length > 1; } },
      { key: "history", title: "History differs", test: function (r) { return r.canonical_differs.length > 0 || r.raw_differs.length > 0; } },
      { key: "failing", title: "Failing somewhere", test: function (r) { return worst(r) < 4; } }];
    var list = makeList({ rows: rows, columns: columns, filters: filters, defaultSort: "worst", statusText: function (r) { return versions.map(function (v) { return r.statuses[v]; }).join(" "); } });
    layout(header, list, matrixDetail, rows);
  }

  function matrixDetail(row, data) {
    var box = el("div");
    box.appendChild(el("h2", { text: row.name }));
    box.appendChild(tags(row.tags));
    box.appendChild(el("div", { class: "side" }, index.versions.map(function (v) {
      var cell = data.versions[v];
      if (!cell) return el("div", null, [el("strong", { text: v }), " ", badge("missing"), el("p", { class: "sub", text: "not reported on this version" })]);
      return el("div", null, [
        el("strong", { text: v }), " ", badge(cell.status), el("div", { class: "sub", text: seconds(cell.duration_s) }),
        cell.error ? el("div", { class: "error-box", text: cell.error.kind + ": " + cell.error.message }) : null,
        el("div", null, cell.checks.map(checkBlock)),
        el("a", { href: cell.folder, text: "files" }),
        index.links[v] ? el("span", null, [" · ", el("a", { href: index.links[v] + "#" + encodeURIComponent(row.name), text: "conversation" })]) : null]);
    })));
    box.appendChild(el("h3", { text: data.diffs.length ? "Differences from " + index.head.baseline : "No difference from " + index.head.baseline + " in the canonical history or the raw dump" }));
    data.diffs.forEach(function (d) {
      box.appendChild(el("div", null, [el("a", { href: d.file, text: d.name })]));
      box.appendChild(d.text === null ? el("p", { class: "sub", text: "(diff file missing)" }) : diffBlock(d.text));
    });
    return box;
  }

  if (index.kind === "matrix") matrixPage(); else runPage();
  // When the page was drawn (ms since navigation started): the tests wait for it, bench/bench_report_html.py reads it.
  document.documentElement.setAttribute("data-ready", String(Math.round(performance.now())));
})();
