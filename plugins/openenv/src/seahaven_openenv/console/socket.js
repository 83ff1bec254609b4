// The console's one WebSocket session on the world's /ws, and the two read-only GET routes.

// --- the connection -------------------------------------------------------------------------

/** The connection ended; `reason` says how, in words. */
export class Lost extends Error {}

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
export class Connection {
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

export function socketUrl() {
  const url = new URL("ws", window.location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.search = "";
  url.hash = "";
  return url.href;
}

export async function getJson(path) {
  const response = await fetch(new URL(path, window.location.href), { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`);
  return response.json();
}
