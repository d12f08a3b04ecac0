// The display's service screen: the table's readers, from the retained `diagnostics` topic
// (docs/diagnostics.md).  Per antenna: the tags it reported, the cards the camera saw there with no
// tag read (misses), collisions, whether its reader answers; the antenna board's link and scan cycle.
// The "service" pill in the bar opens it; it turns amber when a reader is down or the board is out of
// sync, so the dealer or a technician sees trouble before a card goes unread.

const $ = (sel) => document.querySelector(sel);
const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

let latest = null;

export function diagnosticsTopic(root) {
  return `${root}/diagnostics`;
}

export function wireService() {
  $("#btn-service").addEventListener("click", () => {
    $("#service").hidden = false;
    renderService();
  });
  $("#service-close").addEventListener("click", () => { $("#service").hidden = true; });
}

export function onDiagnostics(data) {
  latest = data;
  const rfid = data && data.rfid;
  const trouble = !!rfid && (!rfid.link.synced || rfid.not_answering.length > 0);
  const pill = $("#btn-service");
  pill.dataset.trouble = trouble ? "yes" : "no";
  pill.textContent = trouble ? "service !" : "service";
  if (!$("#service").hidden) renderService();
}

function renderService() {
  const body = $("#service-body");
  const d = latest;
  if (!d) {
    body.innerHTML = `<p class="svc-none">No diagnostics from the table yet.</p>`;
    return;
  }
  const parts = [];
  const cam = d.camera ? `camera ${d.camera.running ? "running" : "STOPPED"}, ${d.camera.failures} failures` : "no camera";
  const r = d.rfid;
  if (!r) {
    body.innerHTML = `<p class="svc-none">No antenna board configured; ${esc(cam)}.</p>`;
    return;
  }
  const s = r.scan;
  const cycle = s.cycle_ms == null ? "-" : `${Number(s.cycle_ms).toFixed(1)} ms`;
  const worst = s.cycle_ms_max == null ? "-" : `${Number(s.cycle_ms_max).toFixed(1)} ms`;
  parts.push(`<div id="svc-summary">
    <span class="svc-link" data-synced="${r.link.synced}">board ${esc(r.link.state)}${r.link.synced ? "" : " (NOT IN SYNC)"}</span>
    <span>firmware ${esc(r.link.firmware_version || "?")}</span>
    <span id="svc-cycle">scan cycle ${cycle} (worst ${worst})</span>
    <span id="svc-stalls">${s.stalls} stalls${s.stalls ? `, longest ${s.longest_gap_ms} ms` : ""}</span>
    <span>${r.link.corrupt_frames} corrupt frames</span>
    <span>${esc(cam)}</span></div>`);
  if (r.not_answering.length) {
    parts.push(`<p id="svc-dead" class="svc-bad">Not answering: antenna ${r.not_answering.join(", ")}</p>`);
  }
  const zm = Object.entries(r.zone_misses || {});
  if (zm.length) {
    parts.push(`<p id="svc-zone-misses">Missed, antenna unknown: ${zm.map(([z, n]) => `${esc(z)} ${n}`).join(", ")}</p>`);
  }
  const rows = r.antennas.map((a) => `<tr data-antenna="${a.antenna}" class="${a.answering ? "" : "svc-bad"}">
      <td>${a.antenna}</td><td>${esc(a.slot || "-")}</td><td class="reads">${a.reads}</td>
      <td class="misses">${a.misses}</td><td class="collisions">${a.collisions}</td>
      <td class="answering">${a.answering ? "yes" : "NO"}</td></tr>`).join("");
  parts.push(`<table id="svc-antennas"><thead><tr><th>antenna</th><th>slot</th><th>reads</th><th>misses</th>
    <th>collisions</th><th>answering</th></tr></thead><tbody>${rows}</tbody></table>`);
  body.innerHTML = parts.join("");
}
