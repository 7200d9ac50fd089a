/* One scenario's conversation: turns, messages numbered as history.json holds them (message[0], ...), parts with
   tool outcomes, compaction, sub-agent runs; and the event timeline of a streamed run. Everything keyed by a tool
   call id is a Map: an id is data (`constructor`, `__proto__` included). */

function callOutcomes(messages, fromEvents) {
  var outcomes = new Map();
  messages.forEach(function (m) {
    (m.parts || []).forEach(function (p) {
      if (p.part_kind === "tool-return") outcomes.set(String(p.tool_call_id), p.outcome || "success");
      if (p.part_kind === "retry-prompt" && p.tool_call_id) outcomes.set(String(p.tool_call_id), "retried");
    });
  });
  Object.keys(fromEvents || {}).forEach(function (id) {
    var outcome = own(fromEvents, id);
    if (!outcomes.has(id)) outcomes.set(id, outcome === "retry" ? "retried" : String(outcome));
  });
  return outcomes;
}

function renderPart(part, kind, ctx, number) {
  var k = part.part_kind, node;
  if (k === "text" && kind === "request") node = el("div", { class: "part" }, [el("div", { class: "label", text: "User" }), pre(part.content)]);
  else if (k === "user-content") node = el("div", { class: "part" }, [el("div", { class: "label", text: "User" }), userContent(part.content)]);
  else if (k === "system-prompt") node = el("div", { class: "part" }, [el("div", { class: "label", text: "System prompt" }), pre(part.content)]);
  else if (k === "text") {
    var interrupted = typeof part.content === "string" && part.content.indexOf("[INTERRUPTED]") === 0;
    node = el("div", { class: "part" + (interrupted ? " interrupted" : "") }, [
      el("div", { class: "label" }, ["Text ", interrupted ? badge("interrupted", "o-") : null]), pre(part.content)]);
  } else if (k === "thought") {
    node = el("details", { class: "part" }, [el("summary", { class: "label", text: "Thinking (" + String(part.content || "").length + " chars)" }), pre(part.content)]);
  } else if (k === "tool-call") {
    var id = String(part.tool_call_id);
    var outcome = ctx.outcomes.get(id) || (ctx.last ? "pending" : "unanswered");
    node = el("div", { class: "part" }, [
      el("div", { class: "label" }, ["Tool call ", el("code", { text: part.tool_name }), " ", el("span", { class: "sub", text: part.tool_call_id }), " ",
        // deferred to the host, answered in a later run: both are true, both are shown
        ctx.deferred.has(id) && outcome !== "deferred" ? el("span", null, [badge("deferred", "o-"), " then "]) : null, badge(outcome, "o-")]),
      typeof part.args === "string" ? el("div", { class: "sub", text: "arguments are not a JSON object (kept as the model wrote them)" }) : null,
      pre(part.args)]);
    (ctx.subagents.get(id) || []).forEach(function (run) { node.appendChild(subagentBlock(run, true)); });
  } else if (k === "tool-return") {
    node = el("div", { class: "part" }, [
      el("div", { class: "label" }, ["Tool return ", el("code", { text: part.tool_name || "" }), " ", el("span", { class: "sub", text: part.tool_call_id }), " ", badge(part.outcome || "success", "o-")]),
      pre(part.content)]);
  } else if (k === "retry-prompt") {
    node = el("div", { class: "part" }, [
      el("div", { class: "label" }, [part.tool_name ? "Retry prompt for tool " : "Retry prompt (output)", part.tool_name ? el("code", { text: part.tool_name }) : null, " ", el("span", { class: "sub", text: part.tool_call_id || "" }), " ", badge("retried", "o-")]),
      pre(part.content)]);
  } else node = el("div", { class: "part" }, [el("div", { class: "label", text: "Part " + k }), pre(part)]);
  node.setAttribute("data-part", String(number));
  return node;
}

function subagentBlock(run, open) {
  return el("details", { class: "nested", open: open }, [
    el("summary", { class: "label", text: "Sub-agent " + run.spec + (run.run ? ", run " + run.run : "") + " (" + run.messages.length + " messages)" }),
    conversation(run.messages, { turns: [], compaction: null, subagents: new Map(), events: {}, status: "passed", prefix: null })]);
}

/* The part of a request that holds the user's message: text, or text with attachments. */
function promptPart(parts) {
  for (var n = 0; n < parts.length; n++) if (parts[n].part_kind === "text" || parts[n].part_kind === "user-content") return parts[n];
  return null;
}

/* A turn's header; `prompt` is the user's message that starts it in the conversation (its attachments are listed),
   or null for a turn placed after the conversation, which shows the prompt as report.json records it. */
