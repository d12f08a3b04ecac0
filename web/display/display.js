// Dealer display and console: the public table (retained `state` + `event/*`), full-screen
// rulings (`alert`, retained `alert/active`), and console requests (`request/<name>` with an
// MQTT v5 response topic and correlation data).  It never sees a face-down card: the broker's
// ACL gives the display and console users public topics only (docs/mqtt.md).

import { cardBack, cardFace } from "../common/cards.js";
import { actionPad, betOf, chipsOf, fmt, GAMES, lastActionText, legal, levelText, potText, rangeText, seatEditor,
  stackOf, STRUCTURES, labelled, textInput } from "../common/chips.js";
import { connect, loadConfig, parsePayload, topicRoot } from "../common/config.js";
import { diagnosticsTopic, onDiagnostics, wireService } from "./service.js";
import { requester, showToast } from "../common/console.js";
import { fitAll } from "../common/fit.js";
import { isRoomTopic, onRoom, renderRoom, roomTopics } from "./room.js";

const $ = (sel) => document.querySelector(sel);
const ACTIONS = ["fold", "check", "call", "bet", "raise", "complete", "bring_in"];
const ACTION_WORDS = { fold: "folds", check: "checks", call: "calls", bet: "bets", raise: "raises",
  complete: "completes", bring_in: "brings it in" };
// Causes the sensors cannot see; the controller rules on them (misdeal or void) and cites the rule.
const MISDEAL_REASONS = [
  ["button_out_of_position", "Button out of position"],
  ["wrong_card_count", "Wrong number of cards"],
  ["seat_dealt_out", "A seat was passed over"],
  ["out_of_sequence", "Card dealt out of order"],
  ["extra_cards", "Extra cards dealt"],
  ["early_card_exposed", "First/second card face up"],
  ["two_cards_exposed", "Two downcards exposed"],
  ["called_misdeal", "Other (dealer's call)"],
];
const SEVERITY_TITLE = { misdeal: "Misdeal", void: "Void hand", irregularity: "Irregularity", fault: "Hard stop" };

const ui = {
  cfg: null,
  client: null,
  clientId: "",
  root: "",
  requests: null, // common/console.js requester
  state: null, // last `state` payload
  activeAlert: null, // payload shown full-screen, or null
  alertSource: "none", // which topic last decided the alert: "active" (retained) wins over state.alert
  shown: null, // {hand_id, seats} cards tabled at the showdown (public then)
  result: null, // {hand_id, text}
  names: { hand_id: null, seats: {} }, // the players' names as the hand saw them
  draw: null, // the last event/button_draw (the draw for the button), until the next hand starts
  drawShown: null, // the draw on screen: its cards sit on the seats
};

// ---------------------------------------------------------------- connection

async function main() {
  ui.cfg = await loadConfig("display");
  document.body.dataset.role = ui.cfg.user === "display" ? "display" : "console";
  ui.root = topicRoot(ui.cfg);
  const { client, clientId } = connect(ui.cfg, "display", setConn);
  ui.client = client;
  ui.clientId = clientId;
  ui.requests = requester(client, clientId, ui.root, (text, ok, name) => {
    toast(text, ok);
    if (name === "acknowledge" && !ok) resetAck();
  });
  client.on("connect", () => {
    const subs = [`${ui.root}/availability`, `${ui.root}/state`, `${ui.root}/event/#`, `${ui.root}/alert`,
      `${ui.root}/alert/active`, diagnosticsTopic(ui.root)];
    if (document.body.dataset.role === "console") subs.push(ui.requests.responseTopic, `${ui.root}/response`);
    subs.push(...roomTopics(ui.cfg.table)); // what the floor says about this table (docs/room.md)
    client.subscribe(subs, { qos: 1 });
  });
  client.on("message", onMessage);
  wireConsole();
  wireService();
  setInterval(renderClock, 1000);
  setInterval(renderRoom, 250);
  render();
}

function setConn(state, detail) {
  const el = $("#conn");
  el.dataset.state = state;
  el.textContent = state === "error" ? `error: ${detail || ""}`.slice(0, 40) : state;
  document.body.dataset.conn = state;
}

