// The state view: the facts of the state document, its composition, and the change log a page
// of records at a time, filtered by store and table.

import { app, PAGE_RECORDS, WHOLE_LOG_FORMATS } from "./app.js";
import { $, h, jsonView, plural, replace, sameValue, shown } from "./dom.js";
import { renderScenario } from "./scenario_view.js";

// --- the state view -------------------------------------------------------------------------

/** The exact JSON text of a state frame's data: the download is byte for byte what came. */
function dataText(frame, text) {
  const head = '{"type":"state","data":';
  const keys = Object.keys(frame);
  const tail = text.trimEnd();
  if (keys.length === 2 && keys[0] === "type" && keys[1] === "data" && text.startsWith(head) && tail.endsWith("}")) {
    return tail.slice(head.length, -1);
  }
  return JSON.stringify(frame.data);
}

export async function refreshState() {
  // The page shows "no episode yet" itself, so it reads the document of no episode too.
  const { frame, text } = await app.connection.ask({ type: "state", data: { allow_no_episode: true } });
  if (frame.type !== "state") {
    const data = frame.data ?? {};
    replace($("change-log"), h("div", { class: "problem" }, `The state could not be read: ${data.code ?? frame.type}: ${data.message ?? ""}`));
    return;
  }
  app.document = frame.data;
  app.documentText = dataText(frame, text);
  if (app.pinnedFormat === null) app.pinnedFormat = frame.data.format ?? null;
  renderState();
}

function fact(term, value, className) {
  const shownValue = value === null || value === undefined ? h("span", { class: "none" }, "none") : value;
  return h("div", { class: "fact" }, h("dt", {}, term), h("dd", { class: className }, shownValue));
}

export function renderState() {
  const doc = app.document;
  $("download-state").disabled = !doc;
  if (!doc) return;
  const running = doc.composition !== null && doc.composition !== undefined;
  replace(
    $("state-facts"),
    fact("Episode", running ? doc.episode_id : h("span", { class: "none" }, "no episode yet: start one"), "episode-id"),
    fact("Fixture", doc.fixture?.id ?? (running ? "blank" : null)),
    fact("Seed", doc.seed),
    fact("Clock", running ? `${doc.clock_mode} at ${doc.now}` : null),
    fact("Format", doc.format),
    // Before the first reset the session has counted its own tool listing: nothing to show.
    fact("Calls", running ? String(doc.call_count ?? 0) : null, "call-count"),
    fact("Steps", running ? String(doc.step_count ?? 0) : null, "step-count"),
  );
  const line = running
    ? [
        doc.episode_id,
        doc.fixture?.id ? `from ${doc.fixture.id}` : "blank",
        plural(doc.call_count ?? 0, "call"),
        plural(doc.step_count ?? 0, "step"),
      ]
    : ["no episode"];
  $("episode-line").textContent = line.join(" · ");
  $("view-state-count").textContent = running ? plural(doc.call_count ?? 0, "call") : "";
  $("episode-card").classList.toggle("running", running);
  renderComposition(doc);
  renderLog(doc);
  renderScenario();
}

function renderComposition(doc) {
  const target = $("composition");
  if (!doc.composition) {
    replace(target);
    return;
  }
  const log = Array.isArray(doc.state?.db?.log) ? doc.state.db.log : [];
  const counts = new Map();
  for (const record of log) counts.set(record.world, (counts.get(record.world) ?? 0) + 1);
  const stores = Object.entries(doc.composition);
  const choose = (path) => () => {
    app.filterStore = app.filterStore === path ? "" : path;
    app.filterTable = "";
    app.logPage = 0;
    renderComposition(doc);
    renderLog(doc);
  };
  replace(
    target,
    h("h3", {}, `Stores `, h("span", { class: "count" }, String(stores.length))),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { class: "grid composition" },
        h("thead", {}, h("tr", {}, ["Store", "World", "Version", "Scope", "Aliases", "Records"].map((name) => h("th", {}, name)))),
        h(
          "tbody",
          {},
          stores.map(([path, store]) =>
            h(
              "tr",
              {
                dataset: { store: path },
                class: app.filterStore === path ? "chosen" : null,
                title: "Show this store's records (again to show every store's)",
                onclick: choose(path),
              },
              h("td", {}, h("code", {}, path)),
              h("td", {}, store.world),
              h(
                "td",
                {},
                store.world_version,
                store.frozen_world_version ? h("span", { class: "hint" }, ` (fixture: ${store.frozen_world_version})`) : null,
              ),
              h("td", {}, store.scope ?? h("span", { class: "none" }, "none")),
              h("td", {}, store.aliases?.length ? store.aliases.join(", ") : h("span", { class: "none" }, "none")),
              h("td", { class: "number" }, String(counts.get(path) ?? 0)),
            ),
          ),
        ),
      ),
    ),
  );
}

/** The call an ordinal names: from the document's `calls`, else this console's own record. */
function callOf(doc, ordinal) {
  const calls = doc.state?.calls;
  if (Array.isArray(calls) && calls[ordinal]) return calls[ordinal];
  return app.ownCalls.get(ordinal) ?? null;
}

