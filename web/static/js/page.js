// The lab page's layout: the settings (a sidebar when there is room, else
// a drawer), the projector view and the address that goes with it, the
// copy buttons, and the status read out at most once a second. What
// these read is the page's computed layout and focus, which no signal
// holds; the buttons' state is written on the buttons for assistive tech.

const $ = (id) => document.getElementById(id);

// ---- The settings ----

export function settingsShown() {
  const c = $('controls');
  return !!c && getComputedStyle(c).display !== 'none';
}

// syncSettings tells the Settings button what the page shows.
function syncSettings() {
  const btn = $('btn-settings');
  if (btn) btn.setAttribute('aria-expanded', settingsShown() ? 'true' : 'false');
}

// setSettings opens or closes the settings. As a drawer (a phone, a
// narrow window, the projector view) it takes the focus when it opens and
// gives it back to the button when it closes: to the drawer's Close
// button, not a control (the key that opened it must not land in a menu:
// s would pick a scenario).
export function setSettings(open, focus) {
  const lab = $('lab');
  if (!lab) return;
  lab.dataset.drawer = open ? 'open' : 'closed';
  syncSettings();
  const drawer = getComputedStyle($('controls')).position === 'fixed';
  if (open && drawer && focus) $('controls').querySelector('[data-drawer-close]').focus();
  else if (!open && focus) $('btn-settings').focus();
  if (open && drawer) showChartAboveSheet();
}

// showChartAboveSheet: on a phone the settings are a sheet over the
// bottom half; the page scrolls the first chart up under the transport
// (which stays at the top), so a slider and a chart are seen together.
function showChartAboveSheet() {
  const sheet = $('controls').getBoundingClientRect();
  const tr = document.querySelector('#timeline .transport');
  const fig = document.querySelector('.chart-box');
  if (sheet.top <= 0 || !tr || !fig) return;
  window.scrollBy(0, fig.getBoundingClientRect().top - tr.getBoundingClientRect().height - 8);
}

document.addEventListener('click', (ev) => {
  const t = ev.target.closest && ev.target.closest('#btn-settings, [data-drawer-close]');
  if (t) setSettings(t.id === 'btn-settings' ? !settingsShown() : false, true);
});
if (window.matchMedia) matchMedia('(max-width: 1099px)').addEventListener('change', syncSettings);
document.addEventListener('DOMContentLoaded', syncSettings);

// ---- The projector view, and the address ----

export function isProjector() {
  const lab = $('lab');
  return !!lab && lab.classList.contains('projector');
}

// withView is an address with the projector view on or off.
function withView(url, on) {
  const u = new URL(url, location.href);
  if (on) u.searchParams.set('view', 'projector');
  else u.searchParams.delete('view');
  return u.pathname + u.search + u.hash;
}

export function setProjector(on) {
  const lab = $('lab');
  if (!lab) return;
  lab.classList.toggle('projector', on);
  document.querySelectorAll('.lesson-page').forEach((p) => p.classList.toggle('projector', on));
  delete lab.dataset.drawer;
  const btn = $('btn-projector');
  if (btn) btn.setAttribute('aria-pressed', on ? 'true' : 'false');
  history.replaceState(history.state, '', withView(location.href, on));
  syncSettings();
}

document.addEventListener('click', (ev) => {
  if (ev.target.closest && ev.target.closest('#btn-projector')) setProjector(!isProjector());
});

// olabAddress is what the stream calls to keep a free lab's address on
// the tab's permalink (web/lab/stream.go replaceURL; the one named entry
// point of this module: the stream's script must name something). The
// view is not in the permalink and stays in the address while it is on.
// The stream sends it on every redraw (a slider move), and Chrome's
// replaceState waited 3–12 ms on the browser process there, before the
// charts were drawn (issue 26); each change of address also made Chrome
// load and parse the SVG favicon again (4–7 ms), in the next move of a
// drag. So the address follows once the redraws have stopped for
// addressStill (a drag sends one every 120 ms) and the frame after is
// painted: the last address sent, unless it is the one already shown.
const addressStill = 300;
let addressNext = null;
let addressTimer = 0;
window.olabAddress = function (url) {
  if (location.pathname !== '/lab') return;
  addressNext = url;
  clearTimeout(addressTimer);
  addressTimer = setTimeout(() => afterPaint(() => {
    let u = addressNext;
    if (u === null) return;
    addressNext = null;
    if (isProjector()) u = withView(u, true);
    if (u === location.pathname + location.search + location.hash) return; // a permalink opened
    try { history.replaceState(history.state, '', u); } catch (_) { /* too many in a row: the next redraw's address follows */ }
  }), addressStill);
};