function onMessage(topic, bytes, packet) {
  const rel = topic.startsWith(ui.root + "/") ? topic.slice(ui.root.length + 1) : topic;
  if (rel === "availability") {
    const text = new TextDecoder().decode(bytes);
    const el = $("#availability");
    el.dataset.state = text === "online" ? "online" : "offline";
    el.textContent = text === "online" ? "controller online" : "controller OFFLINE";
    return;
  }
  const data = parsePayload(bytes);
  if (data === undefined) return;
  if (isRoomTopic(topic)) {
    onRoom(topic, data);
  } else if (rel === "state") {
    if (!data) return;
    ui.state = data;
    rememberNames(data);
    if (ui.alertSource !== "active") setAlert(data.alert, "state");
    render();
  } else if (rel === "diagnostics") {
    onDiagnostics(data);
  } else if (rel === "alert/active") {
    setAlert(data, "active");
  } else if (rel === "alert") {
    if (data && data.requires_ack !== false) setAlert(data, "active");
    else if (data) toast(data.message, false);
  } else if (rel.startsWith("event/")) {
    onEvent(rel.slice(6), data);
  } else if (rel === "response" || topic === ui.requests.responseTopic) {
    ui.requests.onResponse(data, packet);
  }
}

function onEvent(kind, ev) {
  if (!ev) return;
  if (kind === "hand_start") {
    ui.draw = null;
    ui.shown = null;
    ui.result = null;
    $("#last-action").textContent = "";
  } else if (kind === "card") {
    flashSeat(ev.seat);
  } else if (kind === "action") {
    const words = ACTION_WORDS[ev.action] || ev.action;
    const amount = ev.amount != null ? ` ${["raise", "complete"].includes(ev.action) ? "to " : ""}${fmt(ev.amount)}` : "";
    $("#last-action").textContent = ev.text || `Seat ${ev.seat} ${words}${amount}${ev.all_in ? " (all in)" : ""}`;
  } else if (kind === "button_draw") {
    ui.draw = ev.cancelled ? null : ev;
    if (ev.winner != null) toast(drawText(ev, playerName), true);
    render();
  } else if (kind === "hand_end") {
    if (ev.shown) ui.shown = { hand_id: ev.hand_id, seats: ev.shown };
    ui.result = { hand_id: ev.hand_id, text: resultText(ev) };
    render();
  }
}

function rememberNames(state) {
  if (state.hand_id !== ui.names.hand_id) ui.names = { hand_id: state.hand_id, seats: {} };
  const players = state.table && state.table.players ? state.table.players : {};
  for (const [k, p] of Object.entries(players)) if (p && p.name) ui.names.seats[k] = p.name;
}

// One line per winner: what he won (a winner's `share`: an uncalled bet handed back is not
// winnings, and it is said apart), the half he won and his hand.
function resultText(ev) {
  if (ev.result === "misdeal") return "Misdeal \u2013 redeal";
  if (ev.result === "void") return "Hand void";
  const seen = new Set();
  const lines = (ev.winners || []).map((w) => {
    const part = w.part && w.part !== "pot" && w.part !== "high" ? ` (${w.part})` : "";
    const won = ev.payouts && w.share != null && !seen.has(w.seat) ? ` wins ${fmt(w.share)}` : "";
    seen.add(w.seat);
    const name = playerName(w.seat);
    return `Seat ${w.seat}${name ? ` ${name}` : ""}${won || " wins"}${part}${w.hand ? ` \u2013 ${w.hand}` : ""}`;
  });
  if (ev.returned) lines.push(`${fmt(ev.returned.amount)} returned to seat ${ev.returned.seat} (not called)`);
  if (!(ev.winners || []).length) return ev.result === "showdown" ? "Showdown" : "Hand over";
  return lines.join("\n");
}

// ---------------------------------------------------------------- rendering

