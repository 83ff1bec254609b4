// The Seahaven web console: drive a served world by hand and look at what changed.
//
// The page is one more client of the world's /ws protocol. It opens a session of its own,
// lists the tools once, resets the session from the episode form, calls tools from forms
// generated from their input schemas, and after every call reads the state document with a
// `state` frame. The only other requests are GET fixtures and GET metadata, both read-only.
// Everything is found relative to the page's own address, so the same page works for a
// world at the server's root and for each world under /worlds/<name>/.

const CALLS_FORMAT = "seahaven.state+calls/1";
const BUILT_IN_FORMATS = ["seahaven.state+calls/1", "seahaven.state/1", "seahaven.state+last_step/1"];
// Formats whose change log holds every call's records (so a call with none changed nothing).
const WHOLE_LOG_FORMATS = new Set(["seahaven.state/1", "seahaven.state+calls/1"]);
const PAGE_RECORDS = 200; // change-log records on one page
const RESULT_LINES = 400; // lines of a long result shown at a time

const app = {
  connection: null, // the open Connection, or null once it is lost
  tools: [],
  selected: null, // the chosen tool's name
  panels: new Map(), // tool name -> its panel (form, outcome), kept so input survives switching
  fixtures: [],
  fixturesShown: false, // the fixture list has been drawn once (and its first one chosen)
  worldName: "",
  pinnedFormat: null, // the world's own state format, from the first state frame
  document: null, // the last state document received
  documentText: "", // ...and its exact JSON text, as the frame carried it
  documentUrl: null,
  ownCalls: new Map(), // call ordinal -> {tool, arguments, error}, as this console made them
  latestCall: null,
  logPage: 0,
  filterStore: "",
  filterTable: "",
  busy: 0,
};

// --- small DOM helpers ----------------------------------------------------------------------

const PROPERTIES = new Set(["value", "checked", "disabled", "hidden", "open", "selected", "title"]);

/** An element with attributes, listeners (onclick: ...) and children (nodes or text). */
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") element.className = value;
    else if (key === "dataset") Object.assign(element.dataset, value);
    else if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (PROPERTIES.has(key)) element[key] = value;
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

function $(id) {
  return document.getElementById(id);
}

function replace(element, ...children) {
  element.replaceChildren();
  return append(element, children);
}

/** A value as a person reads it in a cell: strings bare, everything else as JSON. */
function shown(value) {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  return JSON.stringify(value);
}

function plural(count, one, many = `${one}s`) {
  return `${count.toLocaleString("en")} ${count === 1 ? one : many}`;
}

function sameValue(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// --- the connection -------------------------------------------------------------------------

/** The connection ended; `reason` says how, in words. */
class Lost extends Error {}

const CLOSE_REASONS = {
  1000: "The server closed the session.",
  1001: "The server went away (it stopped or restarted).",
  1006: "The connection dropped without a closing handshake (the server stopped, or the network failed).",
  1011: "The server hit an internal error.",
  1012: "The server stopped or restarted, and ended every session as it went.",
  1013: "The server is at capacity; try again when a session ends.",
  4408: "The session was idle too long and the server reaped it.",
};

/** One WebSocket session: frames go out in order and each reply answers the oldest request. */
class Connection {
  constructor(url) {
    this.url = url;
    this.socket = null;
    this.pending = [];
    this.onlost = null;
    this.ending = false;
    this.unsolicited = null; // a frame the server sent unasked (CAPACITY_REACHED, say)
  }

  open() {
    return new Promise((resolve, reject) => {
      let opened = false;
      const socket = new WebSocket(this.url);
      this.socket = socket;
      socket.addEventListener("open", () => {
        opened = true;
        resolve();
      });
      socket.addEventListener("message", (event) => {
        const text = typeof event.data === "string" ? event.data : "";
        let frame;
        try {
          frame = JSON.parse(text);
        } catch {
          frame = { type: "error", data: { code: "INVALID_JSON", message: "the server sent a frame that is not JSON" } };
        }
        const waiter = this.pending.shift();
        if (waiter) waiter.resolve({ frame, text });
        else this.unsolicited = frame;
      });
      socket.addEventListener("close", (event) => {
        const reason = this.describe(event);
        for (const waiter of this.pending.splice(0)) waiter.reject(new Lost(reason));
        if (!opened) reject(new Lost(`The console could not connect to ${this.url}. ${reason}`));
        else if (!this.ending && this.onlost) this.onlost(reason);
      });
    });
  }

  describe(event) {
    const parts = [];
    const told = this.unsolicited?.data;
    if (told?.message) parts.push(`${told.code ?? "error"}: ${told.message}.`);
    else if (event.reason) parts.push(`The server closed the session: ${event.reason}.`);
    else parts.push(CLOSE_REASONS[event.code] ?? `The connection closed (code ${event.code}).`);
    return parts.join(" ");
  }

  /** Send a frame; resolve with the reply frame and its exact text. */
  ask(frame) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new Lost("The connection is not open."));
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.socket.send(JSON.stringify(frame));
    });
  }

  close() {
    this.ending = true;
    this.socket?.close(1000, "the console closed");
  }
}

