// Action tracker: a tablet-sized operator page for a broadcast operator or a floor person
// (PokerGFX's operator enters every bet the same way).  It reads the public table like the
// dealer display (`state`, `event/#`, `alert`, `alert/active`: never a face-down card) and
// writes console requests (`request/action`, `request/put`, `request/seat`, `request/stack`,
// `request/new_hand`) with the `console` credential; the controller validates each one and
// answers with what is legal.

import { cardFace } from "../common/cards.js";
import { actionPad, fmt, GAMES, lastActionText, levelText, potText, seatEditor, stackOf, betOf,
  chipsOf } from "../common/chips.js";
import { connect, loadConfig, parsePayload, topicRoot } from "../common/config.js";
import { requester, showToast } from "../common/console.js";

const $ = (sel) => document.querySelector(sel);
const t = { root: "", state: null, requests: null, editing: null, lastAction: "", padKey: "" };

async function main() {
  const cfg = await loadConfig("tracker");
  t.root = topicRoot(cfg);
  const { client, clientId } = connect(cfg, "tracker", (s) => {
    $("#conn").dataset.state = s;
    $("#conn").textContent = s;
    document.body.dataset.conn = s;
  });
  t.requests = requester(client, clientId, t.root, toast);
  client.on("connect", () => client.subscribe([`${t.root}/state`, `${t.root}/event/#`, `${t.root}/alert`,
    `${t.root}/alert/active`, t.requests.responseTopic], { qos: 1 }));
  client.on("message", onMessage);
  $("#btn-new-hand").addEventListener("click", () => send("new_hand", {}));
  setInterval(renderClock, 1000);
  render();
}

function send(name, fields) {
  t.requests.request(name, fields);
}

function onMessage(topic, bytes, packet) {
  const rel = topic.startsWith(t.root + "/") ? topic.slice(t.root.length + 1) : topic;
  const data = parsePayload(bytes);
  if (data === undefined) return;
  if (rel === "state") {
    if (!data) return;
    t.state = data;
    if (data.alert !== undefined) showAlert(data.alert);
    render();
  } else if (rel === "alert/active") {
    showAlert(data);
  } else if (rel === "alert") {
    if (data) showAlert(data);
  } else if (rel === "event/action" && data) {
    const amount = data.amount != null ? ` ${fmt(data.amount)}` : "";
    t.lastAction = data.text || `Seat ${data.seat} ${data.action}${amount}${data.all_in ? " (all in)" : ""}`;
    render();
  } else if (rel === "event/hand_start") {
    t.lastAction = "";
  } else if (topic === t.requests.responseTopic) {
    t.requests.onResponse(data, packet);
  }
}

function showAlert(a) {
  const box = $("#alert");
  box.hidden = !a;
  if (!a) return;
  box.dataset.reason = a.reason || "";
  box.dataset.severity = a.severity || a.ruling || "";
  $("#alert-title").textContent = `${a.ruling || a.severity || "alert"}${a.seat != null ? ` \u00b7 seat ${a.seat}` : ""}`;
  $("#alert-message").textContent = a.message || "";
  $("#alert-citations").textContent = (a.citations || []).join(" \u00b7 ");
}

function renderClock() {
  const level = t.state && t.state.table ? t.state.table.level : null;
  const { text } = levelText(level);
  $("#level").textContent = text;
  $("#level").hidden = !text;
}

function render() {
  const s = t.state;
  const table = s ? s.table : null;
  const hand = s ? s.hand : null;
  const chips = chipsOf(s);
  const inHand = Boolean(hand && !["done", "dead"].includes(hand.phase));
  $("#game").textContent = table ? `${s.table_id} \u00b7 ${GAMES[(hand || table).game] || (hand || table).game}` : "";
  $("#hand-id").textContent = s && s.hand_id != null ? `hand ${s.hand_id}` : "no hand";
  $("#street").textContent = hand ? hand.street : "";
  renderClock();
  $("#board").replaceChildren(...(hand ? hand.board.map((c) => cardFace(c)) : []));
  $("#pot").textContent = potText(chips);
  $("#pot").dataset.pot = chips ? String(chips.pot) : "";
  $("#last-action").textContent = lastActionText(chips) || t.lastAction;
  $("#btn-new-hand").disabled = inHand;
  const rows = [];
  for (let n = 1; table && n <= table.size; n++) {
    const key = String(n);
    const p = table.players[key];
    const hs = hand ? hand.seats[key] : null;
    const tr = document.createElement("tr");
    tr.dataset.seat = key;
    tr.dataset.empty = String(!p && !hs);
    tr.dataset.toAct = String(Boolean(hand && hand.to_act === n));
    tr.dataset.folded = String(Boolean(hs && (hs.folded || hs.dead)));
    const stack = stackOf(s, n);
    const bet = hand ? betOf(s, n) : 0;
    const cells = [key, p ? p.name : "", stack == null ? "" : fmt(stack), bet ? fmt(bet) : ""];
    cells.forEach((text, i) => {
      const td = document.createElement("td");
      td.textContent = text;
      if (i >= 2) td.className = "num";
      if (i === 2) td.dataset.stack = stack == null ? "" : String(stack);
      if (i === 3) td.dataset.bet = String(bet);
      tr.append(td);
    });
    const td = document.createElement("td");
    const edit = document.createElement("button");
    edit.type = "button";
    edit.className = "edit";
    edit.textContent = p ? "Edit" : "Seat";
    edit.dataset.edit = key;
    edit.addEventListener("click", () => {
      t.editing = n;
      render();
    });
    td.append(edit);
    tr.append(td);
    rows.push(tr);
  }
  $("#seats tbody").replaceChildren(...rows);
  // The right half: the action pad while someone is to act, else the seat being edited.
  const pad = $("#pad");
  // Rebuilt only when what it offers changes (an amount being typed survives a card landing).
  const key = JSON.stringify([s && s.hand_id, inHand && hand.to_act, chips && [chips.to_call, chips.min_raise,
    chips.max_raise, chips.bets, chips.stacks], t.editing, t.editing != null && table.players[String(t.editing)]]);
  if (key === t.padKey) return;
  t.padKey = key;
  if (inHand && hand.to_act != null && t.editing == null) {
    const name = table.players[String(hand.to_act)] ? table.players[String(hand.to_act)].name : "";
    $("#pad-title").textContent = `Seat ${hand.to_act}${name ? ` \u00b7 ${name}` : ""} to act`;
    pad.replaceChildren(actionPad(s, send));
  } else if (t.editing != null) {
    $("#pad-title").textContent = `Seat ${t.editing}`;
    const done = document.createElement("button");
    done.type = "button";
    done.className = "pad-btn";
    done.textContent = "Close";
    done.addEventListener("click", () => {
      t.editing = null;
      render();
    });
    pad.replaceChildren(seatEditor(s, t.editing, (name, fields) => {
      t.editing = null;
      send(name, fields);
      render();
    }), done);
  } else {
    $("#pad-title").textContent = inHand ? (hand.next_seat != null ? `Dealing: seat ${hand.next_seat}` : "") : "Between hands";
    pad.replaceChildren();
  }
}

function toast(text, ok) {
  showToast($("#toast"), text, ok);
}

main();