// afterPaint runs fn once the next frame is painted, or after 100 ms in a
// tab that paints no frames (hidden).
function afterPaint(fn) {
  let done = false;
  const run = () => { if (!done) { done = true; fn(); } };
  requestAnimationFrame(() => setTimeout(run, 0));
  setTimeout(run, 100);
}

// ---- Copy ----

// Copy buttons: data-copy="#selector" copies that element's text. The
// clipboard API needs a secure context; on a room's LAN address (plain
// http) fall back to selecting the text and the old copy command.
document.addEventListener('click', (ev) => {
  const btn = ev.target.closest && ev.target.closest('[data-copy]');
  if (!btn) return;
  const src = document.querySelector(btn.getAttribute('data-copy'));
  if (!src) return;
  const done = () => {
    btn.textContent = 'Copied';
    setTimeout(() => { btn.textContent = 'Copy'; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(src.textContent).then(done, () => {});
    return;
  }
  const range = document.createRange();
  range.selectNodeContents(src);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  try { if (document.execCommand('copy')) done(); } catch (_) { /* selected: the reader can copy by hand */ }
});

// Copy link: the link is the address at the click, without the projector
// view (the room opens the lab). Without the clipboard API (plain http on
// a room's LAN) the link is shown selected in a field beside the button,
// and the old copy command is tried; if it fails too, the reader copies
// the selection by hand, and Escape (or leaving the field) puts it away.
document.addEventListener('click', (ev) => {
  const btn = ev.target.closest && ev.target.closest('[data-copy-link]');
  if (!btn) return;
  const url = new URL(withView(location.href, false), location.href).href;
  const status = $('copy-link-status');
  const field = $('copy-link-field');
  const say = (msg) => {
    if (!status) return;
    status.textContent = msg;
    clearTimeout(say.timer);
    say.timer = setTimeout(() => { status.textContent = ''; }, 4000);
  };
  const fallback = () => {
    if (!field) return;
    field.value = url;
    field.hidden = false;
    field.focus();
    field.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch (_) { /* selected: copy by hand */ }
    say(ok ? 'Link copied (Esc to go on)' : 'Press Ctrl+C to copy the link, Esc to go on');
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(url).then(() => say('Link copied'), fallback);
  } else {
    fallback();
  }
});
document.addEventListener('focusout', (ev) => {
  if (ev.target.id === 'copy-link-field') ev.target.hidden = true;
});

// ---- The status, read out at most once a second ----
// The status line changes with every frame (16 times a second at 16×); a
// live region that busy is never finished being read. The words go to
// #announce instead (the page's own element, never the stream's), no
// more than once a second, and only when they changed: looked at after
// each patch the stream applies.

const announcer = { last: -Infinity, timer: 0, said: null };

function statusWords() {
  const st = $('status');
  if (!st) return '';
  // innerText: what the page shows (a projector hides where to answer).
  const part = (sel) => { const el = st.querySelector(sel); return el ? el.innerText.trim() : ''; };
  const words = [part('.clock'), part('.state')];
  if (!st.querySelector('.state.playing')) words.push(part('.summary'));
  return words.filter(Boolean).join('. ');
}

function announce() {
  const out = $('announce');
  if (!out) return;
  if (announcer.said === null) announcer.said = statusWords(); // the page as loaded is not news
  const wait = 1000 - (performance.now() - announcer.last);
  if (wait > 0) {
    if (!announcer.timer) announcer.timer = setTimeout(() => { announcer.timer = 0; announce(); }, wait);
    return;
  }
  const words = statusWords();
  if (!words || words === announcer.said) return;
  announcer.last = performance.now();
  announcer.said = words;
  out.textContent = words;
}

document.addEventListener('DOMContentLoaded', () => { if ($('announce')) announcer.said = statusWords(); });
document.addEventListener('datastar-fetch', (ev) => {
  if (ev.detail.type === 'datastar-patch-elements') queueMicrotask(announce);
});