function socketUrl() {
  const url = new URL("ws", window.location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.search = "";
  url.hash = "";
  return url.href;
}

async function getJson(path) {
  const response = await fetch(new URL(path, window.location.href), { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`);
  return response.json();
}

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
class ToolForm {
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

// --- long text, shown a page at a time ------------------------------------------------------

/** A <pre> of JSON that shows RESULT_LINES lines and a button for the next. */
function jsonView(value, className = "json") {
  const text = JSON.stringify(value, null, 2) ?? String(value);
  const lines = text.split("\n");
  const pre = h("pre", { class: className });
  const more = h("button", { type: "button", class: "small" });
  const all = h("button", { type: "button", class: "small" }, "Show all");
  const controls = h("div", { class: "more-lines" }, more, all);
  let count = 0;
  function show(upTo) {
    const next = lines.slice(count, upTo);
    pre.append((count ? "\n" : "") + next.join("\n"));
    count += next.length;
    const rest = lines.length - count;
    controls.hidden = rest === 0;
    more.textContent = `Show ${Math.min(RESULT_LINES, rest).toLocaleString("en")} more lines (${rest.toLocaleString("en")} left)`;
  }
  more.addEventListener("click", () => show(count + RESULT_LINES));
  all.addEventListener("click", () => show(lines.length));
  show(RESULT_LINES);
  return h("div", { class: "json-view" }, pre, controls);
}

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
  const fixture = app.fixtures.find((candidate) => candidate.id === $("reset-fixture").value);
  $("fixture-description").textContent = fixture
    ? fixture.description || "This fixture has no description."
    : "A blank instance starts from the world's schema alone.";
  $("reset-now").placeholder = fixture?.now ? `the fixture's: ${fixture.now}` : "the world's default";
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

/** The reset frame's data, or null after saying what is wrong with the form. */
function readResetForm() {
  const data = {};
  const value = (id) => $(id).value;
  if (value("reset-fixture")) data.fixture = value("reset-fixture");
  const seed = value("reset-seed").trim();
  if (seed) data.seed = /^[+-]?\d+$/.test(seed) && Number.isSafeInteger(Number(seed)) ? Number(seed) : seed;
  if (value("reset-clock-mode")) data.clock_mode = value("reset-clock-mode");
  if (value("reset-now").trim()) data.now = value("reset-now").trim();
  if (value("reset-state-format")) data.state_format = value("reset-state-format");
  if (value("reset-episode-id").trim()) data.episode_id = value("reset-episode-id").trim();
  if (value("reset-setup-sql").trim()) data.setup_sql = value("reset-setup-sql");
  if (value("reset-storage")) data.storage = value("reset-storage");
  const startup = value("reset-startup").trim();
  if (startup) {
    try {
      data.startup = JSON.parse(startup);
    } catch (error) {
      $("reset-more").open = true;
      sayResetProblem(`The startup keywords are not JSON: ${error.message}. Nothing was sent.`);
      return null;
    }
  }
  return data;
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

async function refreshState() {
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

function renderState() {
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

function download() {
  if (!app.document) return;
  if (app.documentUrl) URL.revokeObjectURL(app.documentUrl);
  app.documentUrl = URL.createObjectURL(new Blob([app.documentText], { type: "application/json" }));
  const episode = app.document.episode_id ?? "no-episode";
  const link = h("a", { href: app.documentUrl, download: `${app.worldName || "world"}-${episode}-state.json`, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
}

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
  connect();
}

start();
