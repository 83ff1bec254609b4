// JSON Schemas to forms: a tool's input schema becomes the form its panel shows. The episode
// form's fields, from the schema of a reset's data, are reset_fields.js's.

import { h, plural, sameValue, shown } from "./dom.js";

// --- input schemas to forms -----------------------------------------------------------------

const ANNOTATIONS = ["title", "description", "default", "examples"];

function pointer(root, reference) {
  let target = root;
  for (const raw of reference.slice(2).split("/")) {
    const part = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (target === null || typeof target !== "object" || !(part in target)) return undefined;
    target = target[part];
  }
  return target;
}

/**
 * What a schema asks for, with local $refs and single allOfs followed and `X | None` unwrapped:
 * {kind, schema, nullable, values}. The kinds the form draws are string, integer, number,
 * enum, boolean, array and object; anything else is "json", a raw JSON box.
 */
function describe(schema, root, ancestors) {
  let current = schema && typeof schema === "object" ? schema : {};
  let refs = ancestors;
  let nullable = false;
  for (let depth = 0; depth < 64; depth += 1) {
    if (typeof current.$ref === "string") {
      const target = current.$ref.startsWith("#/") ? pointer(root, current.$ref) : undefined;
      if (!target || refs.has(current.$ref)) return { kind: "json", schema: current, nullable, refs };
      refs = new Set(refs).add(current.$ref);
      const { $ref, ...outer } = current;
      current = { ...target, ...outer };
      continue;
    }
    if (Array.isArray(current.allOf) && current.allOf.length === 1) {
      const { allOf, ...outer } = current;
      current = { ...allOf[0], ...outer };
      continue;
    }
    const variants = current.anyOf ?? current.oneOf;
    if (Array.isArray(variants)) {
      const others = variants.filter((variant) => !(variant && variant.type === "null"));
      nullable ||= others.length < variants.length;
      if (others.length !== 1) return { kind: "json", schema: current, nullable, refs };
      const { anyOf, oneOf, ...outer } = current;
      const inner = { ...others[0] };
      for (const key of ANNOTATIONS) if (key in outer) inner[key] = outer[key];
      current = { ...outer, ...inner };
      continue;
    }
    break;
  }
  if (Array.isArray(current.type)) {
    const types = current.type.filter((type) => type !== "null");
    nullable ||= types.length < current.type.length;
    if (types.length !== 1) return { kind: "json", schema: current, nullable, refs };
    current = { ...current, type: types[0] };
  }
  if ("const" in current) return { kind: "enum", schema: current, nullable, values: [current.const], refs };
  if (Array.isArray(current.enum)) {
    const values = current.enum.filter((value) => value !== null);
    nullable ||= values.length < current.enum.length;
    return { kind: "enum", schema: current, nullable, values, refs };
  }
  switch (current.type) {
    case "string":
    case "integer":
    case "number":
      return { kind: current.type, schema: current, nullable, refs };
    case "boolean":
      return { kind: "boolean", schema: current, nullable, values: [true, false], refs };
    case "array":
      if (current.items && typeof current.items === "object" && !current.prefixItems) {
        return { kind: "array", schema: current, nullable, refs, items: describe(current.items, root, refs) };
      }
      return { kind: "json", schema: current, nullable, refs };
    case "object":
      if (current.properties && typeof current.properties === "object") {
        return { kind: "object", schema: current, nullable, refs };
      }
      return { kind: "json", schema: current, nullable, refs };
    default:
      return { kind: "json", schema: current, nullable, refs };
  }
}

const ITEM_WORDS = {
  string: "strings",
  integer: "integers",
  number: "numbers",
  boolean: "booleans",
  enum: "choices",
  array: "lists",
  object: "objects",
  json: "JSON values",
};

