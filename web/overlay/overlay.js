// Broadcast overlay (OBS browser source): the DELAYED feed only.  It subscribes to
// `broadcast/#` and `availability` with the overlay's read-only credential; the broker's
// ACL would drop anything else anyway.  Everything shown comes from the controller:
//   broadcast/state      the table as it was `delay` ago (board, folds, chips, level, who acts)
//   broadcast/holecards  the hole cards, delayed (empty payload = cleared at the hand's end)
//   broadcast/equity     win/tie/equity per seat and the hand names, computed by the server
//   broadcast/hand_end   winners, their hands and payouts
// No hand is evaluated here: the names are the server's.
//
// Parts can be hidden from the URL or the overlay's config.json (docs/web.md):
//   ?hide=odds,stacks    or    ?show=board,players,pot     (parts: PARTS below)

import { cardBack, cardFace } from "../common/cards.js";
import { fmt, GAMES, lastActionText, levelText } from "../common/chips.js";
import { connect, loadConfig, parsePayload, topicRoot } from "../common/config.js";

const $ = (sel) => document.querySelector(sel);
export const PARTS = ["label", "clock", "board", "pot", "action", "players", "cards", "hands", "odds", "stacks", "bets",
  "winner"];

const ov = { root: "", state: null, hole: null, equity: null, handEnd: null };

function applyParts(cfg) {
  const list = (v) => (Array.isArray(v) ? v : String(v || "").split(",")).map((x) => x.trim()).filter(Boolean);
  const show = list(cfg.show);
  const hide = new Set(list(cfg.hide));
  for (const part of PARTS) {
    const hidden = hide.has(part) || (show.length > 0 && !show.includes(part));
    document.body.classList.toggle(`hide-${part}`, hidden);
  }
}

async function main() {
  const cfg = await loadConfig("overlay");
  applyParts(cfg);
  ov.root = topicRoot(cfg);
  const { client } = connect(cfg, "overlay", (s) => {
    $("#conn").dataset.state = s;
    document.body.dataset.conn = s;
  });
  client.on("connect", () => client.subscribe([`${ov.root}/broadcast/#`, `${ov.root}/availability`], { qos: 1 }));
  client.on("message", onMessage);
  setInterval(renderClock, 1000);
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
    else if (ov.hole && !handOver() && !(ov.handEnd && ov.handEnd.hand_id === ov.hole.hand_id)) ov.hole = null;
    // cleared at the hand's end: keep showing them until the next hand replaces the state
  } else if (rel === "broadcast/equity") {
    ov.equity = data;
  } else if (rel === "broadcast/hand_end") {
    ov.handEnd = data;
  } else {
    return;
  }
  render();
}

function handOver() {
  const hand = ov.state && ov.state.hand;
  return Boolean(hand && (hand.phase === "done" || hand.phase === "dead"));
}

function pct(x) {
  const v = Number(x) * 100;
  return v.toFixed(v >= 10 || v === 0 ? 0 : 1);
}

// The odds line: the share of the pot (equity) first; high-low games say how it splits.
function oddsText(eq) {
  if (!eq || eq.equity == null) return { main: "", sub: "" };
  if (eq.high != null || eq.low != null) {
    return { main: `${pct(eq.equity)}%`, sub: `hi ${pct(eq.high || 0)}% \u00b7 lo ${pct(eq.low || 0)}%` };
  }
  return { main: `${pct(eq.equity)}%`, sub: eq.tie > 0 ? `win ${pct(eq.win)}% \u00b7 split ${pct(eq.tie)}%` : "" };
}

function renderClock() {
  const level = ov.state && ov.state.table ? ov.state.table.level : null;
  const { text } = levelText(level);
  $("#clock").textContent = text;
  $("#clock").hidden = !text;
}

// Card size so that every player's box fits one row of 1860 px, whatever the count and game.
function cardHeight(players, cardsEach) {
  const gap = 14;
  const per = (1860 - gap * Math.max(0, players - 1)) / Math.max(1, players) - 28;
  const fit = (per - 5 * Math.max(0, cardsEach - 1)) / Math.max(1, cardsEach) / 0.7;
  return Math.max(34, Math.min(96, Math.floor(fit)));
}

