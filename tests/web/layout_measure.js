// tests/web/test_page_fit.py: what a page shows that a viewer would call broken, measured on the
// element boxes Chromium laid out.  Returns a list of problems (empty: none).
([boxSel, cardSel, textSel, apartSel]) => {
  const problems = [];
  const vis = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 ? r : null; };
  const inter = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 &&
    b.top < a.bottom - 0.5;
  const W = innerWidth, H = innerHeight;
  const boxes = [...document.querySelectorAll(boxSel)].map((el) => ({ el, r: vis(el) })).filter((b) => b.r);
  boxes.forEach((b, i) => {
    const id = b.el.dataset.seat;
    if (b.r.left < -0.5 || b.r.top < -0.5 || b.r.right > W + 0.5 || b.r.bottom > H + 0.5)
      problems.push(`seat ${id} box off screen ${JSON.stringify(b.r)}`);
    for (const c of b.el.querySelectorAll(cardSel)) {
      const r = vis(c);
      if (!r) continue;
      if (r.left < b.r.left - 0.5 || r.right > b.r.right + 0.5 || r.top < b.r.top - 0.5 || r.bottom > b.r.bottom + 0.5)
        problems.push(`seat ${id} card outside its box ${Math.round(r.left - b.r.left)},${Math.round(b.r.right - r.right)},${Math.round(r.top - b.r.top)},${Math.round(b.r.bottom - r.bottom)}`);
      for (const o of boxes) if (o !== b && inter(r, o.r)) problems.push(`seat ${id} card over seat ${o.el.dataset.seat}`);
      for (const o of boxes) {
        if (o === b) continue;
        for (const oc of o.el.querySelectorAll(cardSel)) {
          const q = vis(oc);
          if (q && inter(r, q)) problems.push(`seat ${id} card overlaps seat ${o.el.dataset.seat} card`);
        }
      }
    }
    for (let j = i + 1; j < boxes.length; j++)
      if (inter(b.r, boxes[j].r)) problems.push(`seat ${id} box overlaps seat ${boxes[j].el.dataset.seat}`);
    for (const sel of apartSel) {
      for (const a of document.querySelectorAll(sel)) {
        const r = vis(a);
        if (r && !a.closest("[hidden]") && inter(b.r, r)) problems.push(`seat ${id} box under ${sel}`);
      }
    }
  });
  const apart = apartSel.flatMap((sel) => [...document.querySelectorAll(sel)])
    .filter((a) => vis(a) && !a.closest("[hidden]") && getComputedStyle(a).display !== "none");
  apart.forEach((a, i) => apart.slice(i + 1).forEach((b) => {
    if (inter(vis(a), vis(b))) problems.push(`${a.id} overlaps ${b.id}`);
  }));
  for (const el of document.querySelectorAll(textSel)) {
    const r = vis(el);
    if (!r || !el.textContent.trim()) continue;
    const what = `${el.id || el.className} "${el.textContent.trim().slice(0, 40)}"`;
    if (el.scrollWidth > el.clientWidth + 1) problems.push(`clipped across: ${what} ${el.scrollWidth}>${el.clientWidth}`);
    if (el.scrollHeight > el.clientHeight + 1) problems.push(`clipped down: ${what} ${el.scrollHeight}>${el.clientHeight}`);
    if (r.right > W + 0.5 || r.bottom > H + 0.5 || r.left < -0.5 || r.top < -0.5) problems.push(`off screen: ${what}`);
    const box = el.closest(boxSel);
    if (box) {
      const q = box.getBoundingClientRect();
      if (r.left < q.left - 0.5 || r.right > q.right + 0.5) problems.push(`outside its seat: ${what}`);
    }
    let p = el.parentElement;  // an ancestor that hides overflow must hold the element too
    while (p && p !== document.body) {
      const cs = getComputedStyle(p);
      if (cs.overflow !== "visible" || cs.overflowX !== "visible") {
        const q = p.getBoundingClientRect();
        if (r.right > q.right + 1 || r.left < q.left - 1 || r.bottom > q.bottom + 1 || r.top < q.top - 1)
          problems.push(`cut by ${p.id || p.className}: ${what}`);
        break;
      }
      p = p.parentElement;
    }
  }
  return problems;
}