/** A short note of a field's type and limits, such as "integer, 1 to 100". */
function typeNote(info) {
  const s = info.schema;
  const parts = [];
  if (info.kind === "enum") parts.push(info.values.length === 1 ? "constant" : `one of ${info.values.length}`);
  else if (info.kind === "json") parts.push(s.type === "object" ? "object, as JSON" : s.type ? `${s.type}, as JSON` : "JSON");
  else if (info.kind === "array") parts.push(`list of ${ITEM_WORDS[info.items.kind]}`);
  else parts.push(info.kind);
  if (s.format) parts.push(s.format);
  const low = s.minimum ?? s.exclusiveMinimum;
  const high = s.maximum ?? s.exclusiveMaximum;
  if (low !== undefined && high !== undefined) {
    const above = s.exclusiveMinimum !== undefined ? ">" : "";
    const below = s.exclusiveMaximum !== undefined ? "<" : "";
    parts.push(`${above}${low} to ${below}${high}`);
  }
  else if (low !== undefined) parts.push(s.exclusiveMinimum !== undefined ? `more than ${low}` : `at least ${low}`);
  else if (high !== undefined) parts.push(s.exclusiveMaximum !== undefined ? `less than ${high}` : `at most ${high}`);
  if (s.minLength !== undefined && s.maxLength !== undefined) parts.push(`${s.minLength} to ${s.maxLength} characters`);
  else if (s.maxLength !== undefined) parts.push(`at most ${s.maxLength} characters`);
  else if (s.minLength !== undefined) parts.push(`at least ${s.minLength} characters`);
  if (s.minItems !== undefined) parts.push(`at least ${plural(s.minItems, "item")}`);
  if (s.maxItems !== undefined) parts.push(`at most ${plural(s.maxItems, "item")}`);
  if (info.nullable) parts.push("or null");
  return parts.join(", ");
}

function placeholderFor(info) {
  const s = info.schema;
  if (Array.isArray(s.examples) && s.examples.length) return shown(s.examples[0]);
  if ("default" in s && s.default !== null) return `default: ${shown(s.default)}`;
  if (s.format === "date") return "YYYY-MM-DD";
  if (s.format === "date-time") return "YYYY-MM-DDTHH:MM:SS.sssZ";
  if (info.kind === "json") return s.type === "array" ? "[ ... ]" : s.type === "object" ? "{ ... }" : "JSON";
  return "";
}

/**
 * A field of the generated form: a labelled box around a widget. A widget has `el`,
 * `read(problems)` (undefined when the field is left out, else {value}) and `write(value)`
 * (false when the widget cannot hold that value exactly).
 */
function fieldBox(label, path, info, required, widget, extra) {
  const s = info.schema;
  const problem = h("div", { class: "field-problem", role: "alert", hidden: true });
  const say = (box) => (message) => {
    problem.hidden = !message;
    problem.textContent = message ?? "";
    box.classList.toggle("has-problem", Boolean(message));
  };
  if (label === null) {
    // An item of a list: its list's box says what each item is.
    const box = h("div", { class: `field-box item kind-${info.kind}`, dataset: { field: path } }, extra, widget.el, problem);
    return { el: box, say: say(box) };
  }
  const items = info.kind === "array" ? info.items.schema : null;
  const eachItem = items && (items.description || items.pattern)
    ? h(
        "div",
        { class: "field-description" },
        "Each item: ",
        items.description ?? "",
        items.pattern ? h("span", { class: "field-pattern" }, " pattern ", h("code", {}, items.pattern)) : null,
      )
    : null;
  const state = required
    ? h("span", { class: "required" }, "required")
    : h("span", { class: "optional" }, "default" in s ? `optional, default ${shown(s.default)}` : "optional");
  const box = h(
    "div",
    { class: `field-box kind-${info.kind}`, dataset: { field: path } },
    h(
      "div",
      { class: "label" },
      label !== null ? h("code", { class: "field-name" }, label) : null,
      h("span", { class: "type" }, typeNote(info)),
      state,
      extra,
    ),
    s.description ? h("div", { class: "field-description" }, s.description) : null,
    s.pattern ? h("div", { class: "field-pattern" }, "pattern ", h("code", {}, s.pattern)) : null,
    eachItem,
    widget.el,
    problem,
  );
  return { el: box, say: say(box) };
}