function turnHeader(t, number, status, prefix, prompt) {
  var errorClass = status === "error" ? "s-error" : "s-failed";
  var head = el("div", { class: "turn", id: prefix ? prefix + "turn-" + number : null, tabindex: prefix ? "-1" : null }, [
    el("strong", { text: "Turn " + number }), " ",
    t.interrupted ? badge("interrupted", "o-") : null, t.error ? el("span", { class: "badge " + errorClass, text: t.error.kind }) : null,
    t.simulated ? el("span", { class: "sub simulated", text: "simulated, written by " + t.simulated.user + (t.simulated.ended ? " (ended: " + t.simulated.ended + ")" : "") }) : null,
    el("span", { class: "usage", text: "  " + usageText(t.usage) + (t.duration_s !== undefined ? " · " + seconds(t.duration_s) : "") })]);
  if (prompt) head.appendChild(attachmentSummary(prompt) || document.createTextNode(""));
  else if (typeof t.prompt === "string") head.appendChild(el("div", { class: "sub" }, ["User, as report.json records it: ", el("span", { class: "recorded-prompt", text: t.prompt })]));
  if (t.instructions) head.appendChild(el("details", null, [el("summary", { class: "sub", text: "Instructions the model got" }), pre(t.instructions)]));
  if (t.error) head.appendChild(el("div", { class: "error-box", text: t.error.kind + ": " + t.error.message }));
  return head;
}

function conversation(messages, info) {
  var box = el("div", { class: "conversation" });
  var outcomes = callOutcomes(messages, info.events);
  var deferred = new Set();
  Object.keys(info.events || {}).forEach(function (id) { if (own(info.events, id) === "deferred") deferred.add(id); });
  var compacted = info.compaction ? info.compaction.compacted_message_count || 0 : 0;
  var turn = 0;
  messages.forEach(function (m, n) {
    if (info.compaction && n === compacted && compacted > 0) box.appendChild(compactionBlock(info.compaction));
    var parts = m.parts || [];
    var prompt = m.kind === "request" ? promptPart(parts) : null;
    if (prompt && turn < info.turns.length) {
      var t = info.turns[turn++];
      box.appendChild(turnHeader(t, t.index !== undefined ? t.index + 1 : turn, info.status, info.prefix, prompt));
    }
    var ctx = { outcomes: outcomes, subagents: info.subagents, last: n === messages.length - 1, deferred: deferred };
    var who = m.kind === "request" ? "REQUEST" : "MODEL RESPONSE";
    var msg = el("div", { class: "msg " + m.kind + (n < compacted ? " summarized" : ""), id: info.prefix ? info.prefix + "m-" + n : null, tabindex: info.prefix ? "-1" : null }, [
      el("div", { class: "who" }, [el("span", { class: "number", text: "message[" + n + "]" }), " " + who, n < compacted ? " (summarized for the model)" : "",
        m.usage ? el("span", { class: "usage", text: "  " + usageText(m.usage) }) : null])]);
    parts.forEach(function (p, number) { msg.appendChild(renderPart(p, m.kind, ctx, number)); });
    box.appendChild(msg);
  });
  while (turn < info.turns.length) {
    var rest = info.turns[turn++];
    box.appendChild(turnHeader(rest, rest.index !== undefined ? rest.index + 1 : turn, info.status, info.prefix, null));
  }
  return box;
}

function compactionBlock(c) {
  return el("div", { class: "compaction" }, [
    el("strong", { text: "Compaction" }),
    el("span", { class: "sub", text: "  the " + c.compacted_message_count + " messages above were summarized for the model (about " + c.tokens_before + " → " + c.tokens_after + " tokens, compaction " + c.count + ")" }),
    pre(c.summary),
    c.previous_summary ? el("details", null, [el("summary", { class: "sub", text: "previous summary" }), pre(c.previous_summary)]) : null]);
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

/* The event log of a streamed run, with when each event happened (seconds since the log began) and the time
   since the one before; logs written before events carried a time show none. */
function timeline(events, total) {
  var previous = null;
  var rows = events.map(function (e) {
    var t = typeof e.t === "number" ? e.t : null;
    var gap = t !== null && previous !== null ? t - previous : null;
    if (t !== null) previous = t;
    return el("tr", null, [
      el("td", { class: "num", text: t === null ? "" : t.toFixed(3) }),
      el("td", { class: "num", text: gap === null ? "" : "+" + (gap * 1000).toFixed(0) + " ms" }),
      el("td", { class: "num", text: e.seq }), el("td", { text: e.run + (e.turn ? "." + e.turn : "") }),
      el("td", { text: e.type }), el("td", { text: eventText(e) })]);
  });
  var wrapper = el("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": "event timeline" }, [
    el("table", { class: "events" }, [
      el("thead", null, [el("tr", null, ["t (s)", "since previous", "seq", "run.turn", "type", "what"].map(function (t) { return el("th", { scope: "col", text: t }); }))]),
      el("tbody", null, rows)])]);
  return el("details", null, [
    el("summary", { text: "Event timeline (streamed: " + events.length + (total > events.length ? " of " + total : "") + " events" + (previous !== null ? ", " + previous.toFixed(3) + " s" : "") + ")" }),
    wrapper]);
}
