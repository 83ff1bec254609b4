// The Seahaven web console: drive a served world by hand and look at what changed.
//
// The page is one more client of the world's /ws protocol. It opens a session of its own,
// lists the tools once, resets the session from the episode form, calls tools from forms
// generated from their input schemas, and after every call reads the state document with a
// `state` frame. The only other requests are GET fixtures, GET metadata and GET schema (whose `reset`
// the episode form is made from), all read-only.
// Everything is found relative to the page's own address, so the same page works for a
// world at the server's root and for each world under /worlds/<name>/.
//
// This module is the page: the tool list and panels, the episode form and the session's life.
// It imports the shared state (app.js), the DOM helpers (dom.js), the socket (socket.js), the
// schema forms (schema_form.js, reset_fields.js) and the state view (state_view.js).

import { app, BUILT_IN_FORMATS, CALLS_FORMAT } from "./app.js";
import { $, h, jsonView, replace, shown } from "./dom.js";
import { Connection, getJson, Lost, socketUrl } from "./socket.js";
import { renderScenarioChoices, syncScenarioForm } from "./scenario_view.js";
import { readResetFields, renderResetFields } from "./reset_fields.js";
import { ToolForm } from "./schema_form.js";
import { download, refreshState, renderState } from "./state_view.js";

// --- the tool list and a tool's panel -------------------------------------------------------

function summaryOf(tool) {
  return (tool.description ?? "").trim().split("\n")[0];
}

/**
 * The tools the filter's words find, best first: every word must be in the name or the
 * description, and a tool whose name holds more of the words ranks higher (a name that
 * starts with the first word, higher still); ties keep the world's order.
 */
function filteredTools(filter) {
  const terms = filter.toLowerCase().split(/[\s_]+/).filter(Boolean);
  const ranked = [];
  app.tools.forEach((tool, index) => {
    const name = tool.name.toLowerCase();
    const haystack = `${name} ${name.replaceAll("_", " ")} ${tool.description ?? ""}`.toLowerCase();
    if (!terms.every((term) => haystack.includes(term))) return;
    const inName = terms.filter((term) => name.includes(term)).length;
    const leads = terms.length > 0 && name.startsWith(terms[0]) ? 1 : 0;
    ranked.push({ tool, index, score: inName * 2 + leads });
  });
  ranked.sort((a, b) => b.score - a.score || a.index - b.index);
  return { terms, matching: ranked.map((entry) => entry.tool) };
}

function renderToolList() {
  const { terms, matching } = filteredTools($("tool-filter").value);
  const list = $("tool-list");
  replace(
    list,
    matching.map((tool) =>
      h(
        "li",
        {},
        h(
          "button",
          {
            type: "button",
            class: tool.name === app.selected ? "tool selected" : "tool",
            dataset: { tool: tool.name },
            "aria-current": tool.name === app.selected ? "true" : null,
            onclick: () => chooseTool(tool.name),
          },
          h("span", { class: "tool-name" }, tool.name),
          h("span", { class: "tool-summary" }, summaryOf(tool)),
        ),
      ),
    ),
  );
  $("tool-none").hidden = matching.length > 0 || app.tools.length === 0;
  $("tool-count").textContent = terms.length ? `${matching.length} of ${app.tools.length}` : String(app.tools.length);
  return matching;
}

function chooseTool(name) {
  app.selected = name;
  renderToolList();
  let panel = app.panels.get(name);
  if (!panel) {
    panel = buildToolPanel(app.tools.find((tool) => tool.name === name));
    app.panels.set(name, panel);
  }
  replace($("tool-panel"), panel.el);
  syncButtons();
}

/** Move the keyboard into the open tool's form: its first field, or its call button. */
function focusPanel() {
  const panel = app.panels.get(app.selected);
  if (!panel) return;
  const field = panel.form.formEl.querySelector("input, select, textarea");
  (field ?? (panel.form.mode === "json" ? panel.form.jsonArea : panel.call)).focus();
}

function buildToolPanel(tool) {
  const form = new ToolForm(tool);
  const outcome = h("div", { class: "outcome", dataset: { outcome: "none" }, "aria-live": "polite" });
  const call = h("button", { type: "button", class: "primary call-button" }, `Call ${tool.name}`);
  const panel = { tool, form, outcome, call };
  call.addEventListener("click", () => callTool(panel));
  const el = h(
    "div",
    { class: "tool-panel", dataset: { tool: tool.name } },
    h("div", { class: "tool-head" }, h("h2", { class: "tool-title" }, tool.name)),
    tool.description ? h("div", { class: "tool-description" }, tool.description.trim()) : null,
    form.el,
    h("div", { class: "actions" }, call, form.switchButton, h("span", { class: "hint" }, "Ctrl+Enter calls")),
    h("details", { class: "schema" }, h("summary", {}, "Input schema"), jsonView(tool.input_schema ?? {})),
    outcome,
  );
  el.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      callTool(panel);
    }
  });
  panel.el = el;
  return panel;
}

