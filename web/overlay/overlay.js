// Broadcast overlay (OBS browser source): the DELAYED feed only.  It subscribes to
// `broadcast/#` and `availability` with the overlay's read-only credential; the broker's
// ACL would drop anything else anyway.  Everything shown comes from the controller:
//   broadcast/state      the table as it was `delay` ago (board, folds, chips, level, who acts)
//   broadcast/holecards  the hole cards, delayed (empty payload = cleared at the hand's end)
//   broadcast/equity     win/tie/equity per seat and the hand names, computed by the server
//   broadcast/hand_end   winners, their hands and what each won
//   broadcast/sealed     the hole cards at once, sealed (AES-256-GCM, docs/sealed-broadcast.md);
//   broadcast/key        each snapshot's key, after the delay: the page opens it with WebCrypto
//                        (a secure context: https, or the page on localhost; elsewhere
//                        crypto.subtle is absent and the delayed broadcast/holecards serve)
// No hand is evaluated here: the names are the server's.
//
// Parts can be hidden from the URL or the overlay's config.json (docs/web.md):
//   ?hide=odds,stacks    or    ?show=board,players,pot     (parts: PARTS below)
//   ?add=leaderboard     turns on a part that is off by default (OPT_IN)
// A theme (colours, font, card faces, a logo) comes from one file, themes/<name>.json
// (?theme=emerald, or "theme" in config.json: a name or the theme itself).
// ?room=1 is the "no cards" output for screens in the room: it never subscribes to the hole
// cards or the equities, shows backs, and only the cards tabled at a showdown (hand_end.shown).

import { cardBack, cardFace } from "../common/cards.js";
import { fmt, GAMES, lastActionText, levelText } from "../common/chips.js";
import { connect, loadConfig, parsePayload, topicRoot } from "../common/config.js";
import { fitAll } from "../common/fit.js";
import { decoratePlayer, graphicsParts } from "./extras.js";

const $ = (sel) => document.querySelector(sel);
export const PARTS = ["label", "clock", "board", "pot", "action", "players", "cards", "hands", "odds", "stacks", "bets",
  "winner", "logo", "leaderboard", "outs", "stats", "photos", "flags"];
const OPT_IN = ["leaderboard", "stats"];

// names: the players' names as the hand saw them (a winner who stands up before the next hand
// keeps his name on the banner until the next hand replaces it).
const ov = { root: "", state: null, hole: null, equity: null, handEnd: null, names: { hand_id: null, seats: {} },
  room: false, received: new Set(), cfg: {}, graphics: {}, stats: null, people: {}, peopleBase: "" };

// The producer's live choice (broadcast/graphics) wins over the URL and config.json.
function applyParts(cfg) {
  const list = (v) => (Array.isArray(v) ? v : String(v || "").split(",")).map((x) => x.trim()).filter(Boolean);
  const show = list(cfg.show);
  const hide = new Set(list(cfg.hide));
  const add = list(cfg.add);
  for (const part of PARTS) {
    const off = OPT_IN.includes(part) && !add.includes(part) && !show.includes(part);
    const hidden = off || hide.has(part) || (show.length > 0 && !show.includes(part));
    const live = ov.graphics[part];
    document.body.classList.toggle(`hide-${part}`, live === undefined ? hidden : !live);
  }
}

// One file makes the overlay its producer's own: colours, font, corner radius, card faces, logo.
// Every key is optional (the default theme's value stays); unknown keys are ignored.
async function applyTheme(cfg) {
  let theme = cfg.theme || null;
  let base = "themes/";
  if (typeof theme === "string") {
    if (!/^[a-z0-9_-]+$/i.test(theme)) return;
    try {
      const r = await fetch(`themes/${theme}.json`, { cache: "no-store" });
      theme = r.ok ? await r.json() : null;
    } catch (_e) {
      theme = null;
    }
  } else {
    base = "";
  }
  if (!theme || typeof theme !== "object") return;
  const root = document.documentElement.style;
  for (const [k, v] of Object.entries(theme.colors || {})) root.setProperty(`--ov-${k}`, String(v));
  for (const [k, v] of Object.entries(theme.cards || {})) root.setProperty(`--card-${k}`, String(v));
  if (theme.font) root.setProperty("--ov-font", String(theme.font));
  if (theme.radius != null) root.setProperty("--ov-radius", `${Number(theme.radius)}px`);
  document.body.dataset.theme = theme.name || "";
  if (theme.players && typeof theme.players === "object") {
    ov.people = { ...theme.players, ...ov.people };
    ov.peopleBase = base;
  }
  const logo = $("#logo");
  if (theme.logo) {
    logo.src = /^(https?:|data:|\/)/.test(theme.logo) ? theme.logo : base + theme.logo;
    logo.hidden = false;
  }
}

