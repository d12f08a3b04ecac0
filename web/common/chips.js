// Chips on the pages: amounts, the legal range, the level clock, and the action pad the
// dealer display and the action tracker share.  Field names are the MQTT contract's
// (state.hand.chips, state.table.level, event/hand_end payouts: docs/mqtt.md).
// Nothing is decided here: the controller validates every request and answers with what is legal.

export const CHIP_VALUES = [1, 5, 25, 100, 500, 1000, 5000, 25000];
export const GAMES = {
  holdem: "Hold'em", omaha: "Omaha", omaha8: "Omaha hi-lo", stud: "Seven-card stud", razz: "Razz",
  stud8: "Stud hi-lo", lowball_a5: "A-5 lowball", lowball_27: "2-7 lowball", draw_high: "Five-card draw",
  jacks_or_better: "Jacks or better", triple_draw_27: "2-7 triple draw",
};
export const STRUCTURES = { no_limit: "No-limit", pot_limit: "Pot-limit", limit: "Limit" };

export function fmt(n) {
  return n == null ? "" : Number(n).toLocaleString("en-US");
}

export function chipsOf(state) {
  return state && state.hand && state.hand.chips ? state.hand.chips : null;
}

// What a seat has behind: the hand's stacks during a hand, the table's between hands.
export function stackOf(state, seat) {
  const key = String(seat);
  const chips = chipsOf(state);
  if (chips && chips.stacks && chips.stacks[key] != null) return chips.stacks[key];
  const p = state && state.table && state.table.players ? state.table.players[key] : null;
  return p && p.stack != null ? p.stack : null;
}

export function betOf(state, seat) {
  const chips = chipsOf(state);
  return chips && chips.bets ? chips.bets[String(seat)] || 0 : 0;
}

// "Level 3 · 100/200 · ante 25 · 12:04" and the seconds left (null without a clock).
export function levelText(level, now = Date.now() / 1000) {
  if (!level) return { text: "", left: null };
  const parts = [`Level ${level.number}`];
  if (level.blinds && level.blinds.length) parts.push(level.blinds.map(fmt).join("/"));
  if (level.limits && level.limits.length) parts.push(`limits ${level.limits.map(fmt).join("/")}`);
  if (level.bb_ante) parts.push(`BB ante ${fmt(level.bb_ante)}`);
  else if (level.ante) parts.push(`ante ${fmt(level.ante)}`);
  if (level.bring_in) parts.push(`bring-in ${fmt(level.bring_in)}`);
  let left = null;
  if (level.ends_at != null) {
    left = Math.max(0, Math.round(level.ends_at - now));
    parts.push(`${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`);
  }
  return { text: parts.join(" \u00b7 "), left };
}

export function potText(chips) {
  if (!chips) return "";
  const pots = chips.pots || [];
  const side = pots.length > 1 ? pots.slice(1).map((p, i) => ` \u00b7 side ${i + 1}: ${fmt(p.amount)}`).join("") : "";
  return `Pot ${fmt(chips.pot)}${side}`;
}

export function lastActionText(chips) {
  return chips && chips.last_action ? chips.last_action.text || "" : "";
}

// The legal choices for the seat to act, read off the public state.
export function legal(state) {
  const hand = state && state.hand;
  const chips = chipsOf(state);
  if (!hand || !chips || hand.to_act == null) return null;
  const seat = hand.to_act;
  const bet = betOf(state, seat);
  const stack = stackOf(state, seat) || 0;
  const facing = Math.max(0, ...Object.values(chips.bets || {}).map(Number));
  const toCall = chips.to_call || 0;
  return {
    seat, bet, stack, toCall, facing,
    callTo: bet + Math.min(toCall, stack),
    allInTo: bet + stack,
    minRaise: chips.min_raise, maxRaise: chips.max_raise,
    canRaise: chips.min_raise != null,
    potLimit: hand.structure === "pot_limit",
  };
}