function hasDetails(details) {
  if (details === undefined || details === null) return false;
  return !(typeof details === "object" && Object.keys(details).length === 0);
}

function outcomeHead(kind, title, ordinal) {
  return h(
    "div",
    { class: `outcome-head ${kind}` },
    h("span", { class: "outcome-mark" }, kind === "ok" ? "✓" : "✗"),
    h("span", { class: "outcome-title" }, title),
    ordinal !== null ? h("span", { class: "ordinal" }, `call #${ordinal}`) : null,
  );
}

function showOutcome(panel, reply, ordinal) {
  const { frame } = reply;
  const name = panel.tool.name;
  if (frame.type === "observation") {
    const observation = frame.data?.observation ?? {};
    if (!observation.error) {
      panel.outcome.dataset.outcome = "result";
      replace(panel.outcome, outcomeHead("ok", `${name} returned`, ordinal), jsonView(observation.result));
      return;
    }
    const triple = observation.metadata?.seahaven_error ?? frame.data?.metadata?.seahaven_error ?? {};
    panel.outcome.dataset.outcome = "tool-error";
    replace(
      panel.outcome,
      outcomeHead("bad", `${name} failed`, ordinal),
      h(
        "dl",
        { class: "error-facts" },
        h("dt", {}, "error_type"),
        h("dd", {}, h("code", { class: "error-type" }, observation.error.error_type)),
        h("dt", {}, "code"),
        h("dd", {}, h("code", { class: "error-code" }, triple.code ?? "(none)")),
        h("dt", {}, "message"),
        h("dd", { class: "error-message" }, triple.message ?? observation.error.message),
      ),
      hasDetails(triple.details)
        ? h("div", { class: "error-details" }, h("div", { class: "caption" }, "details"), jsonView(triple.details))
        : null,
    );
    return;
  }
  panel.outcome.dataset.outcome = "refused";
  const data = frame.data ?? {};
  replace(
    panel.outcome,
    outcomeHead("bad", "The server refused the call", null),
    h(
      "dl",
      { class: "error-facts" },
      h("dt", {}, "code"),
      h("dd", {}, h("code", { class: "error-code" }, data.code ?? frame.type)),
      h("dt", {}, "message"),
      h("dd", { class: "error-message" }, data.message ?? JSON.stringify(frame)),
    ),
  );
}

async function callTool(panel) {
  if (app.busy || !app.connection) return;
  const args = panel.form.arguments();
  if (args === null) return;
  const before = app.document?.call_count ?? 0;
  panel.outcome.dataset.outcome = "pending";
  replace(panel.outcome, h("div", { class: "hint" }, `Calling ${panel.tool.name}...`));
  await work(async () => {
    let reply;
    try {
      reply = await app.connection.ask({ type: "step", data: { type: "call_tool", tool_name: panel.tool.name, arguments: args } });
    } catch (error) {
      panel.outcome.dataset.outcome = "lost";
      replace(panel.outcome, outcomeHead("bad", "No answer: the connection was lost before it came.", null));
      throw error;
    }
    await refreshState();
    const after = app.document?.call_count ?? before;
    let ordinal = null;
    if (after > before) {
      ordinal = after - 1;
      const observation = reply.frame.data?.observation;
      const refusal = reply.frame.type === "error" ? reply.frame.data?.message : null;
      const error = observation?.error?.message ?? refusal ?? null;
      app.ownCalls.set(ordinal, { tool: panel.tool.name, arguments: args, error });
      app.latestCall = ordinal;
      app.logPage = 0;
      renderState();
    }
    showOutcome(panel, reply, ordinal);
    panel.outcome.scrollIntoView({ block: "nearest" });
  });
}

// --- the episode form -----------------------------------------------------------------------

function renderFixtures() {
  const select = $("reset-fixture");
  const chosen = select.value;
  replace(
    select,
    h("option", { value: "" }, "(blank instance: no fixture)"),
    app.fixtures.map((fixture) => h("option", { value: fixture.id }, fixture.id)),
  );
  if (app.fixtures.some((fixture) => fixture.id === chosen)) select.value = chosen;
  // A world with fixtures starts from its first: a blank instance of it is rarely the point.
  else if (!app.fixturesShown && app.fixtures.length) select.value = app.fixtures[0].id;
  app.fixturesShown = true;
  describeFixture();
}

