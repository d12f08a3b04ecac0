// Card rendering (CSS cards with rank and suit symbols) shared by the display and the overlay.

const SUITS = { h: "\u2665", d: "\u2666", c: "\u2663", s: "\u2660" };
const RANKS = { T: "10", J: "J", Q: "Q", K: "K", A: "A" };

// "Ah", "Td", "Ah@B" (a foreign back), "joker" -> {rank, suit, deck, joker}
export function parseCard(label) {
  const [id, deck] = String(label).split("@");
  if (id.toLowerCase() === "joker") return { joker: true, rank: "", suit: "", deck: deck || null, label };
  return { joker: false, rank: id.slice(0, -1).toUpperCase(), suit: id.slice(-1).toLowerCase(), deck: deck || null, label };
}

export function cardFace(label, extraClass = "") {
  const c = parseCard(label);
  const el = document.createElement("div");
  el.className = `card face ${extraClass}`.trim();
  el.dataset.card = label;
  if (c.joker) {
    el.classList.add("joker");
    el.innerHTML = '<span class="r">JK</span><span class="s">\u2605</span>';
  } else {
    el.classList.add(c.suit === "h" || c.suit === "d" ? "red" : "black");
    const r = document.createElement("span");
    r.className = "r";
    r.textContent = RANKS[c.rank] || c.rank;
    const s = document.createElement("span");
    s.className = "s";
    s.textContent = SUITS[c.suit] || "?";
    el.append(r, s);
  }
  if (c.deck) {
    el.classList.add("foreign");
    el.title = `foreign back (${c.deck})`;
  }
  return el;
}

export function cardBack(extraClass = "") {
  const el = document.createElement("div");
  el.className = `card back ${extraClass}`.trim();
  el.dataset.back = "true";
  return el;
}

// ---------------------------------------------------------------- high-hand names
// Only names what is on screen (the overlay's cards); used for high games.

const VALUE = { 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, T: 10, J: 11, Q: 12, K: 13, A: 14 };
const NAME = { 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight", 9: "Nine", 10: "Ten",
  11: "Jack", 12: "Queen", 13: "King", 14: "Ace" };
const PLURAL = { 6: "Sixes" };
const plural = (v) => PLURAL[v] || `${NAME[v]}s`;

// Score of up to five cards: [category, tiebreakers...] (higher is better).
function score5(cards) {
  if (!cards.length) return null;
  const vals = cards.map((c) => VALUE[c.rank]).sort((a, b) => b - a);
  const counts = new Map();
  for (const v of vals) counts.set(v, (counts.get(v) || 0) + 1);
  const groups = [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
  const flush = cards.length === 5 && cards.every((c) => c.suit === cards[0].suit);
  let straightHigh = 0;
  if (cards.length === 5 && counts.size === 5) {
    if (vals[0] - vals[4] === 4) straightHigh = vals[0];
    else if (vals[0] === 14 && vals[1] === 5) straightHigh = 5; // the wheel
  }
  const kickers = groups.map((g) => g[0]);
  if (straightHigh && flush) return [8, straightHigh];
  if (groups[0][1] === 4) return [7, ...kickers];
  if (groups[0][1] === 3 && groups[1] && groups[1][1] >= 2) return [6, ...kickers];
  if (flush) return [5, ...vals];
  if (straightHigh) return [4, straightHigh];
  if (groups[0][1] === 3) return [3, ...kickers];
  if (groups[0][1] === 2 && groups[1] && groups[1][1] === 2) return [2, ...kickers];
  if (groups[0][1] === 2) return [1, ...kickers];
  return [0, ...vals];
}

function better(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] || 0) - (b[i] || 0);
    if (d) return d;
  }
  return 0;
}

function combos(list, k) {
  const out = [];
  const rec = (start, acc) => {
    if (acc.length === k) return void out.push(acc.slice());
    for (let i = start; i < list.length; i++) {
      acc.push(list[i]);
      rec(i + 1, acc);
      acc.pop();
    }
  };
  rec(0, []);
  return out;
}

export const HIGH_GAMES = new Set(["holdem", "omaha", "stud", "draw_high", "jacks_or_better"]);

// Best high score for a game: hold'em any 5 of hole+board; Omaha exactly 2 + 3; stud/draw best 5.
export function bestHigh(game, hole, board) {
  const parse = (l) => parseCard(l);
  const h = hole.map(parse);
  const b = board.map(parse);
  if ([...h, ...b].some((c) => c.joker || !VALUE[c.rank])) return null;
  let candidates;
  if (game === "omaha") {
    if (h.length < 2) return null;
    const boards = b.length >= 3 ? combos(b, 3) : [b];
    candidates = [];
    for (const two of combos(h, 2)) for (const three of boards) candidates.push([...two, ...three]);
  } else {
    const all = [...h, ...b];
    candidates = all.length > 5 ? combos(all, 5) : [all];
  }
  let best = null;
  for (const c of candidates) {
    const s = score5(c);
    if (s && (!best || better(s, best) > 0)) best = s;
  }
  return best;
}

export function compareScores(a, b) {
  return better(a, b);
}

export function handName(s) {
  if (!s) return "";
  const [cat, a, b] = s;
  switch (cat) {
    case 8: return a === 14 ? "Royal flush" : `Straight flush, ${NAME[a]} high`;
    case 7: return `Four ${plural(a)}`;
    case 6: return `${plural(a)} full of ${plural(b)}`;
    case 5: return `Flush, ${NAME[a]} high`;
    case 4: return `Straight, ${NAME[a]} high`;
    case 3: return `Three ${plural(a)}`;
    case 2: return `Two pair, ${plural(a)} and ${plural(b)}`;
    case 1: return `Pair of ${plural(a)}`;
    default: return a ? `${NAME[a]} high` : "";
  }
}