/** A "null" checkbox for a field where null means something other than leaving it out. */
function nullToggle(info, required, controls) {
  const offersNull = info.nullable && (required || !("default" in info.schema) || info.schema.default !== null);
  if (!offersNull) return null;
  const box = h("input", { type: "checkbox", class: "null-box" });
  box.addEventListener("change", () => {
    for (const control of controls()) control.disabled = box.checked;
  });
  return {
    el: h("label", { class: "null-toggle" }, box, "null"),
    get on() {
      return box.checked;
    },
    set(on) {
      box.checked = on;
      for (const control of controls()) control.disabled = on;
    },
  };
}

function buildField(schema, root, { label, path, required, ancestors, inList = false }) {
  const info = describe(schema, root, ancestors);
  const builders = {
    string: scalarWidget,
    integer: scalarWidget,
    number: scalarWidget,
    enum: choiceWidget,
    boolean: choiceWidget,
    array: listWidget,
    object: objectWidget,
    json: jsonWidget,
  };
  const built = builders[info.kind](info, root, { path, required, inList });
  if (built.widget.el.matches("input, select, textarea")) built.widget.el.setAttribute("aria-label", path);
  const box = fieldBox(label, path, info, required, built.widget, built.toggle?.el);
  return {
    el: box.el,
    read(problems) {
      box.say(null);
      const before = problems.length;
      const answer = built.widget.read(problems);
      // A box says its own problems; a nested field's are said in the nested field's box.
      const own = problems.slice(before).filter((problem) => problem.path === path);
      if (own.length) box.say(own.map((problem) => problem.message).join(" "));
      return answer;
    },
    write: (value) => built.widget.write(value),
  };
}

function scalarWidget(info, _root, { path, required, inList }) {
  const s = info.schema;
  const long = info.kind === "string" && (s.maxLength ?? 0) > 300;
  const input = long
    ? h("textarea", { rows: 3, name: path, spellcheck: "false", placeholder: placeholderFor(info) })
    : h("input", {
        name: path,
        autocomplete: "off",
        spellcheck: "false",
        inputmode: info.kind === "string" ? null : info.kind === "integer" ? "numeric" : "decimal",
        placeholder: placeholderFor(info),
      });
  const toggle = nullToggle(info, required, () => [input]);
  const widget = {
    el: input,
    read(problems) {
      if (toggle?.on) return { value: null };
      const raw = input.value;
      if (raw === "") {
        if (inList) problems.push({ path, message: "This item is empty: fill it in or remove it." });
        return undefined;
      }
      if (info.kind === "string") return { value: raw };
      const text = raw.trim();
      const number = Number(text);
      const fits = info.kind === "integer" ? /^[+-]?\d+$/.test(text) && Number.isSafeInteger(number) : text !== "" && Number.isFinite(number);
      // Not a number: send the text as it is, so the world's own validation answers.
      return { value: fits ? number : raw };
    },
    write(value) {
      toggle?.set(false);
      if (value === undefined) {
        input.value = "";
        return true;
      }
      if (value === null) {
        if (!toggle) return false;
        toggle.set(true);
        return true;
      }
      const fitting = info.kind === "string" ? typeof value === "string" : typeof value === "number";
      if (!fitting) return false;
      input.value = String(value);
      return true;
    },
  };
  return { widget, toggle };
}

const LEAVE_OUT = "__leave_out__";
const NULL_CHOICE = "__null__";

