/* Why a scenario failed: its cause (the turn error that ended it, when there is one) and each failed check drawn
   for what it checks: a diff of expected and actual, the text a needle was (not) found in, the message an
   invariant points at. */

var CAUSES = new Map([
  ["tool_failed", "a tool raised an error nothing expected"],
  ["timeout", "the turn ran longer than settings.timeout"],
  ["max_iterations", "the agent made more requests than settings.max_iterations allows"],
  ["usage_limit", "the run hit a usage limit"],
  ["script_exhausted", "the model script ran out of steps"],
  ["script_mismatch", "the run did not follow the model script"],
  ["replay_mismatch", "a request was not in the recording"],
  ["unexpected_model_behavior", "pydantic-ai stopped on the model's behaviour"],
  ["unsupported", "this engine or environment cannot run the scenario (a feature or an extra it needs)"],
  ["agent_error", "the agent, its tools or its loading raised"]]);
var PROVIDER_KINDS = new Set(["context_length", "rate_limit", "server_error", "request_rejected", "auth", "connection"]);

function checkKind(name) { var at = name.lastIndexOf(": "); return at < 0 ? name : name.slice(at + 2); }
function checkTurn(name) { var match = /^turn (\d+)/.exec(name); return match ? Number(match[1]) : null; }
function texts(value) { return Array.isArray(value) ? value.map(pretty) : value === null || value === undefined ? [] : [pretty(value)]; }

/* Where a scenario's texts are searched by a check: up to five of them, each with the needle marked. */
function textList(list, needle) {
  var box = el("div", { class: "texts" }, list.slice(0, 5).map(function (text) { return highlighted(text, needle); }));
  if (list.length > 5) box.appendChild(el("div", { class: "sub", text: "... and " + (list.length - 5) + " more (report.json has them all)" }));
  return box;
}

function explanation(check, ctx) {
  var kind = checkKind(check.name), expected = check.expected, actual = check.actual;
  var needle = typeof expected === "string" ? expected : null;
  if (typeof check.detail === "string" && /^--- /.test(check.detail)) return [diffBlock(check.detail)];
  var out = [];
  if (/^invariant/.test(kind) && Array.isArray(actual)) {
    out.push(el("ul", { class: "located" }, actual.map(function (where) {
      var at = where.message === null || where.message === undefined ? "registry" : "message[" + where.message + "]" + (where.part === null || where.part === undefined ? "" : ".parts[" + where.part + "]");
      var jump = where.message === null || where.message === undefined ? null
        : el("button", { class: "link", type: "button", onclick: function () { ctx.pointAt(where.message, where.part); } }, ["show " + at + " in the conversation"]);
      return el("li", null, [el("code", { text: at }), " " + where.says + " ", jump]);
    })));
    return out;
  }
  if (needle !== null && /(^|\.)(not_contains|not_contains_text|instructions_not_contain)$/.test(kind)) {
    var holding = texts(actual).filter(function (text) { return text.indexOf(needle) >= 0; });
    out.push(el("p", null, ["Must not appear, and does: ", el("code", { text: needle })]));
    out.push(textList(holding.length ? holding : texts(actual), needle));
  } else if (needle !== null && /(^|\.)(contains|contains_text|instructions_contain|used)$/.test(kind)) {
    out.push(el("p", null, [kind === "used" ? "Never called: " : "Not found: ", el("code", { text: needle }), kind === "used" ? " (the calls made are below)" : " (searched in:)"]));
    out.push(textList(texts(actual), null));
  } else if (needle !== null && /(^|\.)not_used$/.test(kind)) {
    out.push(el("p", null, ["Called, though it must not be: ", el("code", { text: needle })]));
    out.push(textList([texts(actual).join("\n")], needle));
  } else if (needle !== null && /(^|\.)regex$/.test(kind)) {
    out.push(el("p", null, ["No match for ", el("code", { text: needle }), " in:"]));
    out.push(textList(texts(actual), null));
  } else if (expected !== undefined || actual !== undefined) {
    var projected = /json_subset$|\.sequence$/.test(kind) ? projectOnto(expected, actual) : actual;
    out.push(valueDiff(expected, projected));
    if (projected !== actual) out.push(el("details", null, [el("summary", { class: "sub", text: "actual in full" }), pre(actual)]));
  }
  if (check.detail) out.push(el("p", { class: "detail", text: check.detail }));
  return out;
}

