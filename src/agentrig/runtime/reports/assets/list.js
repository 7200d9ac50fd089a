/* The list of scenarios: filters, search (names, files, tags, statuses and, past the first keystrokes, the
   conversations themselves), sorting, keyboard. A table with explicit ARIA roles, laid out as a grid. The shown
   rows sit in row groups of GROUP_SIZE, each group drawn only when on screen (content-visibility on the group), so
   the browser restyles and lays out a screenful whatever the length of the list. A sort or a filter fills the
   groups on screen at once and the others in later tasks of a few milliseconds (aria-busy on the table until they
   are): moving all 5,000 rows of a sorted list is 50-300 ms of the browser's DOM work, more than a frame should
   wait (docs/performance.md). Every shown row stays in the page, so the browser's find, the keyboard and
   assistive technology reach it (while the table is busy, a row bound for a group not yet filled is out of it for
   those milliseconds; a key press fills every group first); a filtered-out row is taken out of the page. */
var GROUP_SIZE = 10;
var SYNC_GROUPS = 2;  // groups filled at once beyond those on screen (a screenful is a group or two)

/* Each scenario's data as stored (JSON), searched on the first search that needs it (decompressing every chunk: the
   conversations of 5,000 scenarios are tens of megabytes, not worth reading up front). A query is looked for in
   the lowercased JSON first, a native scan; only a scenario it occurs in is read again as its string tokens (keys
   and attachment bytes dropped), where it must occur too. `conversationsRead(rows)` reads them all;
   `inConversation` then answers at once. */
var conversationTexts = new Map();  // i -> {json, lower, text: its searchable tokens, made when first needed}
var conversationsReading = null;
var BASE64_TOKEN = /^"[A-Za-z0-9+/_-]*={0,2}"$/;
function searchable(json) {
  // Every string token, keys dropped (a key is a string followed by a colon), and an attachment's bytes: base64
  // after a "data" key is no text anyone wrote, and a search would find words in it by chance.
  var afterData = false;
  return json.replace(/"(?:[^"\\]|\\.)*"(:?)/g, function (token, colon) {
    if (colon) { afterData = token === '"data":'; return " "; }
    var bytes = afterData && token.length > 34 && BASE64_TOKEN.test(token);
    afterData = false;
    return bytes ? " " : token;
  }).toLowerCase();
}
function conversationsRead(rows) {
  // One chunk after another, not all at once: Chromium decompresses 157 chunks in half the time that way.
  if (conversationsReading === null) {
    conversationsReading = rows.reduce(function (before, row) {
      return before.then(function () { return blockText(row.i); }).then(function (json) {
        conversationTexts.set(row.i, { json: json, lower: json.toLowerCase(), text: null });
      });
    }, Promise.resolve());
  }
  return conversationsReading;
}
function inConversation(i, stored) {
  var read = conversationTexts.get(i);
  if (!read || read.lower.indexOf(stored) < 0) return false;  // not in the JSON at all: not in its text either
  if (read.text === null) read.text = searchable(read.json);
  return read.text.indexOf(stored) >= 0;
}
/* A query as it reads inside the stored JSON: escaped as JSON escapes it, `<` as the writer escapes it. */
function storedForm(query) { return JSON.stringify(query).slice(1, -1).replace(/</g, "\\u003c"); }