function describeFixture() {
  if (syncScenarioForm()) return; // the scenario chooses the fixture, and says so
  const fixture = app.fixtures.find((candidate) => candidate.id === $("reset-fixture").value);
  $("fixture-description").textContent = fixture
    ? fixture.description || "This fixture has no description."
    : "A blank instance starts from the world's schema alone.";
  // The field is made from the reset's schema, which may arrive after the fixtures.
  const now = $("reset-now");
  if (now) now.placeholder = fixture?.now ? `the fixture's: ${fixture.now}` : "the world's default";
  const text = $("fixture-description");
  text.classList.remove("open");
  $("fixture-more").textContent = "Read all";
  $("fixture-more").hidden = text.scrollHeight <= text.clientHeight + 1;
}

function toggleFixtureText() {
  const open = $("fixture-description").classList.toggle("open");
  $("fixture-more").textContent = open ? "Show less" : "Read all";
}

function renderFormats() {
  const select = $("reset-state-format");
  if (select.options.length) return; // filled once; a reconnect keeps the choice
  const formats = [CALLS_FORMAT, ...[app.pinnedFormat, ...BUILT_IN_FORMATS].filter((format) => format && format !== CALLS_FORMAT)];
  for (const format of new Set(formats)) select.append(h("option", { value: format }, format));
  select.value = CALLS_FORMAT;
  const note = () => {
    const notes = [];
    if (select.value === CALLS_FORMAT) {
      notes.push("The console's choice: the document also lists each call's tool and arguments, which head the call's rows below.");
    }
    if (select.value === app.pinnedFormat) notes.push("The world's own format.");
    else if (app.pinnedFormat) notes.push(`The world's own is ${app.pinnedFormat}.`);
    $("state-format-note").textContent = notes.join(" ");
  };
  select.addEventListener("change", note);
  note();
}

/** The reset's data the episode form holds, or null (the problem shown) when it cannot be sent. */
function readResetForm() {
  const { data, problem, control } = readResetFields(app.resetSchema);
  if (problem) {
    const details = control.closest("details");
    if (details) details.open = true;
    sayResetProblem(problem);
    return null;
  }
  return data;
}

/** Make the episode form's fields from the schema of a reset's data the server publishes. */
async function loadResetForm() {
  try {
    const schema = await getJson("schema");
    app.resetSchema = schema.reset ?? null;
  } catch (error) {
    sayResetProblem(`The reset options could not be read: ${error.message}`);
    return;
  }
  renderResetFields(app.resetSchema, $("reset-fields"), $("reset-more-fields"));
  for (const name of ["split", "index"]) {
    document.getElementById(`reset-${name}`)?.addEventListener("input", describeFixture);
  }
  if (app.fixturesShown) describeFixture();
}

function sayResetProblem(message) {
  const box = $("reset-error");
  box.hidden = !message;
  box.textContent = message ?? "";
}

async function resetEpisode(event) {
  event.preventDefault();
  if (app.busy || !app.connection) return;
  sayResetProblem(null);
  const data = readResetForm();
  if (data === null) return;
  await work(async () => {
    const { frame } = await app.connection.ask({ type: "reset", data });
    if (frame.type !== "observation") {
      const details = frame.data ?? {};
      sayResetProblem(`${details.code ?? "ERROR"}: ${details.message ?? JSON.stringify(frame)}`);
    } else {
      app.ownCalls = new Map();
      app.latestCall = null;
      for (const panel of app.panels.values()) {
        panel.outcome.dataset.outcome = "none";
        panel.outcome.replaceChildren();
      }
    }
    app.logPage = 0;
    // A failed reset may have ended the episode before it (the server starts it afresh);
    // the state view shows what the session holds now either way.
    await refreshState();
  });
}

// --- a bound episode: submit, or end it where it stands --------------------------------------

/** Send one step that ends a bound episode; the card shows the grade the state then holds. */
async function endEpisode(action) {
  if (app.busy || !app.connection) return;
  app.scenarioProblem = null;
  await work(async () => {
    const { frame } = await app.connection.ask({ type: "step", data: action });
    if (frame.type !== "observation") {
      const data = frame.data ?? {};
      app.scenarioProblem = `${data.code ?? "ERROR"}: ${data.message ?? JSON.stringify(frame)}`;
    } else if (frame.data?.observation?.error) {
      const error = frame.data.observation.error;
      const triple = frame.data.observation.metadata?.seahaven_error ?? {};
      app.scenarioProblem = `${triple.code ?? error.error_type}: ${triple.message ?? error.message}`;
    }
    await refreshState();
  });
}