function checkBlock(check, ctx) {
  var status = check.skipped_reason ? "skipped" : check.passed ? "passed" : "failed";
  var body = [el("div", { class: "check-head" }, [badge(status), " ", el("strong", { text: check.name })])];
  if (status === "failed") body = body.concat(explanation(check, ctx || { pointAt: function () {} }));
  else {
    if (check.expected !== null && check.expected !== undefined && !(Array.isArray(check.expected) && !check.expected.length)) body.push(el("div", { class: "sub" }, ["expected ", el("code", { text: pretty(check.expected).slice(0, 300) })]));
    if (check.skipped_reason) body.push(el("div", { class: "sub", text: check.skipped_reason }));
    if (check.detail) body.push(el("div", { class: "sub", text: check.detail }));
  }
  return el("div", { class: "check " + status }, body);
}

/* The turn whose error decided the verdict (1-based), or null. */
function causeTurn(entry) {
  var error = entry.error;
  if (!error) return null;
  var turns = entry.turns || [];
  for (var n = 0; n < turns.length; n++) {
    var e = turns[n].error;
    if (e && e.kind === error.kind && e.message === error.message) return (turns[n].index !== undefined ? turns[n].index : n) + 1;
  }
  return null;
}

/* The "Why" section: an errored scenario's error; a failed one's cause, the checks that failed on their own, and
   (folded) those that could not hold once the cause happened; then the passing checks, folded. */
function verdictSection(entry, ctx) {
  var box = el("div", { class: "verdict" });
  var checks = entry.checks || [];
  var failed = checks.filter(function (c) { return !c.passed && !c.skipped_reason; });
  var error = entry.error, turn = causeTurn(entry);
  if (entry.status === "error" && error) {
    box.appendChild(el("div", { class: "error-box", role: "alert" }, [
      el("strong", { text: "Error " + error.kind + ": " }), error.message,
      el("div", { class: "sub", text: PROVIDER_KINDS.has(error.kind) ? "A provider error no expectation asked for: the run could not judge the agent (exit code 3)."
        : "The scenario could not run to a verdict (exit code 3)." })]));
  }
  var followers = [], alone = failed;
  if (entry.status === "failed" && error) {
    var what = CAUSES.get(error.kind) || "the turn ended in an error nothing expected";
    box.appendChild(el("h3", { text: "Why it failed" }));
    box.appendChild(el("div", { class: "cause", role: "alert" }, [
      el("div", null, [el("strong", { text: "Cause: " }), (turn ? "turn " + turn + " ended with " : "") , el("code", { text: error.kind }), " (" + what + ")"]),
      pre(error.message),
      turn ? el("button", { class: "link", type: "button", onclick: function () { ctx.pointAtTurn(turn); } }, ["show turn " + turn + " in the conversation"]) : null]));
    alone = failed.filter(function (c) { var t = checkTurn(c.name); return t !== null && turn !== null && t < turn; });
    followers = failed.filter(function (c) { return alone.indexOf(c) < 0 && !(checkKind(c.name) === "error" && checkTurn(c.name) === turn); });
    if (alone.length) box.appendChild(el("h3", { text: "Failed before it: " + alone.length + " check(s)" }));
  } else if (failed.length) {
    box.appendChild(el("h3", { text: (entry.status === "error" ? "Failed with the error: " : "Why it failed: ") + failed.length + " check(s)" }));
  }
  alone.forEach(function (c) { box.appendChild(checkBlock(c, ctx)); });
  if (followers.length) {
    box.appendChild(el("details", { class: "after-cause" }, [
      el("summary", { text: followers.length + " more check(s) failed after the cause (the turn ended early; they follow from it)" })
    ].concat(followers.map(function (c) { return checkBlock(c, ctx); }))));
  }
  var others = checks.filter(function (c) { return failed.indexOf(c) < 0; });
  if (others.length) {
    box.appendChild(el("details", { open: !failed.length && !error && others.length <= 12 },
      [el("summary", { text: (failed.length || error ? "Other checks" : "Checks") + " (" + others.length + ")" })].concat(others.map(function (c) { return checkBlock(c, ctx); }))));
  }
  return box;
}
