// The floor page: tables at a glance, the alert feed, the hand history with a step-by-step
// replay, and the dealer report.  Reads the floor service's JSON API; hears of new alerts at
// once over server-sent events (/api/stream).
import { cardFace, cardBack } from "/common/cards.js";

const $ = (sel) => document.querySelector(sel);
const api = (path, opts) => fetch(path, opts).then((r) => (r.ok ? r.json() : Promise.reject(new Error(r.status))));
const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
const time = (ts) => (ts ? new Date(ts * 1000).toLocaleTimeString() : "");

// For the benchmark and the tests: when each alert reached this page (ms since the epoch).
window.floorAlertsSeen = {};
let tables = new Map();

// ------------------------------------------------------------------ tabs
for (const b of document.querySelectorAll("nav button")) {
  b.addEventListener("click", () => showTab(b.dataset.tab));
}
function showTab(name) {
  for (const b of document.querySelectorAll("nav button")) b.classList.toggle("on", b.dataset.tab === name);
  for (const s of document.querySelectorAll(".tab")) s.classList.toggle("on", s.id === name);
  if (name === "hands") loadHands();
  if (name === "report") loadReport();
  if (name === "alerts") loadAlerts();
}

// ------------------------------------------------------------------ tables
async function loadTables() {
  const rows = await api("/api/tables");
  tables = new Map(rows.map((t) => [t.table_id, t]));
  renderTables();
}
// Words, not codes, on the floor's screen: "Misdeal", "first card wrong seat".
function kindWord(a) {
  const k = String(a.ruling || a.severity || "");
  return k ? k[0].toUpperCase() + k.slice(1) : "";
}
function reasonWords(code) {
  return String(code || "").replace(/_/g, " ");
}
function renderTables() {
  const grid = $("#table-grid");
  grid.replaceChildren();
  const now = Date.now() / 1000;
  for (const t of tables.values()) {
    const el = document.createElement("div");
    el.className = "tile" + (t.online ? "" : " offline") + (t.alert ? " alerting" : "");
    el.dataset.table = t.table_id;
    const stakes = t.stakes ? ` ${esc(t.stakes)}` : "";
    el.innerHTML = `<h3>${esc(t.table_id)}</h3>
      <div class="meta game">${esc(t.game || "-")} ${esc(t.structure || "")}${stakes}</div>
      <div class="meta">hand <span class="hand">${esc(t.hand_id ?? "-")}</span> &middot;
        <span class="street">${t.in_hand ? esc(t.street || "deal") : "between hands"}</span></div>
      <div class="meta">dealer <span class="dealer">${esc(t.dealer || "-")}</span></div>`;
    if (t.readers) el.append(readersLine(t.readers));
    if (t.alert) {
      const a = document.createElement("div");
      a.className = "alert";
      a.dataset.alert = t.alert.alert_id;
      a.dataset.reason = t.alert.reason;  // the code stays for scripts; the floor reads words
      a.textContent = `${kindWord(t.alert)}: ${t.alert.message || reasonWords(t.alert.reason)} ` +
        `(${Math.max(0, Math.round(now - t.alert.ts))} s)`;
      el.append(a);
    }
    grid.append(el);
  }
}
setInterval(renderTables, 1000); // the alerts' ages
setInterval(() => loadTables().catch(() => {}), 10000); // the readers' diagnostics change quietly

// The table's readers (its retained diagnostics topic): a reader not answering, cards the camera saw
// with no tag read, collisions, and the antenna board's scan cycle (docs/diagnostics.md).
function readersLine(r) {
  const el = document.createElement("div");
  const dead = r.not_answering || [];
  el.className = "meta readers" + (dead.length || !r.synced ? " trouble" : "");
  const parts = [];
  if (!r.synced) parts.push("antenna board not in sync");
  if (dead.length) parts.push(`antenna ${dead.join(", ")} not answering`);
  parts.push(`${r.misses} missed`, `${r.collisions} collisions`);
  if (r.cycle_ms != null) parts.push(`scan ${Number(r.cycle_ms).toFixed(1)} ms`);
  if (r.stalls) parts.push(`${r.stalls} stalls`);
  el.textContent = "readers: " + parts.join(" \u00b7 ");
  return el;
}