/** The log's records in groups, one per call (and per run of bulk writes), oldest first. */
function groupRecords(doc, records, withEmptyCalls) {
  const groups = [];
  let next = 0;
  const emptyUpTo = (ordinal) => {
    if (!withEmptyCalls) return;
    for (; next < ordinal; next += 1) groups.push({ ordinal: next, records: [] });
  };
  for (const record of records) {
    const ordinal = record.i ?? null;
    const last = groups[groups.length - 1];
    if (last && last.ordinal === ordinal && last.records.length) {
      last.records.push(record);
      continue;
    }
    if (ordinal !== null) {
      emptyUpTo(ordinal);
      next = Math.max(next, ordinal + 1);
    }
    groups.push({ ordinal, records: [record] });
  }
  emptyUpTo(doc.call_count ?? 0);
  return groups;
}

function renderLog(doc) {
  const target = $("change-log");
  const log = doc.state?.db?.log;
  if (!Array.isArray(log)) {
    replace(
      target,
      h("h3", {}, "State"),
      h("p", { class: "hint" }, `The format ${doc.format} has no change log (state.db.log) to show as a table. Its state is:`),
      jsonView(doc.state),
    );
    return;
  }
  if (!doc.composition) {
    const text = "No episode yet: start one with the form on the left, and every row its calls change will show here.";
    replace(target, h("p", { class: "hint" }, text));
    return;
  }
  const stores = [...new Set([...Object.keys(doc.composition), ...log.map((record) => record.world)])];
  const options = (names) => names.map((name) => h("option", { value: name }, name));
  const storeSelect = h(
    "select",
    { id: "log-store", "aria-label": "Filter by store" },
    h("option", { value: "" }, "every store"),
    options(stores),
  );
  storeSelect.value = stores.includes(app.filterStore) ? app.filterStore : "";
  const inStore = log.filter((record) => !storeSelect.value || record.world === storeSelect.value);
  const tables = [...new Set(inStore.map((record) => record.table))].sort();
  const tableSelect = h(
    "select",
    { id: "log-table", "aria-label": "Filter by table" },
    h("option", { value: "" }, "every table"),
    options(tables),
  );
  tableSelect.value = tables.includes(app.filterTable) ? app.filterTable : "";
  const onFilter = () => {
    app.filterStore = storeSelect.value;
    app.filterTable = tableSelect.value;
    app.logPage = 0;
    renderLog(doc);
  };
  storeSelect.addEventListener("change", () => {
    app.filterTable = "";
    tableSelect.value = "";
    onFilter();
    renderComposition(doc);
  });
  tableSelect.addEventListener("change", onFilter);
  const filtering = Boolean(storeSelect.value || tableSelect.value);
  const records = inStore.filter((record) => !tableSelect.value || record.table === tableSelect.value);
  const groups = groupRecords(doc, records, !filtering && WHOLE_LOG_FORMATS.has(doc.format)).reverse();

  // One entry per record, and one for a call that changed nothing; pages hold PAGE_RECORDS.
  const entries = [];
  for (const group of groups) {
    if (group.records.length === 0) entries.push({ group, record: null, index: 0 });
    group.records.forEach((record, index) => entries.push({ group, record, index }));
  }
  const pages = Math.max(1, Math.ceil(entries.length / PAGE_RECORDS));
  app.logPage = Math.min(app.logPage, pages - 1);
  const start = app.logPage * PAGE_RECORDS;
  const shownEntries = entries.slice(start, start + PAGE_RECORDS);

  const heading = h(
    "h3",
    {},
    "Change log ",
    h("span", { class: "count" }, plural(records.length, "record")),
    h("span", { class: "hint" }, " newest call first"),
  );
  const notes = [];
  if (doc.format === "seahaven.state+last_step/1") notes.push(h("p", { class: "hint" }, "This format keeps only the last call's records."));
  if (log.length === 0 && (doc.call_count ?? 0) === 0) {
    notes.push(h("p", { class: "hint" }, "No calls yet: the records of every call will appear here."));
  }

  const body = h("div", { class: "log-body" });
  let current = null;
  let groupBody = null;
  for (const entry of shownEntries) {
    if (entry.group !== current) {
      current = entry.group;
      groupBody = h("div", { class: "group-records" });
      body.append(renderGroup(doc, current, entry.index > 0, groupBody));
    }
    if (entry.record) groupBody.append(renderRecord(entry.record));
    else {
      const raised = callOf(doc, current.ordinal)?.error;
      groupBody.append(h("div", { class: "hint nothing" }, raised ? "It raised, so it changed nothing." : "No rows changed."));
    }
  }
  replace(
    target,
    h("div", { class: "log-head" }, heading, h("div", { class: "filters" }, storeSelect, tableSelect)),
    notes,
    pager(entries.length, pages, doc),
    body,
    pages > 1 ? pager(entries.length, pages, doc) : null,
  );
}