function render() {
  const s = ui.state;
  const table = s ? s.table : null;
  const hand = s ? s.hand : null;
  $("#game").textContent = table
    ? `${s.table_id} \u00b7 ${GAMES[(hand || table).game] || (hand || table).game}` +
      `${hand && hand.structure ? ` ${hand.structure.replace("_", " ")}` : ""} \u00b7 ${table.rules} ${table.event}`
    : ui.cfg ? `${ui.cfg.table} \u00b7 waiting for the table\u2026` : "";
  $("#hand-id").textContent = s && s.hand_id != null ? `hand ${s.hand_id}` : "no hand";
  const street = $("#street");
  street.textContent = hand ? hand.street : "";
  street.dataset.street = hand ? hand.street : "";
  $("#phase").textContent = hand ? hand.phase : "";
  const burns = $("#burns");
  burns.dataset.count = String(hand ? hand.burns : 0);
  burns.textContent = hand ? `Burns: ${hand.burns}` : "";
  const board = $("#board");
  board.replaceChildren(...(hand ? hand.board.map((c) => cardFace(c)) : []));
  board.dataset.count = String(hand ? hand.board.length : 0);
  ui.drawShown = renderDraw(table, hand);
  renderSeats(table, hand);
  renderClock();
  const chips = chipsOf(s);
  const pot = $("#pot");
  pot.hidden = !chips || (hand && hand.phase === "dead"); // a misdeal or void: every chip went back
  pot.dataset.pot = chips ? String(chips.pot) : "";
  pot.textContent = potText(chips);
  const l = legal(s);
  const range = $("#range");
  range.textContent = l ? rangeText(l).replace(/^Seat \d+: /, "") : ""; // the seat is under "Action on"
  range.dataset.toCall = l ? String(l.toCall) : "";
  range.dataset.minRaise = l && l.minRaise != null ? String(l.minRaise) : "";
  range.dataset.maxRaise = l && l.maxRaise != null ? String(l.maxRaise) : "";
  if (lastActionText(chips)) $("#last-action").textContent = lastActionText(chips);
  const next = hand ? hand.next_seat : null;
  const toAct = hand ? hand.to_act : null;
  $("#next").dataset.seat = next ?? "";
  $("#next-seat").textContent = next != null ? `Seat ${next}` : "\u2013";
  $("#next-name").textContent = next != null ? playerName(next) : "";
  $("#to-act").dataset.seat = toAct ?? "";
  $("#to-act-seat").textContent = toAct != null ? `Seat ${toAct}` : "\u2013";
  $("#to-act-name").textContent = toAct != null ? playerName(toAct) : "";
  renderShowOrder(hand);
  renderRotation(table);
  const result = $("#result");
  const showResult = ui.result && s && ui.result.hand_id === s.hand_id;
  result.hidden = !showResult;
  result.textContent = showResult ? ui.result.text : "";
  const inHand = hand && !["done", "dead"].includes(hand.phase);
  $("#btn-new-hand").disabled = Boolean(inHand);
  $("#btn-button").disabled = Boolean(inHand);
  $("#btn-action").disabled = !inHand;
  $("#btn-misdeal").disabled = !inHand;
  $("#btn-clock").disabled = !inHand;
  fitAll(document, "#game, #result, #range, #last-action, #next-name, #to-act-name", { min: 9, wrapAt: 11 });
  fitAll(document, "#rotation", { min: 9 });
}

// The engine's to_show: the seat that tables first once the last betting round is over (TDA 15-A;
// RRoP s3 Showdown 7), or "all": a player is all in and the betting is over, every hand is tabled
// face up (TDA 14; RRoP s15 34).  The display says what the engine derived; it decides nothing.
export function showOrderText(toShow, name) {
  if (toShow === "all") return "All hands face up";
  if (toShow == null) return "";
  return `Seat ${toShow}${name ? ` ${name}` : ""} shows first`;
}

function renderShowOrder(hand) {
  const el = $("#show-order");
  const toShow = hand && hand.phase !== "dead" ? hand.to_show ?? null : null;
  el.dataset.toShow = toShow == null ? "" : String(toShow);
  el.textContent = showOrderText(toShow, typeof toShow === "number" ? playerName(toShow) : "");
  el.hidden = toShow == null;
}

// A mixed game's rotation (table.rotation): this deal's game and the next one, with the deals
// left before it (or "next level" when the game changes with the level).
export function rotationText(rot) {
  if (!rot || !rot.current) return "";
  const short = (g) => (g ? `${GAMES[g.game] || g.title || g.game}${g.structure === "limit" ? "" : ` ${
    g.structure === "no_limit" ? "NL" : "PL"}`}` : "");
  const when = rot.deals_left != null ? ` in ${rot.deals_left}` : rot.per_level ? " next level" : "";
  return `${rot.name ? `${rot.name.replace("_", " ").toUpperCase()}: ` : ""}${short(rot.current)} \u2192 ` +
    `${short(rot.next)}${when}`;
}

function renderRotation(table) {
  const el = $("#rotation");
  const rot = table ? table.rotation || null : null;
  el.textContent = rotationText(rot);
  el.dataset.current = rot && rot.current ? rot.current.game : "";
  el.dataset.next = rot && rot.next ? rot.next.game : "";
  el.hidden = !rot;
}

function drawCard(seat) {
  const d = ui.drawShown;
  return d && d.cards ? d.cards[String(seat)] || null : null;
}

