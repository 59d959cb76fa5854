// Picking the spotlight on the instructor's page (#room-bar.present): a
// host's lane, point, legend entry or table row, a drag across a chart's
// time axis, a log line (by pointer, or by keyboard along the log). Each
// pick is an olab-pick event ({host}, {from, to} in seconds, {log}) that
// the room bar's data-on posts to the room's spotlight address; nothing
// here talks to the server. Attendees' clicks pick nothing.
import { current, spotLabels } from './spot.js';

const picker = () => !!document.querySelector('#room-bar.present[data-spot-url]');

let picked = -Infinity; // when the last pick was made

function pick(detail) {
  picked = performance.now();
  document.dispatchEvent(new CustomEvent('olab-pick', { detail, bubbles: true }));
}

// The instructor sees what the room is shown, beside the hint.
document.addEventListener('olab-spot-shown', () => {
  const out = document.getElementById('room-spot-now');
  if (picker()) document.body.classList.add('spot-picker');
  if (!out) return;
  out.classList.remove('error');
  const sp = current();
  const parts = [];
  if (sp.host) parts.push(sp.host);
  if (sp.toMs) parts.push(sp.from.replace(/ s$/, '') + '–' + sp.to);
  out.textContent = parts.length ? 'Spotlight: ' + parts.join(', ') : '';
});

// A pick the server refused (or that did not reach it) is said beside
// the hint: an error of the room bar's request within a few seconds of a
// pick.
document.addEventListener('datastar-fetch', (ev) => {
  const d = ev.detail;
  if (!d.el || d.el.id !== 'room-bar' || (d.type !== 'error' && d.type !== 'retries-failed') || performance.now() - picked > 5000) return;
  const out = document.getElementById('room-spot-now');
  if (!out) return;
  out.textContent = 'The spotlight was refused.';
  out.classList.add('error');
});

// hosts are the run's hosts, as the swimlanes and the hosts table name them.
function hosts() {
  const out = new Set();
  const lanes = document.getElementById('chart-lanes');
  const y = lanes && lanes.option && [].concat(lanes.option.yAxis)[0];
  ((y && y.data) || []).forEach((l) => out.add(String(l).split(' ')[0]));
  document.querySelectorAll('#envoy-hosts tbody th code').forEach((c) => out.add(c.textContent.trim()));
  return out;
}

// at is where a pixel of a chart falls: the grid, the x label's index
// and, on a chart of lanes (a category y axis), the lane's host.
function at(c, x, y) {
  const grids = c.getOption().grid || [{}];
  for (let g = 0; g < grids.length; g++) {
    if (!c.containPixel({ gridIndex: g }, [x, y])) continue;
    const v = c.convertFromPixel({ gridIndex: g }, [x, y]);
    const labels = spotLabels(c, g);
    const i = Math.max(0, Math.min(labels.length - 1, Math.round(v[0])));
    const ya = [].concat(c.getOption().yAxis || []).find((a) => (a.gridIndex || 0) === g);
    let host = '';
    if (ya && ya.type === 'category' && ya.data && ya.data[Math.round(v[1])] !== undefined) host = String(ya.data[Math.round(v[1])]).split(' ')[0];
    return { g, i, labels, host };
  }
  return null;
}

// A chart's first drawing on the instructor's page makes it pick (once
// per instance). A press and release in one place is a click: a host's
// point or series (ECharts' click names it), else the lane under it. A
// drag of more than a few pixels across the time axis is a range,
// outlined while it is drawn.
const pickable = new WeakSet();
document.addEventListener('olab-drawn', (ev) => {
  const el = ev.target, c = el.chart;
  if (!c || pickable.has(c) || !picker()) return;
  pickable.add(c);
  document.body.classList.add('spot-picker');
  let down = null;
  let named = '';
  const band = document.createElement('div');
  band.className = 'spot-band';
  band.hidden = true;
  el.appendChild(band);
  const zr = c.getZr();
  c.on('click', (p) => { if (hosts().has(p.seriesName)) named = p.seriesName; });
  c.on('legendselectchanged', (p) => {
    if (!hosts().has(p.name)) return;
    c.dispatchAction({ type: 'legendSelect', name: p.name }); // a pick, not a hide
    pick({ host: p.name });
  });
  zr.on('mousedown', (e) => {
    const a = at(c, e.offsetX, e.offsetY);
    down = a && { at: a, x: e.offsetX, y: e.offsetY };
    named = '';
  });
  zr.on('mousemove', (e) => {
    if (!down || Math.abs(e.offsetX - down.x) < 6) { band.hidden = true; return; }
    band.hidden = false;
    band.style.left = Math.min(down.x, e.offsetX) + 'px';
    band.style.width = Math.abs(e.offsetX - down.x) + 'px';
  });
  zr.on('mouseup', (e) => {
    const d = down;
    down = null;
    band.hidden = true;
    if (!d) return;
    const end = at(c, e.offsetX, e.offsetY);
    if (Math.abs(e.offsetX - d.x) >= 6 && end && end.g === d.at.g && end.i !== d.at.i) {
      const [a, b] = [d.at.i, end.i].sort((m, n) => m - n);
      pick({ from: parseFloat(d.at.labels[a]), to: parseFloat(d.at.labels[b]) });
      return;
    }
    // ECharts' click comes after the release: let it name the series.
    setTimeout(() => {
      const host = named || (hosts().has(d.at.host) ? d.at.host : '');
      if (host) pick({ host });
    }, 0);
  });
});

// A log line, or a host's row in Envoy's hosts table; a click that ends
// a selection (text copied from the log) picks nothing.
document.addEventListener('click', (ev) => {
  if (!ev.target.closest || !picker() || String(getSelection()).trim()) return;
  const li = ev.target.closest('.log-list > li.entry[id]');
  if (li) { pick({ log: li.id }); return; }
  const row = ev.target.closest('#envoy-hosts tbody tr');
  const name = row && row.querySelector('th code');
  if (name) pick({ host: name.textContent.trim() });
});

// By keyboard: the log's box is one tab stop (the server renders every
// line focusable, none a stop); ↓ and ↑ move along its lines from the
// box or a line, Home and End to the newest and oldest, and Enter
// spotlights the focused line, as a click does. The lab's own keys are
// not taken there.
document.addEventListener('keydown', (ev) => {
  const box = ev.target.closest && ev.target.closest('.log');
  if (!box || !picker() || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const li = ev.target.closest('.log-list > li.entry[id]');
  const lines = [...box.querySelectorAll('.log-list > li.entry[id]')].filter((l) => l.offsetParent !== null);
  const i = li ? lines.indexOf(li) : -1;
  let to = -1;
  switch (ev.key) {
    case 'ArrowDown': to = Math.min(i + 1, lines.length - 1); break;
    case 'ArrowUp': to = Math.max(i - 1, 0); break;
    case 'Home': to = 0; break;
    case 'End': to = lines.length - 1; break;
    case 'Enter': if (!li) return; pick({ log: li.id }); break;
    default: return;
  }
  ev.preventDefault();
  ev.stopImmediatePropagation();
  if (to >= 0 && lines[to]) lines[to].focus();
}, true);
