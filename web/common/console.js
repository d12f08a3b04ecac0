// Console requests (docs/mqtt.md "Requests"): `request/<name>` with a transaction, an MQTT v5
// response topic and correlation data; the controller's answer comes back on that topic.
// Shared by the dealer display and the action tracker.

const REQUEST_TIMEOUT_MS = 6000;
const LABELS = {
  new_hand: "New hand", set_button: "Move button", action: "Action", acknowledge: "Acknowledge", misdeal: "Misdeal",
  seat: "Seat player", unseat: "Unseat", change_game: "Change game", stack: "Stack", put: "Chips pushed",
  level: "Level",
};

export function label(name) {
  return LABELS[name] || name;
}

// `notify(text, ok, name, response)` shows the outcome; returns {request, onResponse, responseTopic}.
export function requester(client, clientId, root, notify) {
  const pending = new Map(); // transaction -> {name, timer}
  let count = 0;
  const responseTopic = `${root}/response/${clientId}`;

  function request(name, fields = {}) {
    if (!client || !client.connected) {
      notify("Not connected to the table", false, name, null);
      return null;
    }
    count += 1;
    const transaction = `${clientId}-${Date.now().toString(36)}-${count}`;
    const body = JSON.stringify({ ...fields, transaction });
    const opts = { qos: 1, properties: { responseTopic, correlationData: new TextEncoder().encode(transaction) } };
    const timer = setTimeout(() => {
      if (pending.delete(transaction)) notify(`${label(name)}: no answer from the controller`, false, name, null);
    }, REQUEST_TIMEOUT_MS);
    pending.set(transaction, { name, timer });
    client.publish(`${root}/request/${name}`, body, opts, (err) => {
      if (err) {
        clearTimeout(timer);
        pending.delete(transaction);
        notify(`${label(name)}: not sent (${err.message || err})`, false, name, null);
      }
    });
    return transaction;
  }

  // True when the message answered one of ours.
  function onResponse(data, packet) {
    if (!data || typeof data !== "object") return false;
    let tx = data.transaction;
    const corr = packet && packet.properties && packet.properties.correlationData;
    if (!tx && corr) tx = new TextDecoder().decode(corr);
    const entry = tx ? pending.get(tx) : null;
    if (!entry) return false; // another console's answer
    clearTimeout(entry.timer);
    pending.delete(tx);
    notify(data.ok ? `${label(entry.name)}: OK` : `${label(entry.name)}: ${data.error || "refused"}`, data.ok,
      entry.name, data);
    return true;
  }

  return { request, onResponse, responseTopic };
}

// A short message at the top of the page: green for OK, red for an error (kept longer).
const toastTimers = new WeakMap();
export function showToast(el, text, ok) {
  el.textContent = text;
  el.dataset.ok = String(Boolean(ok));
  el.hidden = false;
  clearTimeout(toastTimers.get(el));
  toastTimers.set(el, setTimeout(() => {
    el.hidden = true;
  }, ok ? 2500 : 5000));
}