// Amounts on a seat box: exact below 100,000, then 123k / 1.23M (the pad shows every chip).
function short(n) {
  if (n < 100_000) return fmt(n);
  if (n < 1_000_000) return `${Math.floor(n / 1000)}k`;
  return `${(Math.floor(n / 10_000) / 100).toFixed(2)}M`;
}

function renderClock() {
  const level = ui.state && ui.state.table ? ui.state.table.level : null;
  const { text, left } = levelText(level);
  const el = $("#level");
  el.textContent = text;
  el.hidden = !text;
  el.dataset.left = left == null ? "" : String(left);
}

function playerName(seat) {
  const p = ui.state && ui.state.table.players[String(seat)];
  if (p && p.name) return p.name;
  return ui.state && ui.names.hand_id === ui.state.hand_id ? ui.names.seats[String(seat)] || "" : "";
}

// Where the seats go, in px of the table's area, and how big a seat's box is.  The dealer sits at
// the bottom centre; seat 1 is on the dealer's left and the seats go clockwise (as seen from
// above): the bottom left, up the left side, across the top, down the right side, the bottom
// right.  Rows and columns rather than an ellipse: at 10 seats on 800x480 an ellipse puts the
// side seats on top of each other.  Each gap is at least GAP px, so no box reaches the next.
const GAP = 4;

export function seatLayout(size, width, height, rem) {
  const sides = size >= 8 ? 2 : 1;
  const bottom = size >= 5 ? 2 : 0;
  const top = Math.max(0, size - bottom - 2 * sides);
  const across = Math.max(top, 3); // the top row spans the width; below it a column each side and the middle
  const w = Math.floor(Math.min(9 * rem, (width - GAP * (across + 1)) / across, width / 4 - 1.25 * GAP));
  const rows = sides + (top ? 1 : 0) + (bottom ? 1 : 0);
  const h = Math.floor(Math.min(6.2 * rem, (height - GAP * (rows + 1)) / Math.max(rows, 2)));
  const left = w / 2 + GAP;
  const right = width - w / 2 - GAP;
  const topY = h / 2 + GAP;
  const bottomY = height - h / 2 - GAP;
  const out = [];
  const spread = (n, a, b) => Array.from({ length: n }, (_, j) => a + ((b - a) * (j + 1)) / (n + 1));
  const under = Math.max(w / 2 + GAP, width / 5); // the two bottom seats, either side of the dealer
  if (bottom) out.push({ x: width / 2 - under, y: bottomY });
  const firstY = top ? topY : GAP;
  const lastY = bottom ? bottomY : height - GAP;
  const sideYs = top || bottom ? spread(sides, firstY, lastY) : [height / 2];
  for (const y of [...sideYs].reverse()) out.push({ x: left, y });
  for (let j = 0; j < top; j++) out.push({ x: top === 1 ? width / 2 : left + ((right - left) * j) / (top - 1), y: topY });
  for (const y of sideYs) out.push({ x: right, y });
  if (bottom) out.push({ x: width / 2 + under, y: bottomY });
  return { w, h, at: out };
}