function render() {
  const s = ov.state;
  const hand = s ? s.hand : null;
  const table = s ? s.table : null;
  const chips = hand ? hand.chips || null : null;
  document.body.dataset.handId = hand ? String(s.hand_id) : "";
  document.body.dataset.phase = hand ? hand.phase : "";
  $("#label").hidden = !hand;
  $("#game").textContent = hand ? GAMES[hand.game] || hand.game : "";
  $("#street").textContent = hand ? (handOver() ? "showdown" : hand.street) : "";
  $("#street").dataset.street = hand ? hand.street : "";
  $("#hand-no").textContent = hand ? `Hand #${s.hand_id}` : "";
  renderClock();
  $("#board").replaceChildren(...(hand ? hand.board.map((c) => cardFace(c)) : []));
  $("#board").dataset.count = String(hand ? hand.board.length : 0);
  const pot = $("#pot");
  pot.hidden = !chips;
  pot.dataset.pot = chips ? String(chips.pot) : "";
  pot.replaceChildren();
  if (chips) {
    const main = document.createElement("div");
    main.className = "main";
    main.textContent = `Pot ${fmt(chips.pot)}`;
    pot.append(main);
    (chips.pots || []).slice(1).forEach((p, i) => {
      const side = document.createElement("div");
      side.className = "side";
      side.dataset.amount = String(p.amount);
      side.textContent = `Side pot ${i + 1}: ${fmt(p.amount)}`;
      pot.append(side);
    });
  }
  const last = lastActionText(chips);
  $("#last-action").hidden = !last || handOver();
  $("#last-action").textContent = last;

  const players = [];
  const hole = hand && ov.hole && ov.hole.hand_id === s.hand_id ? ov.hole.seats : {};
  const equity = hand && ov.equity && ov.equity.hand_id === s.hand_id ? ov.equity.seats || {} : {};
  const current = hand && ov.equity && ov.equity.hand_id === s.hand_id;
  document.body.dataset.equitySeq = current ? String(ov.equity.seq) : "";
  document.body.dataset.equityMethod = current ? ov.equity.method : "";
  const winners = hand ? winnerSeats(hand) : new Map();
  const seatKeys = hand ? Object.keys(hand.seats) : [];
  const most = Math.max(2, ...seatKeys.map((k) => (hole[k] ? hole[k].length : hand.seats[k].cards)));
  $("#players").style.setProperty("--hole-h", `${cardHeight(seatKeys.length, most)}px`);
  for (const key of seatKeys) {
    const seat = hand.seats[key];
    const cards = hole[key] || null;
    const out = Boolean(seat.folded || seat.dead);
    const el = document.createElement("div");
    el.className = "player";
    el.dataset.seat = key;
    el.dataset.folded = String(out);
    el.dataset.toAct = String(hand.to_act === Number(key));
    el.dataset.cards = String(cards ? cards.length : seat.cards);
    el.dataset.winner = String(winners.has(key));
    el.dataset.allIn = String(Boolean(seat.all_in));
    const who = document.createElement("div");
    who.className = "who";
    const no = document.createElement("span");
    no.className = "seat-no";
    no.textContent = key;
    who.append(no, document.createTextNode(playerName(table, key)));
    const money = document.createElement("div");
    money.className = "money";
    const stack = chips && chips.stacks ? chips.stacks[key] : table && table.players[key] ? table.players[key].stack : null;
    const stackEl = document.createElement("span");
    stackEl.className = "stack";
    stackEl.dataset.stack = stack == null ? "" : String(stack);
    stackEl.textContent = stack == null ? "" : seat.all_in && stack === 0 ? "ALL IN" : fmt(stack);
    const bet = chips && chips.bets ? chips.bets[key] || 0 : 0;
    const betEl = document.createElement("span");
    betEl.className = "bet";
    betEl.dataset.bet = String(bet);
    betEl.textContent = bet ? fmt(bet) : "";
    money.append(stackEl, betEl);
    money.hidden = !stackEl.textContent && !betEl.textContent;
    const holeEl = document.createElement("div");
    holeEl.className = "hole";
    if (cards) holeEl.append(...cards.map((c) => cardFace(c)));
    else for (let i = 0; i < seat.cards; i++) holeEl.append(cardBack());
    const eq = out ? null : equity[key] || null;
    const handEl = document.createElement("div");
    handEl.className = "hand";
    const names = eq ? [eq.hand, eq.low_hand].filter(Boolean) : [];
    handEl.textContent = names.join(" / ");
    const odds = document.createElement("div");
    odds.className = "odds";
    const o = oddsText(eq);
    odds.textContent = o.main;
    const sub = document.createElement("div");
    sub.className = "odds-sub";
    sub.textContent = o.sub;
    if (eq) {
      el.dataset.equity = eq.equity == null ? "" : String(eq.equity);
      el.dataset.win = eq.win == null ? "" : String(eq.win);
      el.dataset.tie = eq.tie == null ? "" : String(eq.tie);
    }
    el.append(who, money, holeEl, handEl, odds, sub);
    players.push(el);
  }
  $("#players").replaceChildren(...players);
  const banner = $("#winner");
  banner.hidden = winners.size === 0;
  banner.replaceChildren(...[...winners.entries()].map(([k, w]) => {
    const line = document.createElement("div");
    line.dataset.seat = k;
    line.dataset.payout = w.payout == null ? "" : String(w.payout);
    const won = w.payout != null ? ` ${fmt(w.payout)}` : "";
    line.textContent = `${playerName(table, k)} wins${won}${w.hand ? ` \u2013 ${w.hand}` : ""}`;
    return line;
  }));
}

function playerName(table, key) {
  const p = table && table.players[key];
  return p && p.name ? p.name : `Seat ${key}`;
}

// seat key -> {hand, payout}: who took what, once the hand is over (the server's hand_end).
function winnerSeats(hand) {
  const out = new Map();
  if (!["done", "dead"].includes(hand.phase)) return out;
  const end = ov.handEnd && ov.state && ov.handEnd.hand_id === ov.state.hand_id ? ov.handEnd : null;
  const payouts = end && end.payouts ? end.payouts : {};
  if (end && Array.isArray(end.winners) && end.winners.length) {
    for (const w of end.winners) {
      const k = String(w.seat);
      const prev = out.get(k);
      const words = w.hand ? (w.part && w.part !== "pot" && w.part !== "high" ? `${w.hand} (${w.part})` : w.hand) : "";
      out.set(k, { hand: prev && prev.hand ? [prev.hand, words].filter(Boolean).join(", ") : words,
        payout: payouts[k] ?? null });
    }
    return out;
  }
  if (hand.winner != null) out.set(String(hand.winner), { hand: "", payout: payouts[String(hand.winner)] ?? null });
  return out;
}

main();
