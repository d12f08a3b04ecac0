// Broadcast overlay (OBS browser source): the DELAYED feed only.  It subscribes to
// `broadcast/#` and `availability` with the overlay's read-only credential; the broker's
// ACL would drop anything else anyway.  Everything shown comes from the controller:
//   broadcast/state      the table as it was `delay` ago (board, folds, the uncontested winner)
//   broadcast/holecards  the hole cards, delayed (empty payload = cleared at the hand's end)
//   broadcast/equity     win/tie percentages when the controller publishes them (reserved)
// Hand names are read off the cards already on screen (high games only) until the equity
// feed names them; nothing secret is computed here.

import { bestHigh, cardBack, cardFace, compareScores, handName, HIGH_GAMES } from "../common/cards.js";
import { connect, loadConfig, parsePayload, topicRoot } from "../common/config.js";

const $ = (sel) => document.querySelector(sel);
const GAMES = {
  holdem: "Hold'em", omaha: "Omaha", omaha8: "Omaha Hi-Lo", stud: "7-Card Stud", razz: "Razz", stud8: "Stud Hi-Lo",
  lowball_a5: "A-5 Lowball", lowball_27: "2-7 Lowball", draw_high: "5-Card Draw", jacks_or_better: "Jacks or Better",
};

const ov = { root: "", state: null, hole: null, equity: null, handEnd: null };

async function main() {
  const cfg = await loadConfig("overlay");
  ov.root = topicRoot(cfg);
  const { client } = connect(cfg, "overlay", (s) => {
    $("#conn").dataset.state = s;
    document.body.dataset.conn = s;
  });
  client.on("connect", () => client.subscribe([`${ov.root}/broadcast/#`, `${ov.root}/availability`], { qos: 1 }));
  client.on("message", onMessage);
  render();
}

function onMessage(topic, bytes) {
  const rel = topic.startsWith(ov.root + "/") ? topic.slice(ov.root.length + 1) : topic;
  if (rel === "availability") return;
  const data = parsePayload(bytes);
  if (data === undefined) return;
  if (rel === "broadcast/state") {
    if (!data) return;
    if (ov.state && data.hand_id !== ov.state.hand_id) ov.handEnd = null;
    ov.state = data;
  } else if (rel === "broadcast/holecards") {
    if (data) ov.hole = data;
    else if (ov.hole && !handOver()) ov.hole = null; // cleared mid-hand: forget them
    // cleared at the hand's end: keep showing them until the next hand replaces the state
  } else if (rel === "broadcast/equity") {
    ov.equity = data;
  } else if (rel === "broadcast/hand_end" || rel === "broadcast/event/hand_end") {
    ov.handEnd = data; // a delayed hand_end, should the controller publish one
  } else {
    return;
  }
  render();
}

function handOver() {
  const hand = ov.state && ov.state.hand;
  return Boolean(hand && (hand.phase === "done" || hand.phase === "dead"));
}