function pager(total, pages, doc) {
  if (pages <= 1) return null;
  const start = app.logPage * PAGE_RECORDS;
  const end = Math.min(start + PAGE_RECORDS, total);
  const count = (number) => number.toLocaleString("en");
  const go = (page) => () => {
    app.logPage = page;
    renderLog(doc);
  };
  const last = pages - 1;
  const button = (label, page, disabled) =>
    h("button", { type: "button", class: "small", disabled, onclick: go(page), dataset: { page: label.toLowerCase() } }, label);
  return h(
    "div",
    { class: "pager" },
    h("span", { class: "pager-status" }, `Entries ${count(start + 1)} to ${count(end)} of ${count(total)} · page ${app.logPage + 1} of ${pages}`),
    button("Newest", 0, app.logPage === 0),
    button("Newer", app.logPage - 1, app.logPage === 0),
    button("Older", app.logPage + 1, app.logPage === last),
    button("Oldest", last, app.logPage === last),
  );
}

function argumentText(args) {
  if (!args || typeof args !== "object") return shown(args);
  const parts = Object.entries(args).map(([name, value]) => `${name}=${JSON.stringify(value)}`);
  return parts.join(", ");
}

function renderGroup(doc, group, continued, groupBody) {
  const ordinal = group.ordinal;
  let title;
  if (ordinal === null) {
    title = [h("span", { class: "call-ordinal" }, "bulk"), h("span", { class: "call-tool" }, "writes made outside any call")];
  } else {
    const call = callOf(doc, ordinal);
    title = [
      h("span", { class: "call-ordinal" }, `#${ordinal}`),
      call ? h("span", { class: "call-tool" }, call.tool) : h("span", { class: "call-tool none" }, "a call this console did not record"),
      call
        ? h(
            "code",
            { class: "call-arguments", title: "Click to see every argument", onclick: (event) => event.currentTarget.classList.toggle("expanded") },
            `(${argumentText(call.arguments)})`,
          )
        : null,
    ];
    if (call?.error) title.push(h("span", { class: "call-error" }, `raised: ${call.error}`));
  }
  const latest = ordinal !== null && ordinal === (doc.call_count ?? 0) - 1;
  return h(
    "section",
    { class: latest ? "call-group latest" : "call-group", dataset: { call: ordinal === null ? "bulk" : String(ordinal) } },
    h(
      "header",
      { class: "call-head" },
      title,
      continued ? h("span", { class: "hint" }, "(continued)") : null,
      h("span", { class: "row-count" }, plural(group.records.length, "row")),
      latest ? h("span", { class: "badge latest-badge" }, "latest") : null,
    ),
    groupBody,
  );
}

function renderRecord(record) {
  const key = record.key ?? {};
  const keyColumns = Object.keys(key);
  const before = record.before ?? null;
  const after = record.after ?? null;
  const columns = [...new Set([...Object.keys(after ?? {}), ...Object.keys(before ?? {})])].filter((column) => !keyColumns.includes(column));
  const all = [...keyColumns, ...columns];
  const mark = (column, side) => {
    if (keyColumns.includes(column)) return "key";
    if (record.op === "insert") return "added";
    if (record.op === "delete") return "removed";
    return sameValue(before?.[column], after?.[column]) ? "" : "changed";
  };
  const cell = (column, row, side) => {
    const value = keyColumns.includes(column) && !(row && column in row) ? key[column] : row?.[column];
    const className = [mark(column, side), value === null ? "null" : ""].filter(Boolean).join(" ");
    const toggle = (event) => event.currentTarget.classList.toggle("expanded");
    return h("td", { class: className, dataset: { column }, title: shown(value), onclick: toggle }, value === null ? "null" : shown(value));
  };
  // An insert has no row before it and a delete none after: each shows its one row.
  const row = (label, values, side) => {
    if (values === null) return null;
    return h("tr", { class: side }, h("th", {}, label), all.map((column) => cell(column, values, side)));
  };
  const keyText = keyColumns.map((column) => `${column}=${shown(key[column])}`).join(", ");
  return h(
    "article",
    { class: `record op-${record.op}`, dataset: { op: record.op, store: record.world, table: record.table } },
    h(
      "div",
      { class: "record-head" },
      h("span", { class: `op op-${record.op}` }, record.op),
      h("code", { class: "where" }, `${record.world}.${record.table}`),
      h("code", { class: "record-key" }, keyText),
    ),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { class: "cells" },
        h("thead", {}, h("tr", {}, h("th", {}, ""), all.map((column) => h("th", { class: mark(column, "head"), dataset: { column } }, column)))),
        h("tbody", {}, row("before", before, "before"), row("after", after, "after")),
      ),
    ),
  );
}

export function download() {
  if (!app.document) return;
  if (app.documentUrl) URL.revokeObjectURL(app.documentUrl);
  app.documentUrl = URL.createObjectURL(new Blob([app.documentText], { type: "application/json" }));
  const episode = app.document.episode_id ?? "no-episode";
  const link = h("a", { href: app.documentUrl, download: `${app.worldName || "world"}-${episode}-state.json`, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
}