async function main() {
  const cfg = await loadConfig("overlay");
  ov.cfg = cfg;
  if (cfg.players && typeof cfg.players === "object") ov.people = { ...cfg.players };
  applyParts(cfg);
  await applyTheme(cfg);
  ov.root = topicRoot(cfg);
  const { client } = connect(cfg, "overlay", (s) => {
    $("#conn").dataset.state = s;
    document.body.dataset.conn = s;
  });
  ov.room = ["1", "true", "yes"].includes(String(cfg.room || "").toLowerCase());
  document.body.dataset.room = String(ov.room);
  const topics = ov.room
    ? ["state", "hand_end", "stats", "graphics"].map((n) => `${ov.root}/broadcast/${n}`).concat(`${ov.root}/availability`)
    : [`${ov.root}/broadcast/#`, `${ov.root}/availability`];
  document.body.dataset.subscribed = topics.join(" ");
  client.on("connect", () => client.subscribe(topics, { qos: 1 }));
  client.on("message", onMessage);
  setInterval(renderClock, 1000);
  render();
}

function onMessage(topic, bytes) {
  const rel = topic.startsWith(ov.root + "/") ? topic.slice(ov.root.length + 1) : topic;
  ov.received.add(rel);
  document.body.dataset.received = [...ov.received].sort().join(" ");
  if (ov.room && (rel === "broadcast/holecards" || rel === "broadcast/equity" || rel === "broadcast/sealed"
    || rel === "broadcast/key")) return; // never, in the room
  if (rel === "availability") return;
  const data = parsePayload(bytes);
  if (data === undefined) return;
  if (rel === "broadcast/state") {
    if (!data) return;
    if (ov.state && data.hand_id !== ov.state.hand_id) ov.handEnd = null;
    ov.state = data;
    rememberNames(data);
  } else if (rel === "broadcast/sealed" || rel === "broadcast/key") {
    if (data) sealedArrived(rel === "broadcast/key" ? "keys" : "sealed", data);
    return;
  } else if (rel === "broadcast/holecards") {
    if (data) showHole(data);
    else if (ov.hole && !handOver() && !(ov.handEnd && ov.handEnd.hand_id === ov.hole.hand_id)) ov.hole = null;
    // cleared at the hand's end: keep showing them until the next hand replaces the state
  } else if (rel === "broadcast/equity") {
    ov.equity = data;
  } else if (rel === "broadcast/hand_end") {
    ov.handEnd = data;
  } else if (rel === "broadcast/stats") {
    ov.stats = data;
  } else if (rel === "broadcast/graphics") {
    ov.graphics = graphicsParts(data, PARTS);
    document.body.dataset.graphicsTs = data && data.ts != null ? String(data.ts) : "";
    applyParts(ov.cfg);
  } else {
    return;
  }
  render();
}

// Sealed snapshots wait here for their keys (by deal and seq); a key opens its snapshot, and the
// newest snapshot of the hand is what the overlay shows.  A snapshot that does not open (altered,
// or the wrong key) is counted and never shown.
const seal = { sealed: new Map(), keys: new Map(), opened: 0, bad: 0 };
const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

function showHole(data) {
  if (!ov.hole || ov.hole.hand_id !== data.hand_id || (data.seq || 0) >= (ov.hole.seq || 0)) ov.hole = data;
}

