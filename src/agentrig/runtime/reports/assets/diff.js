/* Diffs, drawn: a unified diff as the checks wrote it, and a line diff of expected against actual computed here
   (texts as they are, other values as pretty JSON), with the changed part of a changed line marked. */

function diffLineClass(line) {
  return /^(\+\+\+|---) /.test(line) ? "file" : line[0] === "+" ? "add" : line[0] === "-" ? "del" : line.slice(0, 2) === "@@" ? "hunk" : null;
}

/* A unified diff (golden files, output.equals, the baseline's history) with its lines coloured and, where one line
   was replaced by one, the part that changed marked. */
function diffBlock(text) {
  var lines = String(text).split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  var block = el("pre", { class: "diff" });
  lines.forEach(function (line, n) {
    var cls = diffLineClass(line);
    var partner = cls === "del" && diffLineClass(lines[n + 1] || "") === "add" && diffLineClass(lines[n + 2] || "") !== "add" && diffLineClass(lines[n - 1] || "") !== "del" ? lines[n + 1]
      : cls === "add" && diffLineClass(lines[n - 1] || "") === "del" && diffLineClass(lines[n - 2] || "") !== "del" && diffLineClass(lines[n + 1] || "") !== "add" ? lines[n - 1] : null;
    block.appendChild(cls ? markedLine(cls, line, partner) : el("span", { class: "ctx", text: line }));
  });
  return block;
}

/* One line of a diff; with its counterpart (the other side of a one-line change), the differing middle marked. */
function markedLine(cls, line, partner) {
  var span = el("span", { class: cls });
  if (partner === null || cls === "file" || cls === "hunk") { appendText(span, line); return span; }
  var mine = line.slice(1), theirs = partner.slice(1), start = 0;
  while (start < mine.length && start < theirs.length && mine[start] === theirs[start]) start++;
  var end = 0;
  while (end < mine.length - start && end < theirs.length - start && mine[mine.length - 1 - end] === theirs[theirs.length - 1 - end]) end++;
  appendText(span, line[0] + mine.slice(0, start));
  if (mine.length - end > start) span.appendChild(el("mark", { text: mine.slice(start, mine.length - end) }));
  appendText(span, mine.slice(mine.length - end));
  return span;
}

/* The lines of `a` and `b` as a list of [op, line]: " " both, "-" only in a, "+" only in b. Common ends are
   trimmed first; the middle is a longest-common-subsequence table, or (past four million cells) all of a's
   middle removed and b's added. */
function lineDiff(a, b) {
  var start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  var endA = a.length, endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA--; endB--; }
  var ops = a.slice(0, start).map(function (line) { return [" ", line]; });
  var midA = a.slice(start, endA), midB = b.slice(start, endB);
  if (midA.length * midB.length > 4e6) {
    midA.forEach(function (line) { ops.push(["-", line]); });
    midB.forEach(function (line) { ops.push(["+", line]); });
  } else {
    var rows = midA.length + 1, cols = midB.length + 1, table = new Uint32Array(rows * cols);
    for (var i = midA.length - 1; i >= 0; i--) {
      for (var j = midB.length - 1; j >= 0; j--) {
        table[i * cols + j] = midA[i] === midB[j] ? table[(i + 1) * cols + j + 1] + 1 : Math.max(table[(i + 1) * cols + j], table[i * cols + j + 1]);
      }
    }
    var x = 0, y = 0;
    while (x < midA.length || y < midB.length) {
      if (x < midA.length && y < midB.length && midA[x] === midB[y]) { ops.push([" ", midA[x]]); x++; y++; }
      else if (x < midA.length && (y === midB.length || table[(x + 1) * cols + y] >= table[x * cols + y + 1])) { ops.push(["-", midA[x]]); x++; }
      else { ops.push(["+", midB[y]]); y++; }
    }
  }
  a.slice(endA).forEach(function (line) { ops.push([" ", line]); });
  return ops;
}

/* Expected against actual as a coloured diff: `-` lines are what was expected, `+` what the run produced. */
function valueDiff(expected, actual) {
  var left = pretty(expected === undefined ? null : expected).split("\n");
  var right = pretty(actual === undefined ? null : actual).split("\n");
  var text = ["--- expected", "+++ actual"].concat(lineDiff(left, right).map(function (op) { return (op[0] === " " ? " " : op[0]) + op[1]; }));
  return diffBlock(text.join("\n") + "\n");
}

/* `actual` cut down to what `expected` asks about (the keys of its objects, position by position in lists), so
   the diff of a subset or of a tool-call sequence shows what differs, not the many fields nobody asked for. */
function projectOnto(expected, actual) {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    return actual.map(function (item, n) { return n < expected.length ? projectOnto(expected[n], item) : item; });
  }
  if (expected && typeof expected === "object" && !Array.isArray(expected) && actual && typeof actual === "object" && !Array.isArray(actual)) {
    var kept = {};
    Object.keys(expected).forEach(function (key) {
      if (Object.prototype.hasOwnProperty.call(actual, key)) Object.defineProperty(kept, key, { value: projectOnto(expected[key], actual[key]), enumerable: true });
    });
    return kept;
  }
  return actual;
}

/* `text` with every occurrence of `needle` marked. */
function highlighted(text, needle) {
  var block = el("pre", { class: "found" });
  text = String(text);
  if (!needle) { appendText(block, text); return block; }
  var at = 0, next;
  while ((next = text.indexOf(needle, at)) >= 0) {
    appendText(block, text.slice(at, next));
    block.appendChild(el("mark", { text: needle }));
    at = next + needle.length;
  }
  appendText(block, text.slice(at));
  return block;
}
