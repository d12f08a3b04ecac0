// The room page: /api/room, refreshed when the floor's live stream announces a decision.
const $ = (sel) => document.querySelector(sel);
const el = (tag, props = {}, ...kids) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...kids);
  return e;
};

function seatList(seats, size, held = {}) {
  const ul = el("ul");
  for (let s = 1; s <= size; s++) {
    const who = seats[s] || seats[String(s)];
    const hold = held[s] || held[String(s)];
    ul.append(who ? el("li", { textContent: `${s}: ${who}` })
      : el("li", { className: "open", textContent: hold ? `${s}: held for ${hold}` : `${s}: open` }));
  }
  return ul;
}

function renderTournament(room) {
  const t = room.tournament;
  const c = room.clock;
  $("#t-name").textContent = c.name || "";
  $("#t-clock").textContent = !t ? "No tournament" : !c.running ? `${c.players_left} players, clock not started`
    : `${c.on_break ? "Break after level" : "Level"} ${c.level}: ${c.small_blind} / ${c.big_blind}` +
      ` · ${c.players_left} of ${c.entries} players · average ${c.average_stack}`;
  const grid = $("#t-tables");
  grid.replaceChildren();
  if (t) {
    for (const [num, info] of Object.entries(t.tables)) {
      const box = el("div", { className: "rtable" + (info.halted ? " halted" : "") }, el("h4", { textContent: `Table ${num}` }));
      box.dataset.table = num;
      if (info.halted) box.append(el("div", { className: "halt", textContent: "play halted (TDA 9-C)" }));
      box.append(seatList(info.seats, info.size));
      grid.append(box);
    }
  }
  const list = $("#t-decisions");
  list.replaceChildren(...room.decisions.slice().reverse().map((d) =>
    el("li", {}, d.text, " ", el("span", { className: "cite", textContent: (d.citations || []).join(", ") }))));
}

function renderCash(room) {
  const games = $("#c-games");
  games.replaceChildren();
  for (const [table, g] of Object.entries(room.cash.games)) {
    const box = el("div", { className: "rtable" }, el("h4", { textContent:
      `${table}: ${g.stakes} ${g.form}` + (g.feeds ? ` (must-move for ${g.feeds})` : "") }));
    box.dataset.table = table;
    box.append(seatList(g.players, g.seats, g.held));
    games.append(box);
  }
  const lists = $("#c-lists");
  lists.replaceChildren();
  for (const [game, names] of Object.entries(room.cash.lists)) {
    const ol = el("ol");
    names.forEach((n, i) => ol.append(el("li", { className: i === 0 ? "next" : "", textContent: n })));
    const box = el("div", {}, el("h4", { textContent: `${game}: ${names.length ? `next is ${names[0]}` : "nobody waiting"}` }), ol);
    box.dataset.game = game;
    lists.append(box);
  }
}

function renderClocks(room) {
  $("#a-clocks").replaceChildren(...Object.entries(room.action_clocks).map(([table, c]) =>
    el("li", { textContent: `Table ${table}, seat ${c.seat}: ${c.phase}, ${Math.ceil(c.seconds_left)} s (TDA 26)` })));
}

// The floor calls a clock on a player (TDA 26): the table's display counts it down.
$("#call-clock").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const body = { table: $("#clock-table").value.trim(), seat: Number($("#clock-seat").value) };
  const res = await fetch("/api/room/clock/call", { method: "POST", body: JSON.stringify(body) });
  $("#clock-error").textContent = res.ok ? "" : (await res.json()).error || res.statusText;
  soon();
});

let clocksRunning = false;
async function load() {
  const res = await fetch("/api/room", { cache: "no-store" });
  if (!res.ok) return;
  const room = await res.json();
  clocksRunning = Object.keys(room.action_clocks).length > 0;
  renderTournament(room);
  renderCash(room);
  renderClocks(room);
  document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
}

let timer = null;
function soon() {
  clearTimeout(timer);
  timer = setTimeout(load, 100);
}

const es = new EventSource("/api/stream");
es.onopen = () => { $("#live").classList.add("up"); load(); };
es.onerror = () => $("#live").classList.remove("up");
es.onmessage = (ev) => { if (JSON.parse(ev.data).type === "room") soon(); };
setInterval(() => { if (clocksRunning) load(); }, 1000); // a clock on a player counts down
load();