function sealedArrived(kind, data) {
  const id = `${data.deal}/${data.seq}`;
  seal[kind].set(id, data);
  if (seal.sealed.size > 200) seal.sealed.delete(seal.sealed.keys().next().value); // a reader that never gets keys
  if (seal.keys.size > 200) seal.keys.delete(seal.keys.keys().next().value);
  document.body.dataset.sealedWaiting = String(seal.sealed.size);
  if (seal.sealed.has(id) && seal.keys.has(id)) openSealed(id);
}

async function openSealed(id) {
  const box = seal.sealed.get(id);
  const key = seal.keys.get(id);
  seal.sealed.delete(id);
  seal.keys.delete(id);
  const table = ov.root.split("/").pop();
  try {
    const k = await crypto.subtle.importKey("raw", unb64(key.key), "AES-GCM", false, ["decrypt"]);
    const aad = new TextEncoder().encode(`${table}/${box.deal}/${box.seq}`);
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: unb64(box.nonce), additionalData: aad }, k,
      unb64(box.ciphertext));
    const snap = JSON.parse(new TextDecoder().decode(plain));
    seal.opened += 1;
    showHole({ hand_id: snap.hand_id, seq: snap.seq, seats: snap.seats });
    render();
  } catch (_e) {
    seal.bad += 1;
  }
  document.body.dataset.sealedOpened = String(seal.opened);
  document.body.dataset.sealedBad = String(seal.bad);
  document.body.dataset.sealedWaiting = String(seal.sealed.size);
}

function handOver() {
  const hand = ov.state && ov.state.hand;
  return Boolean(hand && (hand.phase === "done" || hand.phase === "dead"));
}

function rememberNames(state) {
  if (state.hand_id !== ov.names.hand_id) ov.names = { hand_id: state.hand_id, seats: {} };
  const players = state.table && state.table.players ? state.table.players : {};
  for (const [k, p] of Object.entries(players)) if (p && p.name) ov.names.seats[k] = p.name;
}

// Hands still in it (not folded, not dead).
function liveSeats(hand) {
  return Object.entries(hand.seats).filter(([, v]) => !v.folded && !v.dead).map(([k]) => k);
}