app.scenarioActions = {
  submit: () => endEpisode({ type: "call_tool", tool_name: "submit", arguments: { answer: app.answerBox?.value ?? "" } }),
  finish: () => endEpisode({ type: "finish" }),
  sync: () => syncButtons(),
};

// --- the session's life ---------------------------------------------------------------------

function setConnection(state, text) {
  const element = $("connection");
  element.dataset.state = state;
  element.textContent = text;
}

function syncButtons() {
  const usable = Boolean(app.connection) && app.busy === 0;
  $("reset-button").disabled = !usable;
  $("refresh-state").disabled = !usable;
  for (const panel of app.panels.values()) panel.call.disabled = !usable;
  for (const id of ["scenario-submit", "scenario-finish"]) {
    const button = $(id);
    if (button) button.disabled = !usable;
  }
}

/** Run one exchange with the server; a lost connection is reported by the banner. */
async function work(job) {
  app.busy += 1;
  syncButtons();
  try {
    await job();
  } catch (error) {
    if (!(error instanceof Lost)) {
      console.error(error);
      sayResetProblem(`The console hit an error of its own: ${error.message}`);
    }
  } finally {
    app.busy -= 1;
    syncButtons();
  }
}

function lost(reason) {
  app.connection = null;
  setConnection("lost", "disconnected");
  $("lost-reason").textContent = reason;
  $("lost").hidden = false;
  $("episode-card").classList.remove("running");
  if (app.document) {
    $("episode-line").textContent = "disconnected: the state shown is the last the session sent";
  }
  syncButtons();
}

async function connect() {
  $("lost").hidden = true;
  setConnection("connecting", "connecting");
  const connection = new Connection(socketUrl());
  connection.onlost = lost;
  try {
    await connection.open();
  } catch (error) {
    lost(error.message);
    return;
  }
  app.connection = connection;
  setConnection("connected", "connected");
  await work(async () => {
    // Listing the tools is a step of the fresh session; the first reset zeroes the count.
    const { frame } = await connection.ask({ type: "step", data: { type: "list_tools" } });
    if (frame.type === "observation" && Array.isArray(frame.data?.observation?.tools)) {
      app.tools = frame.data.observation.tools;
    }
    renderToolList();
    if (app.selected && app.tools.some((tool) => tool.name === app.selected)) chooseTool(app.selected);
    app.ownCalls = new Map();
    await refreshState();
    renderFormats();
  });
}

async function loadWorldFacts() {
  try {
    const card = await getJson("metadata");
    app.worldName = card.name ?? "";
    $("world-title").replaceChildren(h("span", { class: "world-name" }, card.name), " ", h("span", { class: "world-version" }, card.version ?? ""));
    document.title = `${card.name} · Seahaven console`;
    if (card.description) $("world-title").title = card.description;
  } catch (error) {
    $("world-title").textContent = `(could not read the world's metadata: ${error.message})`;
  }
  try {
    app.fixtures = await getJson("fixtures");
    renderFixtures();
  } catch (error) {
    $("fixture-description").textContent = `The fixtures could not be listed: ${error.message}`;
  }
  try {
    app.scenarios = await getJson("scenarios");
  } catch (error) {
    // A server without the listing (an older one) still plays a scenario named by split and index.
    app.scenarios = [];
  }
  renderScenarioChoices();
  describeFixture();
}

/** Show one section of the page (narrow screens show one at a time; wide ones show all). */
function showView(view) {
  document.body.dataset.view = view;
  for (const button of $("views").querySelectorAll("button")) {
    button.setAttribute("aria-pressed", String(button.dataset.view === view));
  }
}

function start() {
  for (const button of $("views").querySelectorAll("button")) {
    button.addEventListener("click", () => showView(button.dataset.view));
  }
  $("reset-form").addEventListener("submit", resetEpisode);
  $("reset-fixture").addEventListener("change", describeFixture);
  $("reset-scenario").addEventListener("change", describeFixture);
  $("fixture-more").addEventListener("click", toggleFixtureText);
  $("tool-filter").addEventListener("input", renderToolList);
  $("tool-filter").addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    const [first] = renderToolList();
    if (first) {
      chooseTool(first.name);
      focusPanel();
    }
  });
  $("refresh-state").addEventListener("click", () => app.connection && work(refreshState));
  $("download-state").addEventListener("click", download);
  $("restart").addEventListener("click", connect);
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest?.("input, textarea, select, [contenteditable]");
    if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      $("tool-filter").focus();
      $("tool-filter").select();
    }
  });
  window.addEventListener("pagehide", () => app.connection?.close());
  loadWorldFacts();
  // The form's fields first: a session is only usable once they can be read.
  loadResetForm().finally(connect);
}

start();