function choiceWidget(info, _root, { path, required, inList }) {
  const s = info.schema;
  const select = h("select", { name: path });
  const first = required || inList ? "choose..." : "default" in s ? `leave out (default ${shown(s.default)})` : "leave out";
  select.append(h("option", { value: LEAVE_OUT }, first));
  info.values.forEach((value, index) => select.append(h("option", { value: `v${index}` }, shown(value))));
  if (info.nullable) select.append(h("option", { value: NULL_CHOICE }, "null"));
  const widget = {
    el: select,
    read(problems) {
      if (select.value === NULL_CHOICE) return { value: null };
      if (select.value === LEAVE_OUT) {
        if (inList) problems.push({ path, message: "Choose a value for this item, or remove it." });
        return undefined;
      }
      return { value: info.values[Number(select.value.slice(1))] };
    },
    write(value) {
      if (value === undefined) {
        select.value = LEAVE_OUT;
        return true;
      }
      if (value === null) {
        if (!info.nullable) return false;
        select.value = NULL_CHOICE;
        return true;
      }
      const index = info.values.findIndex((candidate) => sameValue(candidate, value));
      if (index < 0) return false;
      select.value = `v${index}`;
      return true;
    },
  };
  return { widget, toggle: null };
}

function listWidget(info, root, { path, required }) {
  const items = h("ol", { class: "list-items" });
  const entries = [];
  const add = h("button", { type: "button", class: "small" }, "+ Add item");
  const toggle = nullToggle(info, required, () => [add]);
  function addEntry() {
    const entry = {};
    entry.field = buildField(info.schema.items, root, {
      label: null,
      path: `${path}[]`,
      required: true,
      ancestors: info.refs,
      inList: true,
    });
    entry.el = h(
      "li",
      { class: "list-item" },
      entry.field.el,
      h(
        "button",
        {
          type: "button",
          class: "small remove",
          title: "Remove this item",
          onclick: () => {
            entries.splice(entries.indexOf(entry), 1);
            entry.el.remove();
          },
        },
        "Remove",
      ),
    );
    entries.push(entry);
    items.append(entry.el);
    return entry;
  }
  add.addEventListener("click", () => addEntry());
  const widget = {
    el: h("div", { class: "list" }, items, add),
    read(problems) {
      if (toggle?.on) return { value: null };
      if (entries.length === 0) return required ? { value: [] } : undefined;
      const values = [];
      for (const entry of entries) {
        const answer = entry.field.read(problems);
        values.push(answer === undefined ? null : answer.value);
      }
      return { value: values };
    },
    write(value) {
      toggle?.set(false);
      for (const entry of entries.splice(0)) entry.el.remove();
      if (value === undefined) return true;
      if (value === null) {
        if (!toggle) return false;
        toggle.set(true);
        return true;
      }
      if (!Array.isArray(value)) return false;
      return value.every((item) => addEntry().field.write(item));
    },
  };
  return { widget, toggle };
}

function objectWidget(info, root, { path, required, top = false }) {
  const s = info.schema;
  const requiredNames = new Set(Array.isArray(s.required) ? s.required : []);
  const fields = Object.entries(s.properties).map(([name, property]) => [
    name,
    buildField(property, root, {
      label: name,
      path: path ? `${path}.${name}` : name,
      required: requiredNames.has(name),
      ancestors: info.refs,
    }),
  ]);
  const body = h("div", { class: top ? "object-fields top" : "object-fields" }, fields.map(([, field]) => field.el));
  const toggle = top ? null : nullToggle(info, required, () => body.querySelectorAll("input, select, textarea, button"));
  const widget = {
    el: body,
    read(problems) {
      if (toggle?.on) return { value: null };
      const value = {};
      for (const [name, field] of fields) {
        const answer = field.read(problems);
        if (answer !== undefined) value[name] = answer.value;
      }
      if (!top && !required && Object.keys(value).length === 0) return undefined;
      return { value };
    },
    write(value) {
      toggle?.set(false);
      if (value === undefined) return fields.every(([, field]) => field.write(undefined));
      if (value === null) {
        if (!toggle) return false;
        toggle.set(true);
        return true;
      }
      if (typeof value !== "object" || Array.isArray(value)) return false;
      const known = new Set(fields.map(([name]) => name));
      if (Object.keys(value).some((name) => !known.has(name))) return false;
      return fields.every(([name, field]) => field.write(value[name]));
    },
  };
  return { widget, toggle };
}