// What the label says of a finished hand: a misdeal (or void) is no showdown, nor is a pot
// everybody else folded to.
function endWord(hand) {
  if (hand.phase === "dead") {
    const end = ov.handEnd && ov.handEnd.hand_id === ov.state.hand_id ? ov.handEnd : null;
    return end && end.result === "void" ? "hand void" : "misdeal";
  }
  return liveSeats(hand).length >= 2 ? "showdown" : "hand over";
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

// Every player's box in one row of the given width, whatever the count and the game: each box
// gets an equal share (at most 300 px) and its cards are sized to fit inside it.  Below the
// smallest readable card the cards of one hand overlap each other a little (never the next
// player's).  CHROME is a box's padding and border (overlay.css .player).
const CARD_GAP = 5;
const CHROME = 2 * 10 + 2 * 3;
const MIN_CARD_H = 34;

export function playerLayout(width, players, cardsEach) {
  const n = Math.max(1, players);
  const gap = n >= 9 ? 8 : 14;
  const box = Math.min(300, Math.floor((width - gap * (n - 1)) / n));
  const inner = box - CHROME;
  const c = Math.max(1, cardsEach);
  const fit = Math.floor((inner - CARD_GAP * (c - 1)) / c / 0.7);
  const h = Math.max(MIN_CARD_H, Math.min(96, fit));
  let cardGap = CARD_GAP;
  if (fit < MIN_CARD_H && c > 1) cardGap = Math.floor((inner - c * h * 0.7) / (c - 1));
  return { gap, box, h, cardGap };
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
  $("#street").textContent = hand ? (handOver() ? endWord(hand) : hand.street) : "";
  $("#street").dataset.street = hand ? hand.street : "";
  $("#hand-no").textContent = hand ? `Hand #${s.hand_id}` : "";
  renderClock();
  $("#board").replaceChildren(...(hand ? hand.board.map((c) => cardFace(c)) : []));
  $("#board").dataset.count = String(hand ? hand.board.length : 0);
  const pot = $("#pot");
  pot.hidden = !chips || hand.phase === "dead";
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
  const tabled = hand && ov.handEnd && ov.handEnd.hand_id === s.hand_id && ov.handEnd.shown ? ov.handEnd.shown : {};
  const hole = ov.room ? tabled : hand && ov.hole && ov.hole.hand_id === s.hand_id ? ov.hole.seats : {};
  const equity = hand && ov.equity && ov.equity.hand_id === s.hand_id ? ov.equity.seats || {} : {};
  const current = hand && ov.equity && ov.equity.hand_id === s.hand_id;
  document.body.dataset.equitySeq = current ? String(ov.equity.seq) : "";
  document.body.dataset.equityMethod = current ? ov.equity.method : "";
  const winners = hand ? winnerSeats(hand) : new Map();
  const seatKeys = hand ? Object.keys(hand.seats) : [];
  const most = Math.max(2, ...seatKeys.map((k) => (hole[k] ? hole[k].length : hand.seats[k].cards)));
  const row = $("#players");
  const fit = playerLayout(row.clientWidth || 1860, seatKeys.length, most);
  row.style.setProperty("--hole-h", `${fit.h}px`);
  row.style.setProperty("--hole-gap", `${fit.cardGap}px`);
  row.style.setProperty("--player-w", `${fit.box}px`);
  row.style.setProperty("--player-gap", `${fit.gap}px`);
  // Odds only while they mean something: two hands or more still in it (a pot won without a
  // showdown keeps no stale percentage), never after a misdeal.
  const oddsOn = hand && hand.phase !== "dead" && liveSeats(hand).length >= 2;
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
    const eq = out || !oddsOn ? null : equity[key] || null;
    const handEl = document.createElement("div");
    handEl.className = "hand";
    for (const name of eq ? [eq.hand, eq.low_hand].filter(Boolean) : []) {
      const line = document.createElement("div");
      line.className = "hand-name";
      line.textContent = name;
      handEl.append(line);
    }
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
    decoratePlayer(el, { name: table && table.players[key] ? table.players[key].name : null, people: ov.people,
      base: ov.peopleBase, eq, stats: ov.stats });
    players.push(el);
  }
  row.replaceChildren(...players);
  renderTableSide(hand, table, row);
  renderLeaderboard(table);
  fitAll(row, ".who, .hand-name", { min: 11, wrapAt: 16 });
  fitAll(row, ".money, .odds, .odds-sub", { min: 11 });
  fitAll(row, ".outs, .stats", { min: 11, wrapAt: 13 });
  const banner = $("#winner");
  banner.hidden = winners.size === 0;
  banner.replaceChildren(...[...winners.entries()].map(([k, w]) => {
    const line = document.createElement("div");
    line.dataset.seat = k;
    line.dataset.won = w.won == null ? "" : String(w.won);
    const won = w.won != null ? ` ${fmt(w.won)}` : "";
    line.textContent = `${playerName(table, k)} wins${won}${w.hand ? ` \u2013 ${w.hand}` : ""}`;
    return line;
  }));
  stackCentre(row);
}

// The table side of the showdown and of a mixed game, from the delayed state: the seat that
// tables first (TDA 15-A; RRoP s3 Showdown 7) or "all hands face up" at an all-in (TDA 14), as the
// engine derived it (hand.to_show: the display reads the same field), and the rotation's current
// and next game (table.rotation).
export function showOrderWords(toShow, name) {
  if (toShow === "all") return "All hands face up";
  return toShow == null ? "" : `${name} shows first`;
}

