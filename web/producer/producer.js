// The producer's control page: shows and hides each graphic of the broadcast overlay live.
// Its login (`producer`, systemd/mosquitto/acl) may write one topic, broadcast/graphics (retained),
// and read it back: never a card, live or delayed.  The overlay applies the newest message at once
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
const ctl = { client: null, topic: "", parts: {} };

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

async function main() {
  const cfg = await loadConfig("producer");
  ctl.topic = `${topicRoot(cfg)}/broadcast/graphics`;
  const { client } = connect(cfg, "producer", (s) => {
    $("#conn").dataset.state = s;
    $("#conn").textContent = s;
    document.body.dataset.conn = s;
  });
  ctl.client = client;
  client.on("connect", () => client.subscribe(ctl.topic, { qos: 1 }));
  client.on("message", (topic, bytes) => {
    if (topic !== ctl.topic) return;
    const data = parsePayload(bytes);
    const parts = data && data.parts && typeof data.parts === "object" ? data.parts : {};
    ctl.parts = Object.fromEntries(Object.entries(parts).filter(([, v]) => typeof v === "boolean"));
    document.body.dataset.graphicsTs = data && data.ts != null ? String(data.ts) : "";
    $("#last").textContent = data && data.ts ? `Last change ${new Date(data.ts * 1000).toLocaleTimeString()}` : "";
    render();
  });
  render();
}

main();
