// The producer's graphics on the overlay, beside overlay.js's own (all from the delayed broadcast
// topics):
//   outs     a trailing hand's outs, the cards that win (broadcast/equity `outs`, the server's)
//   stats    session statistics per player: VPIP, PFR, hands won (broadcast/stats)
//   photos   a player's photo, and flags his country: from the theme's or config.json's
//   flags    `players` map, by the player's name: {"Ann": {"photo": "ann.jpg", "flag": "SE"}}
//            (a flag is a picture's path, or a country code shown as a badge)
// and the producer's live choice of graphics (broadcast/graphics, from web/producer/).

const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
const RANK_ORDER = "23456789TJQKA";

// Outs grouped by suit, the ranks in order: "♥ 3456 · ♠ KA" (short enough for a 10-handed box).
export function outsText(cards) {
  const bySuit = {};
  for (const c of cards) (bySuit[c[1]] = bySuit[c[1]] || []).push(c[0]);
  return ["s", "h", "d", "c"].filter((s) => bySuit[s])
    .map((s) => `${SUITS[s]} ${bySuit[s].sort((a, b) => RANK_ORDER.indexOf(a) - RANK_ORDER.indexOf(b)).join("")}`)
    .join(" \u00b7 ");
}

export function statsText(p) {
  const pc = (x) => `${Math.round(Number(x) * 100)}`;
  return `VPIP ${pc(p.vpip)} \u00b7 PFR ${pc(p.pfr)} \u00b7 Won ${p.won}/${p.hands}`;
}

// The graphics the producer turned on or off live: {part: bool}; anything else is ignored.
export function graphicsParts(data, parts) {
  const out = {};
  if (!data || typeof data !== "object" || !data.parts || typeof data.parts !== "object") return out;
  for (const [k, v] of Object.entries(data.parts)) if (parts.includes(k) && typeof v === "boolean") out[k] = v;
  return out;
}

function safeSrc(src, base) {
  const s = String(src || "");
  if (!s || /^(javascript|vbscript):/i.test(s)) return "";
  return /^(https?:|data:|\/)/.test(s) ? s : base + s;
}

// The identity row (photo, flag) and the outs and stats lines of one player's box.
export function decoratePlayer(el, { name, people, base, eq, stats }) {
  const person = name && people && typeof people === "object" ? people[name] : null;
  if (person && (person.photo || person.flag)) {
    const ident = document.createElement("div");
    ident.className = "ident";
    if (person.photo) {
      const img = document.createElement("img");
      img.className = "photo";
      img.alt = "";
      img.src = safeSrc(person.photo, base);
      ident.append(img);
    }
    if (person.flag) {
      const flag = String(person.flag);
      if (/\.(svg|png|jpe?g|webp|gif)$/i.test(flag)) {
        const img = document.createElement("img");
        img.className = "flag";
        img.alt = "";
        img.src = safeSrc(flag, base);
        ident.append(img);
      } else {
        const badge = document.createElement("span");
        badge.className = "flag code";
        badge.textContent = flag.slice(0, 3).toUpperCase();
        ident.append(badge);
      }
    }
    el.prepend(ident);
  }
  const outs = document.createElement("div");
  outs.className = "outs";
  if (eq && Array.isArray(eq.outs)) {
    outs.dataset.outs = eq.outs.join(" ");
    const n = eq.outs.length;
    outs.textContent = n ? `${n} out${n === 1 ? "" : "s"}: ${outsText(eq.outs)}` : "0 outs";
  }
  const line = document.createElement("div");
  line.className = "stats";
  const p = stats && name && stats.players ? stats.players[name] : null;
  if (p && p.hands > 0) {
    line.textContent = statsText(p);
    line.dataset.vpip = String(p.vpip);
    line.dataset.pfr = String(p.pfr);
    line.dataset.won = String(p.won);
    line.dataset.hands = String(p.hands);
  }
  el.append(outs, line);
}