function renderSeats(table, hand) {
  const box = $("#seats");
  if (!table) {
    box.replaceChildren();
    return;
  }
  const wrap = $("#felt-wrap");
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 14;
  const lay = seatLayout(table.size, wrap.clientWidth, wrap.clientHeight, rem);
  box.style.setProperty("--seat-w", `${lay.w}px`);
  box.style.setProperty("--seat-h", `${lay.h}px`);
  const seats = [];
  const marks = hand || table;
  for (let n = 1; n <= table.size; n++) {
    const key = String(n);
    const player = table.players[key];
    const hs = hand ? hand.seats[key] : null;
    const el = document.createElement("div");
    el.className = "seat";
    el.dataset.seat = key;
    el.dataset.empty = String(!player && !hs);
    el.dataset.inHand = String(Boolean(hs));
    el.dataset.next = String(Boolean(hand && hand.next_seat === n));
    el.dataset.toAct = String(Boolean(hand && hand.to_act === n));
    el.dataset.folded = String(Boolean(hs && hs.folded));
    el.dataset.dead = String(Boolean(hs && hs.dead));
    el.dataset.allIn = String(Boolean(hs && hs.all_in));
    el.dataset.cards = String(hs ? hs.cards : 0);
    el.style.left = `${lay.at[n - 1].x}px`;
    el.style.top = `${lay.at[n - 1].y}px`;
    const top = document.createElement("div");
    top.className = "top";
    const num = document.createElement("span");
    num.className = "num";
    num.textContent = key;
    top.append(num);
    if (player) {
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = player.name;
      top.append(name);
    }
    el.append(top);
    const badges = document.createElement("div");
    badges.className = "badges";
    const badge = (cls, text) => {
      const b = document.createElement("span");
      b.className = `badge ${cls}`;
      b.textContent = text;
      badges.append(b);
    };
    if (marks.button === n) badge("button", "D");
    if (marks.small_blind === n) badge("sb", "SB");
    if (marks.big_blind === n) badge("bb", "BB");
    if (hand && hand.bring_in === n) badge("bring-in", "BRING-IN");
    el.dataset.showFirst = String(Boolean(hand && hand.to_show === n));
    if (hand && hand.to_show === n) badge("show-first", "SHOWS");
    const stack = stackOf(ui.state, n);
    const bet = hand ? betOf(ui.state, n) : 0;
    if (stack != null || bet || badges.childElementCount) {
      const money = document.createElement("div"); // one row: D/SB/BB, the stack, the bet
      money.className = "money";
      if (badges.childElementCount) money.append(badges);
      const st = document.createElement("span");
      st.className = "stack";
      st.dataset.stack = stack == null ? "" : String(stack);
      st.textContent = stack == null ? "" : short(stack);
      const bt = document.createElement("span");
      bt.className = "bet";
      bt.dataset.bet = String(bet);
      bt.textContent = bet ? short(bet) : "";
      money.append(st, bt);
      el.append(money);
    }
    if (hs && !drawCard(n)) { // between hands a draw for the button shows its cards instead
      const cards = document.createElement("div");
      cards.className = "cards";
      const shown = ui.shown && ui.state && ui.shown.hand_id === ui.state.hand_id ? ui.shown.seats[key] : null;
      if (shown && shown.length) {
        cards.classList.add("shown");
        for (const c of shown) cards.append(cardFace(c));
      } else {
        const backs = Math.max(0, hs.cards - hs.up.length);
        for (let i = 0; i < backs; i++) cards.append(cardBack());
        for (const c of hs.up) cards.append(cardFace(c, "up"));
      }
      el.append(cards);
      const st = hs.folded ? "folded" : hs.dead ? "dead hand" : hs.all_in ? "all in"
        : player && player.sitting_out ? "sitting out" : ""; // sat out since this hand ended
      if (st) {
        const stateEl = document.createElement("div");
        stateEl.className = "state";
        stateEl.textContent = st;
        el.append(stateEl);
      }
    } else if (drawCard(n)) {
      const cards = document.createElement("div");
      cards.className = "cards draw-card";
      cards.append(cardFace(drawCard(n)));
      el.append(cards);
    } else if (player && (player.waiting_for_big_blind || player.sitting_out)) {
      const stateEl = document.createElement("div");
      stateEl.className = "state";
      stateEl.textContent = player.sitting_out ? "sitting out" : "waits for BB";
      el.append(stateEl);
    }
    seats.push(el);
  }
  box.replaceChildren(...seats);
  fitAll(box, ".seat .name", { min: 8, wrapAt: 9 });
  for (const cards of box.querySelectorAll(".seat .cards")) overlapCards(cards);
}

// A seat's cards in its box: the backs tuck under each other first, then the faces (their rank
// and suit sit at the left, so what stays in sight of each is its rank and suit).
function overlapCards(row) {
  const cards = [...row.children];
  if (cards.length < 2) return;
  const w = cards[0].getBoundingClientRect().width;
  const gap = parseFloat(getComputedStyle(row).columnGap) || 0;
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 14;
  const backs = cards.filter((c, i) => i > 0 && c.classList.contains("back"));
  const faces = cards.filter((c, i) => i > 0 && !c.classList.contains("back"));
  let tuckBack = 0.6 * rem; // a hand of backs always fans a little (the seat's look)
  let tuckFace = 0;
  let over = cards.length * w + (cards.length - 1) * gap - backs.length * tuckBack - (row.clientWidth - 1);
  if (over > 0 && backs.length) {
    const more = Math.min(w * 0.75 + gap - tuckBack, over / backs.length);
    tuckBack += more;
    over -= more * backs.length;
  }
  if (over > 0 && faces.length) tuckFace = Math.min(w * 0.5 + gap, over / faces.length);
  for (const c of backs) c.style.marginLeft = `${-tuckBack}px`;
  for (const c of faces) c.style.marginLeft = tuckFace ? `${-tuckFace}px` : "";
}

