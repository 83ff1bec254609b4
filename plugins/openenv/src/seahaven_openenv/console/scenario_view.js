// Playing a scenario from the console: choosing one in the episode form, and the card of a
// bound episode (its instructions, the calls left, an answer to submit, and the grade).
//
// A scenario sets where its episode starts, so a reset naming one refuses the start keys; choosing
// a scenario clears and disables their fields (choosing none gives back what they held). Everything
// the card shows is read from the state document's `scenario`, which the page reads after every
// exchange: a call from a tool's form that spends the budget ends the episode as a submit does,
// and the card shows the grade either way.

import { app } from "./app.js";
import { $, h, replace } from "./dom.js";
import { resetId } from "./reset_fields.js";

// The reset keys a scenario sets itself (the server refuses them beside one).
const START_KEYS = ["fixture", "now", "clock_mode", "startup", "setup_sql"];
// The other way of naming a scenario: a split of the served pack and an index in it.
const TASK_KEYS = ["split", "index"];

function control(name) {
  return document.getElementById(resetId(name));
}

/** Fill the scenario chooser from GET scenarios, grouped by pack; hidden when there is none. */
export function renderScenarioChoices() {
  const select = $("reset-scenario");
  const chosen = select.value;
  const packs = new Map();
  for (const entry of app.scenarios) {
    if (!packs.has(entry.pack)) packs.set(entry.pack, []);
    packs.get(entry.pack).push(entry);
  }
  replace(
    select,
    h("option", { value: "" }, "(none: a free episode)"),
    [...packs].map(([pack, entries]) =>
      h(
        "optgroup",
        { label: pack },
        entries.map((entry) => h("option", { value: entry.scenario }, entry.id)),
      ),
    ),
  );
  if (app.scenarios.some((entry) => entry.scenario === chosen)) select.value = chosen;
  $("scenario-field").hidden = app.scenarios.length === 0;
  syncScenarioForm();
}

/** Whether the form names a scenario, by its chooser or by a split and an index. */
function namedBy() {
  if ($("reset-scenario").value) return "scenario";
  return TASK_KEYS.some((name) => control(name)?.value.trim()) ? "task" : null;
}

/**
 * Turn the start fields off while the form names a scenario, and back on when it does not.
 * Answers how the form names one: "scenario", "task" (a split and an index) or null.
 */
export function syncScenarioForm() {
  const named = namedBy();
  const off = new Set(named ? START_KEYS : []);
  if (named === "scenario") TASK_KEYS.forEach((name) => off.add(name));
  for (const name of [...START_KEYS, ...TASK_KEYS]) {
    const field = control(name);
    if (!field) continue;
    if (off.has(name) && !field.disabled) {
      app.startSaved.set(name, { value: field.value, placeholder: field.placeholder });
      field.value = "";
      field.disabled = true;
      if ("placeholder" in field) field.placeholder = "set by the scenario";
    } else if (!off.has(name) && field.disabled) {
      const saved = app.startSaved.get(name) ?? { value: "", placeholder: field.placeholder };
      field.disabled = false;
      field.value = saved.value;
      if ("placeholder" in field) field.placeholder = saved.placeholder;
    }
  }
  $("reset-scenario").disabled = named === "task";
  describeChoice(named);
  return named;
}

function describeChoice(named) {
  const entry = app.scenarios.find((candidate) => candidate.scenario === $("reset-scenario").value);
  const text = $("scenario-description");
  text.hidden = !named;
  if (!named) return;
  const sets = "It sets where its episode starts: the fixture, the clock and any setup.";
  text.textContent = entry
    ? `${entry.instructions} (${entry.budget} calls.) ${sets}`
    : `The split and index name a task of the served pack. ${sets}`;
  $("fixture-description").textContent = "The scenario chooses the fixture.";
  $("fixture-description").classList.remove("open");
  $("fixture-more").hidden = true;
}

// --- the card of a bound episode -------------------------------------------------------------

function answerBox() {
  if (!app.answerBox) {
    app.answerBox = h("textarea", {
      id: "scenario-answer",
      rows: 3,
      spellcheck: "false",
      placeholder: "Your answer, as the instructions ask for it",
      "aria-label": "Answer",
    });
  }
  return app.answerBox;
}

function fact(term, value, className) {
  return h("div", { class: "fact" }, h("dt", {}, term), h("dd", { class: className }, value));
}

function gradeView(report) {
  const grade = report.grade;
  if (!grade) return h("p", { class: "hint" }, "The episode ended without a grade.");
  return h(
    "div",
    { class: "grade", dataset: { passed: String(grade.passed) } },
    h(
      "div",
      { class: `outcome-head ${grade.passed ? "ok" : "bad"}` },
      h("span", { class: "outcome-mark" }, grade.passed ? "✓" : "✗"),
      h("span", { class: "outcome-title" }, grade.passed ? "Passed" : "Failed"),
      h("span", { class: "grade-score" }, `score ${Number(grade.score).toFixed(2)}`),
    ),
    h(
      "ul",
      { class: "checks" },
      (grade.checks ?? []).map((check) =>
        h(
          "li",
          { class: "check", dataset: { passed: String(check.passed) } },
          h("span", { class: "check-mark" }, check.passed ? "✓" : "✗"),
          h("span", { class: "check-name" }, check.name),
          h("span", { class: "check-score" }, Number(check.score).toFixed(2)),
          h("div", { class: "check-why" }, check.why),
        ),
      ),
    ),
  );
}

/** Show the bound episode the last state document describes, or hide the card when none. */
export function renderScenario() {
  const card = $("scenario-card");
  const report = app.document?.scenario;
  if (!report || !app.document?.composition) {
    card.hidden = true;
    return;
  }
  if (app.scenarioEpisode !== app.document.episode_id) {
    // A new episode: its answer starts empty, and nothing is said of the last one.
    app.scenarioEpisode = app.document.episode_id;
    answerBox().value = "";
    app.scenarioProblem = null;
  }
  const actions = app.scenarioActions;
  const status = report.done ? `ended by ${report.ended_by ?? "?"}` : "in progress";
  const body = [
    h("div", { class: "scenario-head" }, h("h2", {}, "Scenario"), h("code", { class: "scenario-name" }, report.scenario)),
    h("p", { class: "scenario-instructions" }, report.instructions ?? ""),
    h(
      "dl",
      { class: "facts scenario-facts" },
      fact("Calls left", `${report.calls_left} of ${report.budget}`, "calls-left"),
      fact("Status", status, "scenario-status"),
      report.done && report.answer !== null && report.answer !== undefined
        ? fact("Answer", String(report.answer), "scenario-given-answer")
        : null,
    ),
  ];
  if (report.done) {
    body.push(gradeView(report));
  } else {
    body.push(
      h(
        "label",
        { class: "field" },
        h("span", { class: "name" }, "Answer"),
        answerBox(),
      ),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "primary", id: "scenario-submit", onclick: () => actions?.submit() }, "Submit answer"),
        h("button", { type: "button", id: "scenario-finish", onclick: () => actions?.finish() }, "End without an answer"),
        h("span", { class: "hint" }, "Either ends the episode and grades it."),
      ),
    );
  }
  if (app.scenarioProblem) body.push(h("div", { class: "problem", role: "alert" }, app.scenarioProblem));
  replace(card, body);
  card.hidden = false;
  actions?.sync();
}
