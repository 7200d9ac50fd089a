/* The list of scenarios: filters, search (names, files, tags, statuses and, past the first keystrokes, the
   conversations themselves), sorting, keyboard. A table with explicit ARIA roles, laid out as a grid. The shown
   rows sit in row groups of GROUP_SIZE, each group drawn only when on screen (content-visibility on the group):
   a sort moves rows between groups, and the browser restyles and lays out the groups on screen, a screenful,
   whatever the length of the list. (On the rows themselves it still restyled every row it moved: 2,000 rows,
   0.2-0.45 s for the first sort in a fresh tab.) Every shown row stays in the page, so the browser's find, the
   keyboard and assistive technology reach it; a filtered-out row is taken out of the page. */
var GROUP_SIZE = 20;

/* The text of each scenario's data, searched as it is stored (JSON; keys dropped), made on the first search that
   needs it (decompressing every chunk: the conversations of 5,000 scenarios are tens of megabytes, not worth
   reading up front). `conversationsRead(rows)` makes them all; `conversationText` then answers at once. */
var conversationTexts = new Map();
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
  if (conversationsReading === null) {
    conversationsReading = Promise.all(rows.map(function (row) {
      return blockText(row.i).then(function (json) { conversationTexts.set(row.i, searchable(json)); });
    }));
  }
  return conversationsReading;
}
function conversationText(i) { return conversationTexts.get(i) || ""; }
/* A query as it reads inside the stored JSON: escaped as JSON escapes it, `<` as the writer escapes it. */
function storedForm(query) { return JSON.stringify(query).slice(1, -1).replace(/</g, "\\u003c"); }

function makeList(options) {
  var state = { filter: "all", query: "", sort: options.defaultSort, asc: true };
  var rows = options.rows;
  var label = options.columns[options.linkColumn || 0];
  rows.forEach(function (row, n) {
    row._n = n;  // its place in `rows`: where its sort keys are
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
      if (query) pending = setTimeout(function () {
        conversationsRead(rows).then(function () { if (state.query === query) apply(true); });
      }, 150);
    } });
  /* Each column's sort key of each row, computed on the first sort by that column. */
  var sortKeys = new Map();
  function keysOf(column) {
    var keys = sortKeys.get(column.key);
    if (!keys) { keys = rows.map(function (row) { return column.sortValue(row); }); sortKeys.set(column.key, keys); }
    return keys;
  }
  var order = rows.slice();  // every row, in the sorted order
  var shownOrder = [];  // the shown rows, in that order: what the groups hold
  var sortedBy = null;
  var groups = [];
  /* The shown rows into the groups in order, GROUP_SIZE a group; a group that holds the same rows is left alone,
     so a search that shows the same rows moves nothing. A focused row link keeps its focus when it moves. */
  function fill() {
    var active = document.activeElement;
    var needed = Math.ceil(shownOrder.length / GROUP_SIZE);
    while (groups.length < needed) {
      var group = el("tbody", { role: "rowgroup" });
      groups.push(group);
      table.appendChild(group);
    }
    groups.forEach(function (group, g) {
      var slice = shownOrder.slice(g * GROUP_SIZE, (g + 1) * GROUP_SIZE);
      var same = group.rows.length === slice.length && slice.every(function (row, n) { return group.rows[n] === row._tr; });
      if (!same) group.replaceChildren.apply(group, slice.map(function (row) { return row._tr; }));
      if (group.hidden !== !slice.length) group.hidden = !slice.length;
    });
    rows.forEach(function (row) { if (!row._shown && row._tr.parentNode) row._tr.remove(); });
    if (active && active !== document.activeElement && active.isConnected) active.focus({ preventScroll: true });
  }
  function apply(deep) {
    var filter = options.filters.filter(function (f) { return f.key === state.filter; })[0];
    var column = options.columns.filter(function (c) { return c.key === state.sort; })[0];
    var needle = state.query, stored = deep && needle ? storedForm(needle) : null;
    var shown = 0, inConversations = 0;
    rows.forEach(function (row) {
      var byName = !needle || row._search.indexOf(needle) >= 0;
      var byText = !byName && stored !== null && options.searchConversations && conversationText(row.i).indexOf(stored) >= 0;
      row._shown = filter.test(row) && (byName || byText);
      if (row._shown) shown++;
      if (row._shown && byText) inConversations++;
    });
    var sortKey = state.sort + (state.asc ? "+" : "-");
    if (sortedBy !== sortKey) {
      var keys = keysOf(column), sign = state.asc ? 1 : -1;
      order = rows.slice().sort(function (a, b) {
        var x = keys[a._n], y = keys[b._n];
        return sign * (x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : a.i - b.i);
      });
      sortedBy = sortKey;
    }
    shownOrder = order.filter(function (row) { return row._shown; });
    fill();
    heads.forEach(function (th, n) {
      var sorted = options.columns[n].key === state.sort;
      th.className = (options.columns[n].num ? "num " : "") + (sorted ? "sorted" + (state.asc ? " asc" : "") : "");
      th.setAttribute("aria-sort", sorted ? (state.asc ? "ascending" : "descending") : "none");
    });
    buttons.forEach(function (b) { b.className = b._key === state.filter ? "on" : ""; b.setAttribute("aria-pressed", String(b._key === state.filter)); });
    counter.textContent = shown + " of " + rows.length + " shown" + (inConversations ? " (" + inConversations + " by their conversation)" : "");
  }
  apply(false);
  /* Up and down move between the shown rows' links, across the groups; Home and End go to the first and last. */
  table.addEventListener("keydown", function (event) {
    var keys = { ArrowDown: 1, ArrowUp: -1, Home: -Infinity, End: Infinity };
    if (!(event.key in keys) || !event.target.classList.contains("row-link")) return;
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