function flashSeat(seat) {
  const el = document.querySelector(`.seat[data-seat="${seat}"]`);
  if (!el) return;
  el.classList.add("flash");
  setTimeout(() => el.classList.remove("flash"), 400);
}

// ---------------------------------------------------------------- alert

function setAlert(payload, source) {
  ui.alertSource = source === "active" ? "active" : ui.alertSource;
  ui.activeAlert = payload && payload.requires_ack !== false ? payload : null;
  const box = $("#alert");
  const a = ui.activeAlert;
  if (!a) {
    box.hidden = true;
    box.dataset.reason = "";
    box.dataset.severity = "";
    box.dataset.id = "";
    return;
  }
  const severity = a.severity || a.ruling || "irregularity";
  box.dataset.reason = a.reason || "";
  box.dataset.severity = severity;
  box.dataset.ruling = a.ruling || "";
  box.dataset.id = a.id || "";
  const seat = a.seat != null ? ` \u00b7 seat ${a.seat}` : "";
  $("#alert-title").textContent = `${SEVERITY_TITLE[severity] || severity}${seat}`;
  $("#alert-message").textContent = a.message || a.reason || "";
  const steps = (a.steps || []).map((text) => {
    const li = document.createElement("li");
    li.textContent = text;
    return li;
  });
  $("#alert-steps").replaceChildren(...steps);
  $("#alert-citations").textContent = (a.citations || []).join(" \u00b7 ");
  const ack = $("#ack");
  ack.disabled = false;
  ack.textContent = "Acknowledge";
  box.hidden = false;
}

// ---------------------------------------------------------------- console requests

function request(name, fields = {}) {
  return ui.requests ? ui.requests.request(name, fields) : null;
}

function resetAck() {
  const ack = $("#ack");
  ack.disabled = false;
  ack.textContent = "Acknowledge";
}

function toast(text, ok) {
  showToast($("#toast"), text, ok);
}

// ---------------------------------------------------------------- dialogs

function openDialog(title, build) {
  $("#dialog-title").textContent = title;
  const body = $("#dialog-body");
  body.replaceChildren();
  build(body);
  $("#dialog").hidden = false;
}

function closeDialog() {
  $("#dialog").hidden = true;
  $("#dialog-body").replaceChildren();
}

function button(text, cls, onClick, attrs = {}) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = cls;
  b.textContent = text;
  for (const [k, v] of Object.entries(attrs)) b.dataset[k] = v;
  b.addEventListener("click", onClick);
  return b;
}

function sectionLabel(text) {
  const d = document.createElement("div");
  d.className = "section-label";
  d.textContent = text;
  return d;
}

function seatChoices(seats, selected, onPick) {
  const grid = document.createElement("div");
  grid.className = "grid";
  for (const n of seats) {
    const name = playerName(n);
    const b = button(name ? `${n} ${name}` : String(n), "choice", () => {
      for (const x of grid.children) x.setAttribute("aria-pressed", "false");
      b.setAttribute("aria-pressed", "true");
      onPick(n);
    }, { pickSeat: String(n) });
    b.setAttribute("aria-pressed", String(n === selected));
    grid.append(b);
  }
  return grid;
}

