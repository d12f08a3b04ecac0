// The tournament clock: reads /api/room every second, counts down in between.
const $ = (id) => document.getElementById(id);
const num = (n) => (n ?? 0).toLocaleString("en-US");
let left = null;
let fetched = 0;

function show(clock) {
  $("name").textContent = clock.name || "Tournament";
  $("left").textContent = num(clock.players_left);
  $("entries").textContent = num(clock.entries);
  $("average").textContent = num(clock.average_stack);
  if (!clock.running) {
    $("phase").textContent = "Waiting for the start";
    left = null;
    return;
  }
  $("phase").textContent = clock.on_break ? `Break after level ${clock.level}` : `Level ${clock.level}`;
  $("time").classList.toggle("break", !!clock.on_break);
  $("sb").textContent = num(clock.small_blind);
  $("bb").textContent = num(clock.big_blind);
  $("ante").textContent = num(clock.ante);
  $("bba").textContent = num(clock.big_blind_ante);
  const next = clock.next;
  $("next-level").textContent = next ? `level ${next.level}: ${num(next.small_blind)} / ${num(next.big_blind)}` +
    (next.big_blind_ante ? ` (big blind ante ${num(next.big_blind_ante)})` : next.ante ? ` (ante ${num(next.ante)})` : "")
    : "last level";
  left = clock.seconds_left;
  fetched = performance.now();
}

function tick() {
  if (left === null) return;
  const s = Math.max(0, left - (performance.now() - fetched) / 1000);
  const m = Math.floor(s / 60);
  $("time").textContent = `${String(m).padStart(2, "0")}:${String(Math.floor(s % 60)).padStart(2, "0")}`;
}

async function poll() {
  try {
    const res = await fetch("/api/room", { cache: "no-store" });
    if (res.ok) show((await res.json()).clock);
  } catch (err) {
    // the floor is restarting: keep counting from the last reading
  }
}

poll();
setInterval(poll, 1000);
setInterval(tick, 200);
