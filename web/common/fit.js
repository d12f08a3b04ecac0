// Text that must never be cut: a name, a hand, an amount.  The CSS gives each such element its
// box; when the text does not fit, its font shrinks one pixel at a time, in the browser that
// draws it.  An element may first shrink to `wrapAt` px on one line, then take a second line
// (the class `wrap`: its CSS allows two lines) and shrink again (ordinary words: down to `min`;
// with a word of LONG_WORD letters or more: to `wrapAt`); a word longer than the line is then
// broken anywhere (the class `break`) and the font shrinks down to `min` px.  The floors are
// chosen so that the longest texts the controller sends (a 20-character player name, "Full
// House, Queens over Sevens") fit every box at every seat count: tests/web/test_page_fit.py
// measures that in Chromium.

const LONG_WORD = 14;

export function fits(el) {
  return el.scrollWidth <= el.clientWidth + 1 && el.scrollHeight <= el.clientHeight + 1;
}

function shrink(el, min) {
  let size = parseFloat(getComputedStyle(el).fontSize);
  while (size > min && !fits(el)) {
    size -= 1;
    el.style.fontSize = `${size}px`;
  }
}

export function fitText(el, { min = 11, wrapAt = null } = {}) {
  el.style.fontSize = "";
  el.classList.remove("wrap", "break");
  if (!el.textContent || fits(el)) return;
  if (wrapAt != null) {
    shrink(el, wrapAt);
    if (fits(el)) return;
    el.style.fontSize = "";
    el.classList.add("wrap");
    // Ordinary words shrink as far as they must; a very long word (a 20-letter handle) is broken
    // (below) rather than made tiny.
    const longest = Math.max(...el.textContent.trim().split(/\s+/).map((w) => w.length));
    shrink(el, longest >= LONG_WORD ? wrapAt : min);
    if (fits(el)) return;
    // A single word longer than the line: break it anywhere rather than cut it.
    el.style.fontSize = "";
    el.classList.add("break");
    if (fits(el)) return;
  }
  shrink(el, min);
}

export function fitAll(root, selector, opts) {
  for (const el of root.querySelectorAll(selector)) fitText(el, opts);
}
