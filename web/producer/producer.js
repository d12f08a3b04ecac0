// The producer's control page: shows and hides each graphic of the broadcast overlay live, and
// changes the broadcast delay.  Its login (`producer`, systemd/mosquitto/acl) may write
// broadcast/graphics (retained) and its own request producer/broadcast_delay, and read those back
// with the delay in force (broadcast/delay) and its answers: never a card, live or delayed.  The overlay applies the newest message at once
// (web/overlay/overlay.js); a part the producer has not touched keeps what the overlay's URL or
// config.json says (the defaults below are the overlay's own).

import { connect, loadConfig, parsePayload, topicRoot } from "../common/config.js";

// The overlay's parts (web/overlay/overlay.js PARTS), as a producer names them.
export const PARTS = [
  ["label", "Game and street"], ["clock", "Level clock"], ["board", "Board"], ["pot", "Pot"],
  ["action", "Last action"], ["players", "Player boxes"], ["cards", "Hole cards"], ["hands", "Hand names"],
  ["odds", "Odds"], ["outs", "Outs"], ["stacks", "Stacks"], ["bets", "Bets"], ["winner", "Winner banner"],
  ["leaderboard", "Chip counts"], ["stats", "Player statistics"], ["photos", "Photos"], ["flags", "Flags"],
  ["logo", "Logo"],
];
const OFF_BY_DEFAULT = ["leaderboard", "stats"];

const $ = (sel) => document.querySelector(sel);
const ctl = { client: null, topic: "", parts: {}, root: "", pending: null };

function current(part) {
  return part in ctl.parts ? ctl.parts[part] : !OFF_BY_DEFAULT.includes(part);
}

function render() {
  $("#parts").replaceChildren(...PARTS.map(([part, label]) => {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.part = part;
    const on = current(part);
    b.setAttribute("aria-pressed", String(on));
    const state = document.createElement("span");
    state.className = "state";
    state.textContent = on ? "ON AIR" : "off";
    b.append(document.createTextNode(label), state);
    b.addEventListener("click", () => toggle(part));
    return b;
  }));
}

function toggle(part) {
  if (!ctl.client || !ctl.client.connected) return;
  const parts = {};
  for (const [p] of PARTS) parts[p] = current(p);
  parts[part] = !parts[part];
  const msg = { schema: 1, ts: Math.round(Date.now()) / 1000, parts };
  ctl.client.publish(ctl.topic, JSON.stringify(msg), { qos: 1, retain: true });
}

// The delay: "hand_end" or seconds, as a producer reads it.
function delayText(delay) {
  return delay === "hand_end" || delay === "end_of_hand" ? "until the hand ends" : `${delay} s`;
}

// producer/broadcast_delay, answered on response/producer/broadcast_delay (matched by transaction).
function setDelay(delay) {
  if (!ctl.client || !ctl.client.connected) return;
  const transaction = `producer-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`;
  ctl.pending = { transaction, delay };
  $("#delay-answer").textContent = `Asking for ${delayText(delay)}...`;
  delete $("#delay-answer").dataset.ok;
  ctl.client.publish(`${ctl.root}/producer/broadcast_delay`, JSON.stringify({ delay, transaction }), { qos: 1 });
}

function onDelay(data) {
  if (!data || data.delay === undefined) return;
  $("#delay-now").textContent = delayText(data.delay);
  document.body.dataset.delay = String(data.delay);
  const range = data.min_delay != null && data.max_delay != null ? `(${data.min_delay} to ${data.max_delay} s allowed)` : "";
  $("#delay-range").textContent = range;
  if (data.min_delay != null) $("#delay-seconds").min = String(data.min_delay);
  if (data.max_delay != null) $("#delay-seconds").max = String(data.max_delay);
}

function onAnswer(data) {
  if (!data || !ctl.pending || data.transaction !== ctl.pending.transaction) return;
  const el = $("#delay-answer");
  el.dataset.ok = String(!!data.ok);
  el.textContent = data.ok ? `Delay set: ${delayText(ctl.pending.delay)}.` : `Refused: ${data.error}`;
  ctl.pending = null;
}

function wireDelay() {
  $("#delay-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("#delay-seconds").value.trim();
    // Sent as typed: the table checks the value and says what is wrong with it.
    setDelay(text !== "" && Number.isFinite(Number(text)) ? Number(text) : text);
  });
  $("#delay-hand-end").addEventListener("click", () => setDelay("end_of_hand"));
}

async function main() {
  const cfg = await loadConfig("producer");
  ctl.root = topicRoot(cfg);
  ctl.topic = `${ctl.root}/broadcast/graphics`;
  const delayTopic = `${ctl.root}/broadcast/delay`;
  const answerTopic = `${ctl.root}/response/producer/broadcast_delay`;
  const { client } = connect(cfg, "producer", (s) => {
    $("#conn").dataset.state = s;
    $("#conn").textContent = s;
    document.body.dataset.conn = s;
  });
  ctl.client = client;
  client.on("connect", () => client.subscribe([ctl.topic, delayTopic, answerTopic], { qos: 1 }));
  client.on("message", (topic, bytes) => {
    if (topic === delayTopic) return onDelay(parsePayload(bytes));
    if (topic === answerTopic) return onAnswer(parsePayload(bytes));
    if (topic !== ctl.topic) return;
    const data = parsePayload(bytes);
    const parts = data && data.parts && typeof data.parts === "object" ? data.parts : {};
    ctl.parts = Object.fromEntries(Object.entries(parts).filter(([, v]) => typeof v === "boolean"));
    document.body.dataset.graphicsTs = data && data.ts != null ? String(data.ts) : "";
    $("#last").textContent = data && data.ts ? `Last change ${new Date(data.ts * 1000).toLocaleTimeString()}` : "";
    render();
  });
  render();
  wireDelay();
}

main();
