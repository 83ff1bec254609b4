// The episode form's fields, from the schema of a reset's data (GET /schema's `reset`): a
// control per key, laid out, and the reset's data read back from them.

import { h } from "./dom.js";

/** The reset keys shown above "More options", in this order; every other key is under it. */
const MAIN_RESET_KEYS = ["seed", "clock_mode", "now"];

/** The id of a reset key's control: `reset-` and the key, dashed (`reset-setup-sql`). */
export function resetId(name) {
  return `reset-${name.replaceAll("_", "-")}`;
}

/** The JSON type a reset key takes besides null: `string`, `integer`, `object`, ... */
function optionType(property) {
  const kinds = (property.anyOf ?? [property]).map((variant) => variant.type).filter((type) => type && type !== "null");
  return kinds[0] ?? "string";
}

/** The words a blank control shows: what null means for the key, from its description. */
function optionPlaceholder(property) {
  const parts = (property.description ?? "").split("; ");
  const meaning = parts.find((part) => part.startsWith("null "));
  return meaning ? `none (${meaning.slice("null ".length)})` : "none";
}

/** The control of one reset key: a choice of its examples, a text area, or one line. */
function optionControl(name, property) {
  const type = optionType(property);
  const common = { name, id: resetId(name), title: property.description ?? null };
  if (type === "string" && Array.isArray(property.examples) && property.examples.length) {
    return h(
      "select",
      common,
      h("option", { value: "" }, optionPlaceholder(property)),
      property.examples.map((example) => h("option", {}, String(example))),
    );
  }
  if (type === "object" || type === "array" || property.contentMediaType) {
    const placeholder = type === "object" ? '{"keyword": "value"}' : optionPlaceholder(property);
    return h("textarea", { ...common, rows: type === "string" ? 3 : 2, spellcheck: "false", placeholder });
  }
  return h("input", {
    ...common,
    autocomplete: "off",
    spellcheck: "false",
    inputmode: type === "integer" ? "numeric" : null,
    placeholder: optionPlaceholder(property),
  });
}

/** Lay out reset keys' fields in `box`: two short ones (a number, a choice) share a row. */
function layOutOptions(box, names, properties) {
  let row = null;
  for (const name of names) {
    const control = optionControl(name, properties[name]);
    const field = h("label", { class: "field" }, h("span", { class: "name" }, properties[name].title ?? name), control);
    if (control.tagName === "SELECT" || optionType(properties[name]) === "integer") {
      if (row && row.childElementCount === 1) {
        row.append(field);
        row = null;
        continue;
      }
      row = h("div", { class: "row" }, field);
      box.append(row);
    } else {
      row = null;
      box.append(field);
    }
  }
}

/**
 * The episode form's fields, made from `schema` (GET /schema's `reset`): one per key the page
 * has no control of its own for (the fixture and the state format have: their choices come
 * from /fixtures and the state frames), the main keys in `main`, the rest in `more`.
 */
export function renderResetFields(schema, main, more) {
  const properties = schema?.properties ?? {};
  const names = Object.keys(properties).filter((name) => !document.getElementById(resetId(name)));
  layOutOptions(main, MAIN_RESET_KEYS.filter((name) => names.includes(name)), properties);
  layOutOptions(more, names.filter((name) => !MAIN_RESET_KEYS.includes(name)), properties);
}

/**
 * A reset's data as the form holds it, read by `schema`: an empty control leaves its key out,
 * a whole number is sent as a number (anything else as typed, for the server to refuse), and
 * an object is parsed. Gives `{data}`, or `{problem, control}` for text that is not JSON.
 */
export function readResetFields(schema) {
  const data = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const control = document.getElementById(resetId(name));
    // A disabled field is one the chosen scenario sets: it is not the form's to send.
    if (!control || control.disabled) continue;
    const text = control.value.trim();
    if (!text) continue;
    const type = optionType(property);
    if (type === "integer") {
      data[name] = /^[+-]?\d+$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : text;
    } else if (type === "object" || type === "array") {
      try {
        data[name] = JSON.parse(text);
      } catch (error) {
        const what = (property.title ?? name).toLowerCase();
        return { problem: `The ${what} are not JSON: ${error.message}. Nothing was sent.`, control };
      }
    } else {
      data[name] = control.tagName === "TEXTAREA" ? control.value : text;
    }
  }
  return { data };
}