function makeList(options) {
  var state = { filter: "all", query: "", sort: options.defaultSort, asc: true };
  var rows = options.rows;
  var label = options.columns[options.linkColumn || 0];
  rows.forEach(function (row) {
    var cells = options.columns.map(function (c) {
      return el("td", { role: "cell", class: c.num ? "num" : null }, [c.cell(row)]);
    });
    var link = el("a", { href: "#" + encodeURIComponent(row.key), class: "row-link", text: row.name });
    var host = cells[options.linkColumn || 0].firstChild;
    host.insertBefore(link, host.firstChild);
    row._tr = el("tr", { role: "row", "data-i": row.i, "data-key": row.key, onclick: function (event) {
      if (event.target.closest("a")) return;  // the link itself navigates
      location.hash = "#" + encodeURIComponent(row.key);
    } }, cells);
    row._link = link;
    link._row = row;
    row._group = -1;
    row._search = (row.name + " " + (row.path || "") + " " + (row.tags || []).join(" ") + " " + options.statusText(row)).toLowerCase();
  });
  var heads = options.columns.map(function (c) {
    var button = el("button", { type: "button", class: "sort", onclick: function () {
      state.asc = state.sort === c.key ? !state.asc : true; state.sort = c.key; apply();
    } }, [c.title]);
    return el("th", { role: "columnheader", scope: "col", class: c.num ? "num" : null }, [button]);
  });
  var table = el("table", { id: "scenarios", role: "table", "aria-label": options.label }, [el("thead", { role: "rowgroup" }, [el("tr", { role: "row" }, heads)])]);
  // The grid's columns (set through the CSS object model: the page's policy refuses style attributes).
  table.style.setProperty("--columns", options.columns.map(function (c) { return c.width || "minmax(90px, 1fr)"; }).join(" "));
  var counter = el("span", { class: "count", role: "status", "aria-live": "polite" });
  var buttons = options.filters.map(function (f) {
    var count = rows.filter(f.test).length;
    var button = el("button", { type: "button", "data-filter": f.key, "aria-pressed": "false", onclick: function () { state.filter = f.key; apply(); } }, [f.title + " (" + count + ")"]);
    button._key = f.key;
    return button;
  });
  var pending = null;
  var searched = options.searchConversations ? "search name, file, tag, status, conversation" : "search name, tag, status";
  var search = el("input", { type: "search", "aria-label": searched, placeholder: searched,
    oninput: function () {
      state.query = search.value.trim().toLowerCase();
      // The names filter at once; the conversations (a longer scan) once typing pauses.
      clearTimeout(pending);
      apply(false);
      var query = state.query;
      if (!query || !options.searchConversations) return;
      var reading = conversationsRead(rows);  // begun at the first keystroke: read by the time typing pauses
      pending = setTimeout(function () {
        reading.then(function () { if (state.query === query) apply(true); });
      }, 150);
    } });
  /* Each column's rows in ascending order (row numbers), computed on the first sort by that column; descending is
     the same order reversed (the comparison, ties included, is negated as a whole). Ties go by name, then by
     position: the names' order is computed once, so a sort compares numbers, never reads the DOM. */
  var ascending = new Map(), nameRank = null;
  function numbered(keys, tie) {
    var order = new Int32Array(rows.length);
    for (var n = 0; n < order.length; n++) order[n] = n;
    return order.sort(function (a, b) { var x = keys[a], y = keys[b]; return x < y ? -1 : x > y ? 1 : tie(a, b); });
  }
  function ascendingOrder(column) {
    var order = ascending.get(column.key);
    if (!order) {
      if (!nameRank) {
        var rank = new Int32Array(rows.length);
        numbered(rows.map(function (row) { return row.name; }), function (a, b) { return rows[a].i - rows[b].i; })
          .forEach(function (n, place) { rank[n] = place; });
        nameRank = rank;
      }
      order = numbered(rows.map(function (row) { return column.sortValue(row); }), function (a, b) { return nameRank[a] - nameRank[b]; });
      ascending.set(column.key, order);
    }
    return order;
  }
  var order = rows.slice();  // every row, in the sorted order
  var shownOrder = [];  // the shown rows, in that order: what the groups hold, GROUP_SIZE a group
  var sortedBy = null;
  var groups = [], held = [];  // held[g]: the rows group g holds, in order (row._group: the group a row is in, or -1)
  var queue = [], later = false;  // the groups still to fill, and whether a task to fill them is queued
  /* Group g gets its GROUP_SIZE shown rows in one replaceChildren (nothing when it holds them already); a row it
     takes from a group not yet filled leaves that group's record too. */
  function fillGroup(g) {
    var want = shownOrder.slice(g * GROUP_SIZE, (g + 1) * GROUP_SIZE), have = held[g], group = groups[g];
    if (have.length !== want.length || !want.every(function (row, n) { return have[n] === row; })) {
      want.forEach(function (row) {
        if (row._group >= 0 && row._group !== g) { var other = held[row._group]; other.splice(other.indexOf(row), 1); }
      });
      have.forEach(function (row) { row._group = -1; });
      want.forEach(function (row) { row._group = g; });
      group.replaceChildren.apply(group, want.map(function (row) { return row._tr; }));
      held[g] = want;
    }
    if (group.hidden !== !want.length) group.hidden = !want.length;
  }
  /* Fills queued groups until `budget` ms have passed (all of them without one), then goes on in a later task, so
     the browser draws a frame between; the table is aria-busy until every group holds its rows. */
  function drain(budget) {
    var started = performance.now();
    while (queue.length && (budget === undefined || performance.now() - started < budget)) fillGroup(queue.shift());
    if (!queue.length) table.removeAttribute("aria-busy");
    else if (!later) {
      // The first of them once the frame of the change is drawn; then a timer each (not a message: Chromium runs
      // posted messages ahead of the frame and of timers, a timer waits its turn).
      later = true;
      var next = function () { later = false; drain(8); };
      if (budget === 0) requestAnimationFrame(function () { setTimeout(next, 0); }); else setTimeout(next, 0);
    }
  }
  function settle() { if (queue.length) drain(); }
  /* The groups the browser draws (on screen or near it): told by its contentvisibilityautostatechange events where
     it sends them (no layout to read), else from the groups' boxes as laid out before this change. */
  var drawn = typeof ContentVisibilityAutoStateChangeEvent === "function" ? new Set() : null;
  function onScreen() {
    if (drawn) return Array.from(drawn).filter(function (g) { return !groups[g].hidden; }).sort(function (a, b) { return a - b; });
    var box = table.parentNode && table.parentNode.getBoundingClientRect(), near = [];
    if (!box) return near;
    var top = Math.max(box.top, 0), bottom = Math.min(box.bottom, window.innerHeight), height = bottom - top;
    if (height <= 0) return near;
    groups.forEach(function (group, g) {
      if (group.hidden) return;
      var at = group.getBoundingClientRect();
      if (at.bottom >= top - height && at.top <= bottom + height) near.push(g);
    });
    return near;
  }
  /* The shown rows into the groups in order, GROUP_SIZE a group. At once: the groups on screen, the one the
     focused row goes to (it keeps its focus) and SYNC_GROUPS more nearest to them; the rest after the next frame,
     in later tasks of a few milliseconds each (a sort of 5,000 rows moves every row, which takes the browser 50-300 ms in one go on a
     loaded 2-core machine: docs/performance.md). A focused row link keeps its focus when it moves. */
  function fill(now) {
    var active = document.activeElement;
    var needed = Math.ceil(shownOrder.length / GROUP_SIZE);
    var first = now ? [] : onScreen();
    while (groups.length < needed) {
      var group = el("tbody", { role: "rowgroup" });
      if (drawn) group.addEventListener("contentvisibilityautostatechange", function (g, event) {
        if (event.skipped) drawn.delete(g); else drawn.add(g);
      }.bind(null, groups.length));
      groups.push(group);
      held.push([]);
      table.appendChild(group);
    }
    var focusedRow = active && active._row;
    if (focusedRow && focusedRow._shown) first.push(Math.floor(shownOrder.indexOf(focusedRow) / GROUP_SIZE));
    var centre = first.length ? first[0] : 0, rest = [];
    for (var g = 0; g < groups.length; g++) if (first.indexOf(g) < 0) rest.push(g);
    rest.sort(function (a, b) { return Math.abs(a - centre) - Math.abs(b - centre) || a - b; });
    queue = first.concat(rest);
    table.setAttribute("aria-busy", "true");
    for (var atOnce = now ? Infinity : first.length + SYNC_GROUPS; queue.length && atOnce > 0; atOnce--) fillGroup(queue.shift());
    drain(0);
    if (active && active !== document.activeElement && active.isConnected) active.focus({ preventScroll: true });
  }
  function apply(deep, now) {
    var filter = options.filters.filter(function (f) { return f.key === state.filter; })[0];
    var column = options.columns.filter(function (c) { return c.key === state.sort; })[0];
    var needle = state.query, stored = deep && needle ? storedForm(needle) : null;
    var shown = 0, inConversations = 0;
    rows.forEach(function (row) {
      var byName = !needle || row._search.indexOf(needle) >= 0;
      var byText = !byName && stored !== null && options.searchConversations && inConversation(row.i, stored);
      row._shown = filter.test(row) && (byName || byText);
      if (row._shown) shown++;
      if (row._shown && byText) inConversations++;
    });
    var sortKey = state.sort + (state.asc ? "+" : "-");
    if (sortedBy !== sortKey) {
      var numbers = Array.from(ascendingOrder(column));
      if (!state.asc) numbers.reverse();
      order = numbers.map(function (n) { return rows[n]; });
      sortedBy = sortKey;
    }
    shownOrder = order.filter(function (row) { return row._shown; });
    fill(now);
    heads.forEach(function (th, n) {
      var sorted = options.columns[n].key === state.sort;
      th.className = (options.columns[n].num ? "num " : "") + (sorted ? "sorted" + (state.asc ? " asc" : "") : "");
      th.setAttribute("aria-sort", sorted ? (state.asc ? "ascending" : "descending") : "none");
    });
    buttons.forEach(function (b) { b.className = b._key === state.filter ? "on" : ""; b.setAttribute("aria-pressed", String(b._key === state.filter)); });
    counter.textContent = shown + " of " + rows.length + " shown" + (inConversations ? " (" + inConversations + " by their conversation)" : "");
  }
  apply(false, true);  // drawn whole before the page is shown
  // Every column's order made while the browser is idle after the page is drawn, one column a task: a first sort
  // by a column then only reverses or copies it (by name, 5,000 rows: 20-100 ms of string comparisons).
  var idle = window.requestIdleCallback || function (work) { return setTimeout(work, 50); };
  options.columns.forEach(function (column) { idle(function () { ascendingOrder(column); }); });
  /* Up and down move between the shown rows' links, across the groups; Home and End go to the first and last. */
  table.addEventListener("keydown", function (event) {
    var keys = { ArrowDown: 1, ArrowUp: -1, Home: -Infinity, End: Infinity };
    if (!(event.key in keys) || !event.target.classList.contains("row-link")) return;
    settle();  // every row in its place before the focus moves
    var at = shownOrder.findIndex(function (row) { return row._link === event.target; });
    var step = keys[event.key];
    var next = step === -Infinity ? 0 : step === Infinity ? shownOrder.length - 1 : Math.min(shownOrder.length - 1, Math.max(0, at + step));
    if (shownOrder[next]) { event.preventDefault(); shownOrder[next]._link.focus(); }
  });
  return {
    toolbar: el("div", { class: "toolbar", role: "search", "aria-label": "filter and search the scenarios" }, buttons.concat([search, counter])),
    table: table,
    select: function (i) {
      rows.forEach(function (row) {
        var selected = row.i === i;
        if (row._tr.classList.contains("selected") !== selected) row._tr.classList.toggle("selected", selected);
        if (selected) row._link.setAttribute("aria-current", "true"); else row._link.removeAttribute("aria-current");
      });
    },
    query: function () { return state.query; }
  };
}

function layout(header, list, showDetail, rows) {
  var detail = el("section", { id: "detail", tabindex: "0", role: "region", "aria-label": "the selected scenario" },
    [el("p", { class: "empty", text: "Select a scenario to see its conversation, its checks and what changed." })]);
  app.appendChild(header);
  app.appendChild(list.toolbar);
  app.appendChild(el("main", null, [el("section", { id: "list", tabindex: "0", role: "region", "aria-label": "scenarios" }, [list.table]), detail]));
  var byKey = new Map(rows.map(function (row) { return [row.key, row]; }));
  var routed = 0;  // the latest scenario asked for: one opened before it, decompressed after it, is not drawn
  function route() {
    var key;
    try { key = decodeURIComponent(location.hash.slice(1)); } catch (error) { return null; }
    var row = byKey.get(key);
    if (!row) return null;
    var ticket = ++routed;
    list.select(row.i);
    return load(row.i).then(function (data) {
      if (ticket !== routed) return;
      detail.textContent = "";
      detail.appendChild(showDetail(row, data, list.query()));
      detail.scrollTop = 0;
    });
  }
  window.addEventListener("hashchange", route);
  return route();
}