// ------------------------------------------------------------------ alerts
let alerts = [];
async function loadAlerts() {
  alerts = await api("/api/alerts?limit=200");
  const now = Date.now();
  for (const a of alerts) {  // an alert the page first hears of by loading the feed (after a reconnect)
    const key = `${a.table_id}/${a.alert_id}`;
    if (!(key in window.floorAlertsSeen)) window.floorAlertsSeen[key] = now;
  }
  renderAlerts();
}
function renderAlerts() {
  const feed = $("#alert-feed");
  feed.replaceChildren();
  let open = 0;
  for (const a of alerts) {
    if (!a.acked) open += 1;
    const li = document.createElement("li");
    li.className = a.acked ? "acked" : "";
    li.dataset.table = a.table_id;
    li.dataset.alert = a.alert_id;
    const cites = (a.citations || []).map(esc).join("; ");
    li.innerHTML = `<b>${esc(a.table_id)}</b> hand ${esc(a.hand_id ?? "-")} &middot; ${time(a.ts)} &middot;
      <b>${esc(kindWord(a))}</b> ${esc(reasonWords(a.reason))} &middot; dealer ${esc(a.dealer || "-")}
      <div>${esc(a.message)}</div><div class="cite">${cites}</div>`;
    if (!a.acked) {
      const b = document.createElement("button");
      b.className = "ack";
      b.textContent = "Acknowledge";
      b.addEventListener("click", () => acknowledge(a));
      li.prepend(b);
    } else {
      li.insertAdjacentHTML("beforeend", `<div class="cite">acknowledged by ${esc(a.acked_by)} at ${time(a.acked)}</div>`);
    }
    feed.append(li);
  }
  $("#alert-count").textContent = open ? `(${open})` : "";
}
async function acknowledge(a) {
  await api(`/api/alerts/${encodeURIComponent(a.table_id)}/${encodeURIComponent(a.alert_id)}/ack`, { method: "POST" });
  await Promise.all([loadAlerts(), loadTables()]);
}

// ------------------------------------------------------------------ live
function live() {
  const es = new EventSource("/api/stream");
  es.onopen = () => { $("#live").classList.add("up"); loadTables(); loadAlerts(); };
  es.onerror = () => $("#live").classList.remove("up");
  es.onmessage = (ev) => {
    const note = JSON.parse(ev.data);
    if (note.type === "alert") {
      const a = note.alert;
      window.floorAlertsSeen[`${note.table_id}/${a.id}`] = Date.now();
      const row = { table_id: note.table_id, alert_id: a.id, hand_id: a.hand_id, ts: a.ts, ruling: a.ruling,
        reason: a.reason, severity: a.severity, message: a.message, citations: a.citations, dealer: a.dealer };
      alerts.unshift(row);
      const t = tables.get(note.table_id) || { table_id: note.table_id, online: 1 };
      if (!t.alert) t.alert = row;
      tables.set(note.table_id, t);
      renderTables();
      renderAlerts();
    } else {
      scheduleTables();
    }
  };
}
let tablesTimer = null;
function scheduleTables() {
  if (!tablesTimer) tablesTimer = setTimeout(() => { tablesTimer = null; loadTables(); }, 250);
}

// ------------------------------------------------------------------ hands and the replay
$("#hand-filter").addEventListener("submit", (e) => { e.preventDefault(); loadHands(); });
let handsAsked = 0;
async function loadHands() {
  const q = new URLSearchParams();
  for (const [k, v] of new FormData($("#hand-filter"))) if (v) q.set(k, v);
  q.set("limit", "100");
  const asked = ++handsAsked;
  const rows = await api(`/api/hands?${q}`);
  if (asked !== handsAsked) return; // a newer search was made meanwhile: its answer wins
  const body = $("#hand-list tbody");
  body.replaceChildren();
  for (const h of rows) {
    const tr = document.createElement("tr");
    tr.dataset.hand = `${h.table_id}/${h.hand_id}/${h.start_seq}`;
    tr.innerHTML = `<td>${esc(h.table_id)}</td><td>${esc(h.hand_id)}</td><td>${esc(h.game)}</td>
      <td>${esc(h.dealer || "-")}</td><td>${esc(h.result || "in play")}</td><td>${time(h.started)}</td>`;
    tr.addEventListener("click", () => {
      for (const r of body.children) r.classList.toggle("sel", r === tr);
      openHand(h.table_id, h.hand_id, h.start_seq);
    });
    body.append(tr);
  }
}

