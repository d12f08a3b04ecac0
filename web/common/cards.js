// Card rendering (CSS cards with rank and suit symbols) shared by the pages.  Hands are never
// evaluated here: hand names come from the controller (broadcast/equity, hand_end).

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
