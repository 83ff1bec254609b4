// What the whole page shares: the state formats it knows, its limits, and the one `app` object
// the page's modules read and write (the connection, the tools, the last state document).

export const CALLS_FORMAT = "seahaven.state+calls/1";
export const BUILT_IN_FORMATS = ["seahaven.state+calls/1", "seahaven.state/1", "seahaven.state+last_step/1"];
// Formats whose change log holds every call's records (so a call with none changed nothing).
export const WHOLE_LOG_FORMATS = new Set(["seahaven.state/1", "seahaven.state+calls/1"]);
export const PAGE_RECORDS = 200; // change-log records on one page

export const app = {
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
  resetSchema: null, // GET /schema's `reset`: the JSON Schema of a reset's data
  scenarios: [], // GET scenarios: every scenario a reset can name, with its instructions
  startSaved: new Map(), // a start field's {value, placeholder} before a scenario was chosen
  answerBox: null, // the scenario card's answer, kept across renders
  scenarioEpisode: null, // the episode the scenario card last showed
  scenarioProblem: null, // what went wrong with the last submit or finish, if anything
  scenarioActions: null, // {submit, finish, sync}: the page's handlers for the card's buttons
};