function render() {
  const s = ov.state;
  const hand = s ? s.hand : null;
  const table = s ? s.table : null;
  document.body.dataset.handId = hand ? String(s.hand_id) : "";
  document.body.dataset.phase = hand ? hand.phase : "";
  $("#label").hidden = !hand;
  $("#game").textContent = hand ? GAMES[hand.game] || hand.game : "";
  $("#street").textContent = hand ? (handOver() ? "showdown" : hand.street) : "";
  $("#street").dataset.street = hand ? hand.street : "";
  $("#hand-no").textContent = hand ? `Hand #${s.hand_id}` : "";
  $("#board").replaceChildren(...(hand ? hand.board.map((c) => cardFace(c)) : []));
  $("#board").dataset.count = String(hand ? hand.board.length : 0);
  const players = [];
  const hole = hand && ov.hole && ov.hole.hand_id === s.hand_id ? ov.hole.seats : {};
  const equity = hand && ov.equity && (ov.equity.hand_id == null || ov.equity.hand_id === s.hand_id)
    ? ov.equity.seats || {} : {};
  const winners = hand ? winnerSeats(hand, hole) : new Map();
  const scores = {};
  if (hand) {
    for (const [key, seat] of Object.entries(hand.seats)) {
      const cards = hole[key] || null;
      const el = document.createElement("div");
      el.className = "player";
      el.dataset.seat = key;
      el.dataset.folded = String(Boolean(seat.folded || seat.dead));
      el.dataset.toAct = String(hand.to_act === Number(key));
      el.dataset.cards = String(cards ? cards.length : seat.cards);
      el.dataset.winner = String(winners.has(key));
      const who = document.createElement("div");
      who.className = "who";
      const no = document.createElement("span");
      no.className = "seat-no";
      no.textContent = key;
      who.append(no, document.createTextNode(playerName(table, key)));
      const holeEl = document.createElement("div");
      holeEl.className = "hole";
      if (cards) holeEl.append(...cards.map((c) => cardFace(c)));
      else for (let i = 0; i < seat.cards; i++) holeEl.append(cardBack());
      const handEl = document.createElement("div");
      handEl.className = "hand";
      const eq = equity[key] || null;
      let name = eq && eq.hand ? eq.hand : "";
      if (!name && cards && HIGH_GAMES.has(hand.game) && !seat.folded) {
        scores[key] = bestHigh(hand.game, cards, hand.game === "holdem" || hand.game === "omaha" ? hand.board : []);
        name = handName(scores[key]);
      }
      handEl.textContent = name;
      const odds = document.createElement("div");
      odds.className = "odds";
      if (eq && eq.win != null && !seat.folded) {
        odds.textContent = `${pct(eq.win)}%` + (eq.tie ? ` \u00b7 tie ${pct(eq.tie)}%` : "");
      }
      el.append(who, holeEl, handEl, odds);
      players.push(el);
    }
  }
  $("#players").replaceChildren(...players);
  const banner = $("#winner");
  banner.hidden = winners.size === 0;
  banner.textContent = winners.size
    ? [...winners.entries()].map(([k, what]) => `${playerName(table, k) || `Seat ${k}`} wins${what ? ` \u2013 ${what}` : ""}`)
      .join(" \u00b7 ")
    : "";
}

function pct(x) {
  const v = Number(x) <= 1 ? Number(x) * 100 : Number(x);
  return v.toFixed(v >= 10 ? 0 : 1);
}

function playerName(table, key) {
  const p = table && table.players[key];
  return p ? p.name : `Seat ${key}`;
}

// seat key -> words ("" when none): who took the pot, once the hand is over.
function winnerSeats(hand, hole) {
  const out = new Map();
  if (!["done", "dead"].includes(hand.phase)) return out;
  const end = ov.handEnd || (ov.state && ov.state.hand_end) || null;
  if (end && Array.isArray(end.winners) && end.winners.length) {
    for (const w of end.winners) out.set(String(w.seat), w.hand || "");
    return out;
  }
  if (hand.winner != null) {
    out.set(String(hand.winner), "");
    return out;
  }
  if (hand.phase !== "done" || !HIGH_GAMES.has(hand.game)) return out;
  // A showdown in a high game: the best hand among the cards on screen (cards speak).
  const live = Object.entries(hand.seats).filter(([k, seat]) => !seat.folded && !seat.dead && hole[k]);
  if (live.length < 2 || live.length !== Object.values(hand.seats).filter((x) => !x.folded && !x.dead).length) return out;
  const board = hand.game === "holdem" || hand.game === "omaha" ? hand.board : [];
  let best = null;
  for (const [k] of live) {
    const score = bestHigh(hand.game, hole[k], board);
    if (!score) return new Map();
    const cmp = best ? compareScores(score, best.score) : 1;
    if (cmp > 0) best = { score, seats: [k] };
    else if (cmp === 0) best.seats.push(k);
  }
  for (const k of best.seats) out.set(k, handName(best.score));
  return out;
}

main();