function jsonWidget(info, _root, { path, inList }) {
  const area = h("textarea", { rows: 2, name: path, spellcheck: "false", class: "json-input", placeholder: placeholderFor(info) });
  const widget = {
    el: area,
    read(problems) {
      if (area.value.trim() === "") {
        if (inList) problems.push({ path, message: "This item is empty: fill it in or remove it." });
        return undefined;
      }
      try {
        return { value: JSON.parse(area.value) };
      } catch (error) {
        problems.push({ path, message: `This is not JSON: ${error.message}` });
        return undefined;
      }
    },
    write(value) {
      area.value = value === undefined ? "" : JSON.stringify(value, null, 2);
      return true;
    },
  };
  return { widget, toggle: null };
}

/** The arguments form of one tool: generated fields, or a raw JSON box, and a switch between. */
export class ToolForm {
  constructor(tool) {
    this.tool = tool;
    const schema = tool.input_schema ?? {};
    const info = describe(schema, schema, new Set());
    this.drawable = info.kind === "object";
    this.mode = this.drawable ? "form" : "json";
    this.jsonArea = h("textarea", {
      class: "json-input arguments-json",
      rows: 8,
      spellcheck: "false",
      name: "arguments-json",
      "aria-label": "Arguments as JSON",
    });
    this.jsonArea.value = "{}";
    this.problem = h("div", { class: "problem", role: "alert", hidden: true });
    if (this.drawable) {
      this.root = objectWidget(info, schema, { path: "", required: true, top: true }).widget;
      this.count = Object.keys(info.schema.properties).length;
    }
    this.formEl = this.drawable
      ? this.count
        ? h("form", { class: "tool-form", novalidate: true, onsubmit: (event) => event.preventDefault() }, this.root.el)
        : h("p", { class: "hint" }, "This tool takes no arguments.")
      : h("p", { class: "hint" }, "The form cannot draw this tool's input schema; write its arguments as JSON.");
    this.jsonEl = h("div", { class: "json-mode", hidden: this.mode !== "json" }, this.jsonArea);
    const switchMode = () => this.switchMode();
    this.switchButton = h("button", { type: "button", class: "small", hidden: !this.drawable, onclick: switchMode }, "Edit as JSON");
    if (this.mode === "json") this.formEl.hidden = false;
    this.el = h("div", { class: "tool-arguments" }, this.formEl, this.jsonEl, this.problem);
  }

  say(message) {
    this.problem.hidden = !message;
    this.problem.textContent = message ?? "";
  }

  switchMode() {
    this.say(null);
    if (this.mode === "form") {
      const problems = [];
      const answer = this.root.read(problems);
      if (problems.length) {
        this.say("Fix the fields marked below before switching to JSON.");
        return;
      }
      this.jsonArea.value = JSON.stringify(answer.value, null, 2);
      this.mode = "json";
    } else {
      let value;
      try {
        value = JSON.parse(this.jsonArea.value);
      } catch (error) {
        this.say(`The arguments are not JSON (${error.message}); fix them or keep editing as JSON.`);
        return;
      }
      if (!this.root.write(value)) {
        this.say("The form cannot hold these arguments exactly (a key or a value it has no field for); keep editing them as JSON.");
        return;
      }
      this.mode = "form";
    }
    this.formEl.hidden = this.mode === "json";
    this.jsonEl.hidden = this.mode !== "json";
    this.switchButton.textContent = this.mode === "json" ? "Edit as form" : "Edit as JSON";
  }

  /** The arguments to send, or null after showing what is wrong. */
  arguments() {
    this.say(null);
    if (this.mode === "json") {
      let value;
      try {
        value = this.jsonArea.value.trim() === "" ? {} : JSON.parse(this.jsonArea.value);
      } catch (error) {
        this.say(`The arguments are not JSON: ${error.message}`);
        return null;
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        this.say("The arguments must be a JSON object of name: value.");
        return null;
      }
      return value;
    }
    const problems = [];
    const answer = this.root.read(problems);
    if (problems.length) {
      this.say(`${plural(problems.length, "field needs", "fields need")} attention before calling.`);
      return null;
    }
    return answer.value;
  }
}
