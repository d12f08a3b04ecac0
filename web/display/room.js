// What the floor says about this table (docs/room.md): the tournament's level and the next
// (`floor/room/level`, retained), and the floor's orders for this table (`floor/room/table/<table>`):
// players drawn to a seat, moved to or from the table, out of the event (RRoP s15 20: he leaves his
// seat), a halt or a break, and the action clock on a player (TDA 26: 50 seconds, then a 10-second
// count, then the hand is dead).

import { fmt } from "../common/chips.js";

const $ = (sel) => document.querySelector(sel);
const ORDER_KINDS = new Set(["seat", "move", "arrive", "bust", "halt", "resume", "break", "redraw", "hand_for_hand"]);
const MAX_ORDERS = 4;

const room = {
  table: "",
  level: null, // the floor's last level payload, with `at` (when it was read)
  orders: [], // the standing orders for this table, newest last
  clock: null, // {seat, called, count_at, expires} while a clock runs; {seat, done: text} after
};

export function roomTopics(table) {
  room.table = String(table);
  return ["floor/room/level", `floor/room/table/${table}`];
}

export function isRoomTopic(topic) {
  return topic === "floor/room/level" || topic === `floor/room/table/${room.table}`;
}

export function onRoom(topic, d) {
  if (!d || typeof d !== "object") return;
  if (topic === "floor/room/level") {
    room.level = d;
  } else if (d.kind === "action_clock" && d.phase === "running") {
    room.clock = { seat: d.seat, called: d.called, count_at: d.count_at, expires: d.expires };
  } else if (d.kind === "action_clock" && d.phase === "acted") {
    room.clock = { seat: d.seat, done: `Seat ${d.seat} acted in time`, phase: "acted" };
  } else if (d.kind === "ruling" && d.ruling === "dead_hand") {
    room.clock = { seat: d.seat, done: `Seat ${d.seat}: hand dead (${(d.citations || []).join(", ")})`, phase: "dead" };
  } else if (d.kind === "seated") {
    // the move is done: both tables drop the orders about this player
    room.orders = room.orders.filter((o) => o.player !== d.player);
    room.orders.push({ kind: "seated", player: d.player, text: orderText(d) });
  } else if (ORDER_KINDS.has(d.kind)) {
    if (d.player) room.orders = room.orders.filter((o) => o.player !== d.player);
    room.orders.push({ kind: d.kind, player: d.player || null, text: orderText(d), citations: d.citations || [] });
  }
  room.orders = room.orders.slice(-MAX_ORDERS);
  renderRoom();
}

function orderText(d) {
  const me = room.table;
  if (d.kind === "move" && String(d.from_table) === me) {
    return `Move ${d.player} (seat ${d.from_seat}) to table ${d.table}, seat ${d.seat}`;
  }
  if (d.kind === "move") return `${d.player} comes from table ${d.from_table} to seat ${d.seat}`;
  if (d.kind === "arrive" && String(d.table) === me) {
    return `${d.player} arrives from table ${d.from_table}: seat ${d.seat}` + (d.stack != null ? `, ${fmt(d.stack)} in chips` : "");
  }
  if (d.kind === "arrive") return `${d.player} has left for table ${d.table}`;
  if (d.kind === "seated") {
    return String(d.table) === me ? `${d.player} is seated in seat ${d.seat}` : `${d.player} is seated at table ${d.table}`;
  }
  return d.text || d.kind;
}

function levelLine(l, now) {
  if (!l || l.level == null) return "";
  const blinds = (x) => `${fmt(x.small_blind)}/${fmt(x.big_blind)}` +
    (x.big_blind_ante ? ` BB ante ${fmt(x.big_blind_ante)}` : x.ante ? ` ante ${fmt(x.ante)}` : "");
  const parts = [`${l.on_break ? "Break after level" : "Level"} ${l.level}`];
  if (!l.on_break) parts.push(blinds(l));
  if (l.seconds_left != null && l.at != null) {
    const left = Math.max(0, Math.round(l.at + l.seconds_left - now));
    parts.push(`${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`);
  }
  parts.push(l.next ? `next ${blinds(l.next)}` : "last level");
  return parts.join(" \u00b7 ");
}

// The clock's phase and the seconds shown: the 50 seconds, then the 10-second count.
export function clockReading(c, now) {
  if (!c) return null;
  if (c.done) return { phase: c.phase, left: 0, text: c.done };
  if (now < c.count_at) {
    const left = Math.ceil(c.count_at - now);
    return { phase: "running", left, text: `Clock on seat ${c.seat}: ${left}` };
  }
  if (now <= c.expires) {
    const left = Math.ceil(c.expires - now);
    return { phase: "count", left, text: `Seat ${c.seat}: ${left}\u2026` };
  }
  return { phase: "zero", left: 0, text: `Seat ${c.seat}: time` };
}

export function renderRoom() {
  const now = Date.now() / 1000;
  const lvl = $("#room-level");
  const line = levelLine(room.level, now);
  lvl.textContent = line;
  lvl.hidden = !line;
  lvl.dataset.level = room.level && room.level.level != null ? String(room.level.level) : "";
  const box = $("#room-orders");
  box.replaceChildren(...room.orders.map((o) => {
    const el = document.createElement("div");
    el.className = "order";
    el.dataset.kind = o.kind;
    if (o.player) el.dataset.player = o.player;
    el.textContent = o.citations && o.citations.length ? `${o.text} (${o.citations.join(", ")})` : o.text;
    return el;
  }));
  box.hidden = room.orders.length === 0;
  const clock = $("#room-clock");
  const r = clockReading(room.clock, now);
  clock.hidden = !r;
  clock.dataset.phase = r ? r.phase : "";
  clock.dataset.left = r ? String(r.left) : "";
  clock.dataset.seat = room.clock ? String(room.clock.seat) : "";
  clock.textContent = r ? r.text : "";
}
