// Small DOM helpers: making elements, replacing children, naming a value as a cell shows it, and
// long JSON shown a page of lines at a time.

const RESULT_LINES = 400; // lines of a long result shown at a time

// --- small DOM helpers ----------------------------------------------------------------------

const PROPERTIES = new Set(["value", "checked", "disabled", "hidden", "open", "selected", "title"]);

/** An element with attributes, listeners (onclick: ...) and children (nodes or text). */
export function h(tag, attributes = {}, ...children) {
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

export function $(id) {
  return document.getElementById(id);
}

export function replace(element, ...children) {
  element.replaceChildren();
  return append(element, children);
}

/** A value as a person reads it in a cell: strings bare, everything else as JSON. */
export function shown(value) {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  return JSON.stringify(value);
}

export function plural(count, one, many = `${one}s`) {
  return `${count.toLocaleString("en")} ${count === 1 ? one : many}`;
}

export function sameValue(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// --- long text, shown a page at a time ------------------------------------------------------

/** A <pre> of JSON that shows RESULT_LINES lines and a button for the next. */
export function jsonView(value, className = "json") {
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