function wireConsole() {
  $("#dialog-close").addEventListener("click", closeDialog);
  $("#ack").addEventListener("click", () => {
    const a = ui.activeAlert;
    const ack = $("#ack");
    ack.disabled = true;
    ack.textContent = "Acknowledging\u2026";
    if (!request("acknowledge", a && a.id ? { alert: a.id } : {})) resetAck();
  });
  $("#btn-new-hand").addEventListener("click", () => request("new_hand"));
  $("#btn-misdeal").addEventListener("click", () => openDialog("Call a misdeal \u2013 why?", (body) => {
    const grid = document.createElement("div");
    grid.className = "grid wide";
    for (const [code, words] of MISDEAL_REASONS) {
      grid.append(button(words, "choice", () => {
        closeDialog();
        request("misdeal", { reason: code });
      }, { reason: code }));
    }
    body.append(grid);
  }));
  $("#btn-button").addEventListener("click", () => openDialog("Move the button to seat\u2026", (body) => {
    const table = ui.state ? ui.state.table : null;
    const seats = table ? Object.keys(table.players).map(Number).sort((a, b) => a - b) : [];
    body.append(seatChoices(seats, table ? table.button : null, (n) => {
      closeDialog();
      request("set_button", { seat: n });
    }));
  }));
  $("#btn-action").addEventListener("click", () => openDialog("Enter an action", (body) => {
    if (legal(ui.state)) {
      // Chips: the legal range and the fast buttons for the seat to act, first.
      body.append(actionPad(ui.state, (name, fields) => {
        closeDialog();
        request(name, fields);
      }));
      body.append(sectionLabel("Another seat or action"));
    }
    const hand = ui.state ? ui.state.hand : null;
    const seats = hand ? Object.keys(hand.seats).map(Number) : [];
    let seat = hand && hand.to_act != null ? hand.to_act : null;
    let allIn = false;
    body.append(sectionLabel("Seat"), seatChoices(seats, seat, (n) => { seat = n; }));
    body.append(sectionLabel("Action"));
    const grid = document.createElement("div");
    grid.className = "grid";
    for (const act of ACTIONS) {
      grid.append(button(act.replace("_", " "), "choice go", () => {
        if (seat == null) {
          toast("Pick a seat first", false);
          return;
        }
        closeDialog();
        request("action", { seat, action: act, all_in: allIn });
      }, { action: act }));
    }
    // RRoP s4 10: a player dealt in without posting the missed blinds he owed looked at his cards.
    grid.append(button("looked (owes blinds)", "choice", () => {
      if (seat == null) {
        toast("Pick a seat first", false);
        return;
      }
      closeDialog();
      request("looked", { seat });
    }, { send: "looked" }));
    const allInBtn = button("all in", "choice", () => {
      allIn = !allIn;
      allInBtn.setAttribute("aria-pressed", String(allIn));
    }, { allIn: "toggle" });
    allInBtn.setAttribute("aria-pressed", "false");
    grid.append(allInBtn);
    body.append(grid);
  }));
  $("#btn-players").addEventListener("click", () => openDialog("Players and stacks", playersDialog));
  $("#btn-game").addEventListener("click", () => openDialog("Change the game", gameDialog));
  $("#btn-level").addEventListener("click", () => openDialog("Blinds and levels", levelDialog));
  // TDA 26: the dealer asks for the clock on a player still in the hand; the floor runs it.
  $("#btn-clock").addEventListener("click", () => openDialog("Call the clock on seat\u2026", (body) => {
    const hand = ui.state ? ui.state.hand : null;
    const seats = hand ? Object.entries(hand.seats).filter(([, v]) => !v.folded && !v.dead).map(([k]) => Number(k)) : [];
    body.append(seatChoices(seats.sort((a, b) => a - b), hand ? hand.to_act : null, (n) => {
      closeDialog();
      request("clock", { seat: n });
    }));
  }));
}

// Seat and name players; stacks between hands (common/chips.js seatEditor).
function playersDialog(body) {
  const table = ui.state ? ui.state.table : null;
  const seats = [];
  for (let n = 1; n <= (table ? table.size : 10); n++) seats.push(n);
  const editor = document.createElement("div");
  const pick = seatChoices(seats, null, (n) => {
    editor.replaceChildren(seatEditor(ui.state, n, (name, fields) => {
      closeDialog();
      request(name, fields);
    }), sittingPad(n));
  });
  for (const b of pick.children) {
    const p = table && table.players[b.dataset.pickSeat];
    b.textContent = p ? `${b.dataset.pickSeat} ${p.name}` : `${b.dataset.pickSeat} \u2013`;
  }
  body.append(sectionLabel("Seat"), pick, editor);
}

function gameDialog(body) {
  const table = ui.state ? ui.state.table : null;
  const pick = { game: table ? table.game : "holdem", structure: null, rules: table ? table.rules : null,
    event: table ? table.event : null };
  const group = (key, options) => {
    const grid = document.createElement("div");
    grid.className = "grid";
    for (const [code, words] of options) {
      const b = button(words, "choice", () => {
        pick[key] = code;
        for (const x of grid.children) x.setAttribute("aria-pressed", String(x === b));
      }, { [key]: code });
      b.setAttribute("aria-pressed", String(pick[key] === code));
      grid.append(b);
    }
    return grid;
  };
  body.append(sectionLabel("Game"), group("game", Object.entries(GAMES)));
  body.append(sectionLabel("Structure"), group("structure", Object.entries(STRUCTURES)));
  body.append(sectionLabel("Rules / event"), group("rules", [["robert", "Robert's"], ["tda", "TDA"]]),
    group("event", [["cash", "Cash"], ["tournament", "Tournament"]]));
  body.append(button("Change game (next hand)", "choice go", () => {
    const fields = { game: pick.game };
    for (const k of ["structure", "rules", "event"]) if (pick[k]) fields[k] = pick[k];
    closeDialog();
    request("change_game", fields);
  }, { send: "change_game" }));
  mixedGamePad(body, table);
}

