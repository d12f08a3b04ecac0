// Where the broker is and who we are: config.json beside the page, then the URL query.
//
//   ?ws=ws://127.0.0.1:9001&table=demo&user=console&pass=...&base=poker
//   (the overlay also takes ?show=... / ?hide=... / ?add=...: its parts, and ?theme=...: docs/web.md)
//
// The query wins over config.json.  A password given in the query is kept in
// sessionStorage (this tab only) and removed from the address bar at once, so it does not
// linger in the history, a screenshot of the URL bar or a bookmark.

const KEYS = ["ws", "table", "user", "pass", "base", "lang", "show", "hide", "add", "theme", "room"];

export async function loadConfig(page) {
  const query = new URLSearchParams(location.search);
  let served = {};
  try {
    const r = await fetch("config.json", { cache: "no-store" });
    if (r.ok) served = await r.json();
  } catch (_e) {
    // no config.json: the query must say everything
  }
  const storeKey = `ptc.${page}.${location.pathname}`;
  let stored = {};
  try {
    stored = JSON.parse(sessionStorage.getItem(storeKey) || "{}");
  } catch (_e) {
    stored = {};
  }
  const fromQuery = {};
  for (const k of KEYS) if (query.has(k)) fromQuery[k] = query.get(k);
  const cfg = { ...served, ...stored, ...fromQuery };
  if (query.has("pass") || query.has("user")) {
    try {
      sessionStorage.setItem(storeKey, JSON.stringify({ ...stored, ...fromQuery }));
    } catch (_e) {
      // storage may be disabled: the page still works until reloaded
    }
    query.delete("pass");
    const rest = query.toString();
    history.replaceState(null, "", location.pathname + (rest ? `?${rest}` : "") + location.hash);
  }
  cfg.ws = cfg.ws || `ws://${location.hostname || "127.0.0.1"}:9001`;
  cfg.table = cfg.table || "table1";
  cfg.base = cfg.base || "poker";
  return cfg;
}

export function topicRoot(cfg) {
  return `${cfg.base}/${cfg.table}`;
}

// Connect with mqtt.js (the vendored browser bundle defines the global `mqtt`).
export function connect(cfg, prefix, onStatus) {
  const clientId = `${prefix}-${Math.random().toString(16).slice(2, 10)}`;
  const client = globalThis.mqtt.connect(cfg.ws, {
    protocolVersion: 5,
    clientId,
    username: cfg.user || undefined,
    password: cfg.pass || undefined,
    clean: true,
    keepalive: 15,
    reconnectPeriod: 1000,
    connectTimeout: 5000,
    resubscribe: true,
  });
  client.on("connect", () => onStatus("online"));
  client.on("reconnect", () => onStatus("connecting"));
  client.on("close", () => onStatus("offline"));
  client.on("offline", () => onStatus("offline"));
  client.on("error", (err) => onStatus("error", err && err.message ? err.message : String(err)));
  return { client, clientId };
}

// A JSON payload, or null for an empty (cleared) retained message; undefined when unreadable.
export function parsePayload(bytes) {
  if (!bytes || bytes.length === 0) return null;
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (_e) {
    return undefined;
  }
}