export function rangeText(l) {
  if (!l) return "";
  const call = l.toCall > 0 ? `to call ${fmt(Math.min(l.toCall, l.stack))}` : "check";
  const verb = l.facing > 0 ? "raise to" : "bet";
  const raise = l.canRaise ? ` \u00b7 ${verb} ${fmt(l.minRaise)}\u2013${fmt(l.maxRaise)}` : " \u00b7 no raise";
  return `Seat ${l.seat}: ${call}${raise} \u00b7 stack ${fmt(l.stack)}`;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function btn(text, cls, onClick, data = {}) {
  const b = el("button", cls, text);
  b.type = "button";
  for (const [k, v] of Object.entries(data)) b.dataset[k] = v;
  b.addEventListener("click", onClick);
  return b;
}

// The fast action pad: fold / check-call / min raise / pot / all-in, a numeric pad for any
// amount ("raise to" totals, as TDA 42-B), and a chip entry for a push to rule on
// (request/put).  `send(name, fields)` publishes the request.
export function actionPad(state, send, opts = {}) {
  const l = legal(state);
  const hand = state && state.hand;
  const box = el("div", "pad");
  box.dataset.seat = l ? String(l.seat) : "";
  if (!l) {
    box.append(el("div", "pad-range", hand && hand.to_act != null ? `Seat ${hand.to_act} to act` : "No action pending"));
    if (hand && hand.to_act != null) {
      // A hand without chip accounting: the action alone (the controller takes amounts from the table).
      box.dataset.seat = String(hand.to_act);
      const quick = el("div", "pad-quick");
      for (const a of ["fold", "check", "call", "bet", "raise", "complete", "bring_in"]) {
        quick.append(btn(a.replace("_", " "), `pad-btn ${a === "fold" ? "fold" : a === "check" || a === "call" ? "call"
          : "raise"}`, () => send("action", { seat: hand.to_act, action: a, all_in: false }), { quick: a }));
      }
      box.append(quick);
    }
    return box;
  }
  const head = el("div", "pad-range", rangeText(l));
  head.dataset.toCall = String(l.toCall);
  head.dataset.minRaise = l.minRaise ?? "";
  head.dataset.maxRaise = l.maxRaise ?? "";
  box.append(head);
  const verb = l.facing > 0 ? "raise" : "bet";
  const act = (action, amount) => {
    const fields = { seat: l.seat, action };
    if (amount != null) fields.amount = amount;
    fields.all_in = amount != null ? amount >= l.allInTo : action === "call" && l.toCall >= l.stack;
    send("action", fields);
  };
  const quick = el("div", "pad-quick");
  quick.append(btn("Fold", "pad-btn fold", () => act("fold"), { quick: "fold" }));
  if (l.toCall > 0) quick.append(btn(`Call ${fmt(l.callTo)}`, "pad-btn call", () => act("call"), { quick: "call" }));
  else quick.append(btn("Check", "pad-btn call", () => act("check"), { quick: "check" }));
  if (l.canRaise) {
    quick.append(btn(`Min ${fmt(l.minRaise)}`, "pad-btn raise", () => act(verb, l.minRaise), { quick: "min" }));
    if (l.potLimit) quick.append(btn(`Pot ${fmt(l.maxRaise)}`, "pad-btn raise", () => act(verb, l.maxRaise),
      { quick: "pot" }));
    // All in when the stack is within the legal range (pot-limit and limit cap it: Pot / Min say the most).
    if (l.maxRaise == null || l.allInTo <= l.maxRaise) {
      quick.append(btn(`All in ${fmt(l.allInTo)}`, "pad-btn allin", () => act(verb, l.allInTo), { quick: "allin" }));
    }
  } else if (l.stack > l.toCall) {
    // No full raise is open (too short, capped, not reopened): all in is offered; the controller rules on it.
    quick.append(btn(`All in ${fmt(l.allInTo)}`, "pad-btn allin", () => act(verb, l.allInTo), { quick: "allin" }));
  }
  box.append(quick);

  // Numeric pad: any total; the controller rules on amounts outside the range.
  let typed = "";
  const shown = el("div", "pad-amount", "");
  shown.dataset.amount = "";
  const refresh = () => {
    shown.textContent = typed ? `${verb} to ${fmt(Number(typed))}` : `${verb} to \u2026`;
    shown.dataset.amount = typed;
  };
  const keys = el("div", "pad-keys");
  for (const k of ["1", "2", "3", "4", "5", "6", "7", "8", "9", "00", "0", "\u232b"]) {
    keys.append(btn(k, "pad-key", () => {
      typed = k === "\u232b" ? typed.slice(0, -1) : (typed + k).replace(/^0+/, "").slice(0, 9);
      refresh();
    }, { key: k }));
  }
  const go = btn(verb === "raise" ? "Raise" : "Bet", "pad-btn go", () => {
    if (!typed) return;
    act(verb, Number(typed));
    typed = "";
    refresh();
  }, { quick: "amount" });
  refresh();
  box.append(shown, keys, go);

  if (opts.put !== false) box.append(putEntry(l.seat, send));
  return box;
}

// A push entered chip by chip, with what the player declared (request/put): the controller
// rules on it (TDA 42-A: one 1,400 push facing 1,000 with no word is a call or a raise...).
export function putEntry(seat, send) {
  const box = el("div", "put");
  const chips = [];
  let declare = null;
  const list = el("div", "put-chips", "");
  const refresh = () => {
    const total = chips.reduce((a, b) => a + b, 0);
    list.textContent = chips.length ? `${chips.map(fmt).join(" + ")} = ${fmt(total)}` : "Push: tap the chips";
    list.dataset.total = String(total);
  };
  const row = el("div", "put-row");
  for (const v of CHIP_VALUES) row.append(btn(fmt(v), "chip", () => { chips.push(v); refresh(); }, { chip: String(v) }));
  row.append(btn("\u232b", "chip", () => { chips.pop(); refresh(); }, { chip: "undo" }));
  const said = el("div", "put-row");
  for (const [code, words] of [[null, "silent"], ["call", "said call"], ["raise", "said raise"], ["all_in", "said all in"]]) {
    const b = btn(words, "declare", () => {
      declare = code;
      for (const x of said.children) x.setAttribute("aria-pressed", String(x === b));
    }, { declare: code || "none" });
    b.setAttribute("aria-pressed", String(code === null));
    said.append(b);
  }
  const go = btn("Rule on push", "pad-btn go", () => {
    if (!chips.length) return;
    const fields = { seat, chips: [...chips] };
    if (declare) fields.declare = declare;
    send("put", fields);
    chips.length = 0;
    refresh();
  }, { quick: "put" });
  refresh();
  box.append(el("div", "section-label", `Chips pushed by seat ${seat}`), list, row, said, go);
  return box;
}

export function textInput(name, numeric, value = "") {
  const i = document.createElement("input");
  i.name = name;
  i.type = "text";
  if (numeric) {
    i.inputMode = "numeric";
    i.pattern = "[0-9]*";
  }
  i.value = value;
  i.autocomplete = "off";
  return i;
}

export function labelled(text, input) {
  const wrap = el("label", "field");
  wrap.append(el("span", "", text), input);
  return wrap;
}

// One seat's player and chips: seat/rename (request/seat), unseat, set a stack or add chips
// (request/stack: between hands only, journaled; the controller refuses them mid-hand).
export function seatEditor(state, seat, send) {
  const table = state && state.table;
  const player = table && table.players ? table.players[String(seat)] : null;
  const hand = state && state.hand;
  const inHand = Boolean(hand && !["done", "dead"].includes(hand.phase));
  const box = el("div", "seat-editor");
  box.dataset.seat = String(seat);
  const name = textInput("name", false, player ? player.name : "");
  const st = stackOf(state, seat);
  const stack = textInput("stack", true, st == null ? "" : String(st));
  const add = textInput("add", true);
  let post = false;
  const postBtn = btn("posts to come in", "declare", () => {
    post = !post;
    postBtn.setAttribute("aria-pressed", String(post));
  }, { post: "toggle" });
  postBtn.setAttribute("aria-pressed", "false");
  const num = (i) => (i.value.trim() === "" ? null : Number(i.value.replace(/[^0-9]/g, "")));
  const form = el("div", "form");
  form.append(labelled("Name", name), labelled("Stack", stack), labelled("Add (rebuy, add-on)", add), postBtn);
  const actions = el("div", "pad-quick");
  actions.append(
    btn(player ? "Rename" : "Seat player", "pad-btn go", () => {
      if (!name.value.trim()) return;
      const fields = { seat, name: name.value.trim() };
      if (post) fields.post = true;
      if (!player && num(stack) != null) fields.stack = num(stack);
      send("seat", fields);
    }, { send: "seat" }),
    btn("Set stack", "pad-btn raise", () => {
      if (num(stack) != null) send("stack", { seat, stack: num(stack) });
    }, { send: "stack" }),
    btn("Add chips", "pad-btn raise", () => {
      if (num(add)) send("stack", { seat, add: num(add) });
    }, { send: "add" }),
  );
  if (player) actions.append(btn("Unseat", "pad-btn fold", () => send("unseat", { seat }), { send: "unseat" }));
  box.append(form, actions);
  if (inHand) box.append(el("div", "pad-range", "Stacks change between hands: the controller refuses them now."));
  return box;
}