// ---------------------------------------------------------------- the table side (issue 22)

// Sit a player out or back in (RRoP s4 9: back in, he posts what he missed or waits for the big blind).
function sittingPad(seat) {
  const table = ui.state ? ui.state.table : null;
  const player = table ? table.players[String(seat)] : null;
  const box = document.createElement("div");
  box.className = "grid wide sitting";
  if (!player) return box;
  const send = (name, fields) => () => {
    closeDialog();
    request(name, fields);
  };
  if (player.sitting_out) {
    box.append(button("Sit in, wait for the big blind", "choice go", send("sit_in", { seat }), { send: "sit_in" }),
      button("Sit in and post what he owes", "choice go", send("sit_in", { seat, post: true }), { send: "sit_in_post" }));
  } else {
    box.append(button("Sit out", "choice", send("sit_out", { seat }), { send: "sit_out" }));
  }
  return box;
}

// A mixed game's rotation (the config's and the built-in ones, by name) and a new game with a draw
// for the button.
function mixedGamePad(body, table) {
  const names = table && table.rotations ? table.rotations : [];
  if (names.length) {
    const grid = document.createElement("div");
    grid.className = "grid";
    for (const name of names) {
      grid.append(button(name.replace("_", " "), "choice go", () => {
        closeDialog();
        request("rotation", { name });
      }, { rotation: name }));
    }
    if (table.rotation) {
      grid.append(button("End rotation", "choice", () => {
        closeDialog();
        request("rotation", { name: null });
      }, { rotation: "" }));
    }
    body.append(sectionLabel("Mixed game (from the next deal)"), grid);
  }
  const drawing = Boolean(table && table.draw && table.draw.winner == null);
  body.append(sectionLabel("New game"), button(drawing ? "Cancel the draw for the button" : "Draw for the button",
    "choice go", () => {
      closeDialog();
      request("draw_button", drawing ? { cancel: true } : {});
    }, { send: "draw_button" }));
}

// The draw for the button (RRoP s2 Seating 6; s3 Ties 1-2): the cards the antennas read, who still
// waits for one, and the winner, from the state's table.draw and event/button_draw.
export function drawText(draw, nameOf) {
  if (!draw) return "";
  if (draw.cancelled) return "Draw for the button cancelled";
  if (draw.winner != null) {
    const name = nameOf(draw.winner);
    const card = draw.cards ? draw.cards[String(draw.winner)] : null;
    return `Seat ${draw.winner}${name ? ` ${name}` : ""} wins the button${card ? ` (${card})` : ""}`;
  }
  const waiting = draw.waiting || [];
  return waiting.length ? `Draw for the button: a card face up to seat${waiting.length > 1 ? "s" : ""} ` +
    `${waiting.join(", ")}` : "Draw for the button";
}

function renderDraw(table, hand) {
  const el = $("#draw");
  const inHand = hand && !["done", "dead"].includes(hand.phase);
  // The live event first (it names the winner); a display that joins mid-draw reads the state.
  const pending = table && table.draw && table.draw.winner == null ? table.draw : null;
  const draw = inHand ? null : ui.draw || pending;
  el.hidden = !draw;
  el.dataset.winner = draw && draw.winner != null ? String(draw.winner) : "";
  el.textContent = draw ? drawText(draw, playerName) : "";
  return draw;
}

function levelDialog(body) {
  const level = ui.state && ui.state.table ? ui.state.table.level : null;
  const now = document.createElement("div");
  now.className = "level-now";
  now.textContent = level ? levelText(level).text : "No level schedule in the config";
  body.append(now);
  if (level && level.next) {
    const nxt = document.createElement("div");
    nxt.className = "level-next";
    nxt.textContent = `Next: ${levelText({ ...level.next, ends_at: null }).text}`;
    body.append(nxt);
  }
  const number = textInput("level", true, level ? String(level.number) : "");
  const grid = document.createElement("div");
  grid.className = "grid wide";
  grid.append(
    button("Next level (next hand)", "choice go", () => {
      closeDialog();
      request("level", { advance: true });
    }, { send: "advance" }),
    button("Go to level #", "choice go", () => {
      const n = Number(number.value.replace(/[^0-9]/g, ""));
      if (!n) return;
      closeDialog();
      request("level", { number: n });
    }, { send: "level" }),
  );
  body.append(labelled("Level number", number), grid);
}

main();