function renderTableSide(hand, table, row) {
  const toShow = hand && hand.phase !== "dead" ? hand.to_show ?? null : null;
  const show = $("#show-order");
  show.dataset.toShow = toShow == null ? "" : String(toShow);
  show.textContent = showOrderWords(toShow, toShow == null || toShow === "all" ? "" : playerName(table, String(toShow)));
  show.hidden = toShow == null;
  for (const el of row.children) {
    const first = typeof toShow === "number" && el.dataset.seat === String(toShow);
    el.dataset.showFirst = String(first);
    if (first) {
      const tag = document.createElement("div");
      tag.className = "shows-first";
      tag.textContent = "shows first";
      el.querySelector(".who").after(tag);
    }
  }
  const rot = table ? table.rotation || null : null;
  const box = $("#rotation");
  box.hidden = !rot || !rot.current;
  box.dataset.current = rot && rot.current ? rot.current.game : "";
  box.dataset.next = rot && rot.next ? rot.next.game : "";
  const title = (g) => (g ? g.title || GAMES[g.game] || g.game : "");
  const when = rot && rot.deals_left != null ? ` in ${rot.deals_left} hand${rot.deals_left === 1 ? "" : "s"}`
    : rot && rot.per_level ? " next level" : "";
  box.textContent = rot && rot.current
    ? `${rot.name ? `${rot.name.toUpperCase()} \u00b7 ` : ""}${title(rot.current)} \u00b7 next: ${title(rot.next)}${when}`
    : "";
}

// Chip counts, biggest first, from the delayed state's players (their chips behind during a hand).
const LEADERS = 10;

function renderLeaderboard(table) {
  const box = $("#leaderboard");
  const rows = table ? Object.entries(table.players || {})
    .filter(([, p]) => p && p.stack != null)
    .sort(([ka, a], [kb, b]) => b.stack - a.stack || Number(ka) - Number(kb))
    .slice(0, LEADERS) : [];
  box.hidden = rows.length === 0;
  box.querySelector("ol").replaceChildren(...rows.map(([k, p], i) => {
    const li = document.createElement("li");
    li.dataset.seat = k;
    li.dataset.stack = String(p.stack);
    const rank = document.createElement("span");
    rank.className = "rank";
    rank.textContent = String(i + 1);
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = p.name || `Seat ${k}`;
    const chips = document.createElement("span");
    chips.className = "chips";
    chips.textContent = fmt(p.stack);
    li.append(rank, name, chips);
    return li;
  }));
  fitAll(box, ".name", { min: 12 });
}

// The centre column from the players' row up: the winner (or the last action), the board, the
// pot, each at its place unless the players' boxes reach it, then just above what is below it.
const CENTRE = [["#winner", 676], ["#last-action", 676], ["#board", 540], ["#pot", 470]];

function stackCentre(row) {
  const boxes = [...row.children].map((el) => el.getBoundingClientRect().top);
  let y = boxes.length ? Math.min(...boxes) - 12 : 1080;
  let placed = null;
  for (const [sel, top] of CENTRE) {
    const el = $(sel);
    el.style.top = "";
    if (el.hidden || getComputedStyle(el).display === "none") continue;
    if (placed === top) continue; // the winner and the last action share a place; one shows
    const h = el.getBoundingClientRect().height;
    const at = Math.min(top, y - h);
    el.style.top = `${at}px`;
    y = at - 10;
    placed = top;
  }
}

function playerName(table, key) {
  const p = table && table.players[key];
  if (p && p.name) return p.name;
  const kept = ov.state && ov.names.hand_id === ov.state.hand_id ? ov.names.seats[key] : null;
  return kept || `Seat ${key}`;
}

// seat key -> {hand, won}: who took what, once the hand is over (the server's hand_end).  A
// winner's `share` is what he won; an uncalled bet handed back (`returned`) is not winnings.
function winnerSeats(hand) {
  const out = new Map();
  if (hand.phase !== "done") return out;
  const end = ov.handEnd && ov.state && ov.handEnd.hand_id === ov.state.hand_id ? ov.handEnd : null;
  if (end && Array.isArray(end.winners) && end.winners.length) {
    for (const w of end.winners) {
      const k = String(w.seat);
      const prev = out.get(k);
      const words = w.hand ? (w.part && w.part !== "pot" && w.part !== "high" ? `${w.hand} (${w.part})` : w.hand) : "";
      out.set(k, { hand: prev && prev.hand ? [prev.hand, words].filter(Boolean).join(", ") : words,
        won: !end.payouts ? null : prev && prev.won != null ? prev.won : w.share ?? null });
    }
    return out;
  }
  if (hand.winner != null) out.set(String(hand.winner), { hand: "", won: null });
  return out;
}

main();