let replay = null;
async function openHand(table, handId, startSeq) {
  const hand = await api(`/api/hands/${encodeURIComponent(table)}/${handId}/${startSeq}`);
  replay = { hand, step: 0 };
  $("#replay").hidden = false;
  $("#replay-title").textContent = `${table} hand ${handId}: ${hand.game} ${hand.structure || ""} (${hand.rules}), dealer ${hand.dealer || "-"}`;
  renderReplay();
}
function stepTo(i) {
  if (!replay) return;
  replay.step = Math.max(0, Math.min(replay.hand.events.length - 1, i));
  renderReplay();
}
$("#step-first").addEventListener("click", () => stepTo(0));
$("#step-prev").addEventListener("click", () => stepTo(replay.step - 1));
$("#step-next").addEventListener("click", () => stepTo(replay.step + 1));
$("#step-last").addEventListener("click", () => stepTo(1e9));

function describe(e) {
  const p = e.payload;
  switch (e.kind) {
    case "hand_start": return `hand starts: ${p.game}, button ${p.button ?? "-"}, seats ${(p.seats || []).join(", ")}`;
    case "card": return `seat ${p.seat}: card ${p.face === "up" ? p.card : "face down"}${p.exposed ? " (exposed)" : ""}`;
    case "burn": return "burn";
    case "board": return `board ${(p.cards || []).join(" ")}`;
    case "street": return `street: ${p.name}`;
    case "action": return `seat ${p.seat} ${p.action}${p.amount != null ? " " + p.amount : ""}${p.all_in ? " all in" : ""}`;
    case "draw": return `seat ${p.seat} draws ${p.count}`;
    case "ruling": return `RULING ${p.alert.ruling || p.alert.severity}: ${p.alert.message} [${(p.alert.citations || []).join("; ")}]`;
    case "hand_end": return `hand ends: ${p.result}${p.summary ? " - " + p.summary : ""}`;
    case "dealer": return `dealer ${p.dealer || "signed out"}`;
    default: return e.kind;
  }
}

// Replays events 0..step into a table view.
function replayState(events, step) {
  const s = { seats: new Map(), board: [], burns: 0, street: "", winners: new Set(), result: null, pots: null };
  for (let i = 0; i <= step && i < events.length; i += 1) {
    const e = events[i];
    const p = e.payload;
    if (e.kind === "hand_start") for (const seat of p.seats || []) s.seats.set(seat, { cards: [], folded: false });
    else if (e.kind === "card") {
      const seat = s.seats.get(p.seat) || { cards: [], folded: false };
      if (p.exposed) seat.cards = seat.cards.map((c) => c); // the identity arrives below
      seat.cards.push(p.face === "up" ? p.card : null);
      s.seats.set(p.seat, seat);
    } else if (e.kind === "burn") s.burns += 1;
    else if (e.kind === "board") s.board = p.cards || [];
    else if (e.kind === "street") s.street = p.name;
    else if (e.kind === "action" && p.action === "fold" && s.seats.get(p.seat)) s.seats.get(p.seat).folded = true;
    else if (e.kind === "hand_end") {
      s.result = p.result;
      for (const w of p.winners || []) s.winners.add(w.seat);
      if (p.shown) for (const [seat, cards] of Object.entries(p.shown)) {
        const st = s.seats.get(Number(seat));
        if (st) st.cards = cards.slice();
      }
      if (p.payouts || p.pots) s.pots = { payouts: p.payouts, pots: p.pots };
    }
  }
  return s;
}

function renderReplay() {
  const { hand, step } = replay;
  const events = hand.events;
  const s = replayState(events, step);
  const atEnd = step >= events.length - 1;
  $("#step-label").textContent = `step ${step + 1} / ${events.length}`;
  const board = $("#replay-board");
  board.replaceChildren(...s.board.map((c) => cardFace(c)));
  const seats = $("#replay-seats");
  seats.replaceChildren();
  // The delayed broadcast copy of the hole cards (the only one that leaves a table) shows at the hand's end.
  const hole = atEnd && hand.holecards ? hand.holecards : {};
  for (const [seat, st] of s.seats) {
    const el = document.createElement("div");
    el.className = "seat" + (st.folded ? " folded" : "") + (s.winners.has(seat) ? " winner" : "");
    el.dataset.seat = seat;
    el.innerHTML = `<div class="name">seat ${seat}</div>`;
    const known = hole[String(seat)];
    st.cards.forEach((c, i) => {
      const label = c || (known && known[i]) || null;
      el.append(label ? cardFace(label) : cardBack());
    });
    seats.append(el);
  }
  const pots = $("#replay-pots");
  pots.textContent = s.pots ? `pots: ${JSON.stringify(s.pots.pots ?? s.pots.payouts)}` : "";
  const log = $("#replay-log");
  log.replaceChildren();
  events.forEach((e, i) => {
    const li = document.createElement("li");
    li.className = (i === step ? "now" : i > step ? "future" : "") + (e.kind === "ruling" ? " ruling" : "");
    li.textContent = describe(e);
    li.addEventListener("click", () => stepTo(i));
    log.append(li);
  });
}

// ------------------------------------------------------------------ dealer report
$("#report-form").addEventListener("submit", (e) => { e.preventDefault(); loadReport(); });
async function loadReport() {
  const hours = Number(new FormData($("#report-form")).get("hours")) || 8;
  $("#csv").href = `/api/report.csv?hours=${hours}`;
  const r = await api(`/api/report?hours=${hours}`);
  drawHandsPerHour(r);
  drawRates(r);
  drawDurations(r);
}
const COLORS = ["#4fc3f7", "#ffb74d", "#81c784", "#e57373", "#ba68c8", "#fff176", "#4db6ac", "#a1887f"];
function svg(w, h, inner) {
  return `<svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img">${inner}</svg>`;
}
function drawHandsPerHour(r) {
  const w = 640, h = 200, pad = 30;
  const max = Math.max(1, ...r.dealers.flatMap((d) => d.hands_per_hour.map((x) => x.hands)));
  const n = r.hours.length;
  const x = (i) => pad + (i * (w - 2 * pad)) / Math.max(1, n - 1);
  const y = (v) => h - pad - (v * (h - 2 * pad)) / max;
  let inner = `<text x="4" y="14">${max} hands</text>`;
  r.dealers.forEach((d, k) => {
    const pts = d.hands_per_hour.map((p, i) => `${x(i)},${y(p.hands)}`).join(" ");
    inner += `<polyline class="series" data-dealer="${esc(d.dealer)}" fill="none" stroke="${COLORS[k % COLORS.length]}" stroke-width="2" points="${pts}"/>`;
    inner += `<text x="${w - 150}" y="${16 + 14 * k}" fill="${COLORS[k % COLORS.length]}">${esc(d.dealer)} (${d.hands})</text>`;
  });
  r.hours.forEach((hr, i) => { if (i % Math.ceil(n / 8) === 0) inner += `<text x="${x(i) - 14}" y="${h - 8}">${new Date(hr * 1000).getHours()}:00</text>`; });
  $("#chart-hph").innerHTML = svg(w, h, inner);
}
function drawRates(r) {
  const bars = [];
  for (const d of r.dealers) {
    for (const [reason, v] of Object.entries(d.misdeals_per_100)) {
      bars.push({ label: `${d.dealer} misdeal: ${reasonWords(reason)}`, v });
    }
    for (const [reason, v] of Object.entries(d.irregularities_per_100)) bars.push({ label: `${d.dealer} ${reasonWords(reason)}`, v });
  }
  const w = 640, row = 18, h = Math.max(30, bars.length * row + 10);
  const max = Math.max(1, ...bars.map((b) => b.v || 0));
  let inner = "";
  bars.forEach((b, i) => {
    const bw = ((b.v || 0) * (w - 330)) / max;
    inner += `<rect class="bar" x="260" y="${5 + i * row}" width="${bw}" height="${row - 4}" fill="#e57373"/>`;
    inner += `<text x="4" y="${17 + i * row}">${esc(b.label)}</text><text x="${265 + bw}" y="${17 + i * row}">${b.v}</text>`;
  });
  $("#chart-rate").innerHTML = bars.length ? svg(w, h, inner) : "<p>No misdeals or irregularities.</p>";
}
function drawDurations(r) {
  const w = 640, row = 20, h = Math.max(30, r.dealers.length * row + 10);
  const max = Math.max(1, ...r.dealers.map((d) => d.mean_hand_seconds || 0));
  let inner = "";
  r.dealers.forEach((d, i) => {
    const bw = ((d.mean_hand_seconds || 0) * (w - 330)) / max;
    inner += `<rect class="bar" x="200" y="${5 + i * row}" width="${bw}" height="${row - 4}" fill="#4fc3f7"/>`;
    inner += `<text x="4" y="${18 + i * row}">${esc(d.dealer)}</text><text x="${205 + bw}" y="${18 + i * row}">${d.mean_hand_seconds ?? "-"} s</text>`;
  });
  $("#chart-dur").innerHTML = svg(w, h, inner);
}

loadTables();
loadAlerts();
live();
