// A workshop's spotlight (web/room/spotlight.go): the instructor points at
// a host, a time range or a decision-log line, and every page of the room
// shows it. The room's state carries it; the stream patches the spot
// signal, whose effect (room.templ) dispatches olab-spot with it. Here
// every chart draws it (a shaded range, the host emphasised) and the
// log's lines it speaks of are marked by a stylesheet of their own, so
// that the lines the stream sends are never rewritten; then the
// instructor's picks (below).

const spot = { cur: {}, scrolled: '' };
const drawn = new WeakMap(); // chart → whether its spotlight draws something

// spot.cur is the spotlight shown: {host, from, to} as the charts name
// them (x-axis labels "40 s"), fromMs and toMs the range for the log, log
// the id of the line picked; empty strings and zeros for none.

document.addEventListener('olab-spot', (ev) => {
  const sp = ev.detail || {};
  spot.cur = sp;
  document.body.dataset.spot = (sp.host || '') + '|' + (sp.from || '') + '|' + (sp.to || '');
  document.body.classList.add('in-room');
  document.querySelectorAll('olab-chart').forEach((el) => drawSpot(el));
  markLog();
  document.dispatchEvent(new CustomEvent('olab-spot-shown'));
});

// A chart drawn from scratch has lost its spotlight: it is drawn again,
// so that the spotlight outlives the frames that follow it.
document.addEventListener('olab-drawn', (ev) => {
  if (ev.detail.fresh) drawn.delete(ev.target);
  if (ev.detail.replace) drawSpot(ev.target);
});

// The stream replaces and prepends log lines as the room plays: which of
// them the spotlight speaks of is worked out again once a patch is in
// (Datastar applies it in its own listener of the same event, before the
// microtask).
document.addEventListener('datastar-fetch', (ev) => {
  if (ev.detail.type === 'datastar-patch-elements' && spotOn(spot.cur)) queueMicrotask(markLog);
});

const spotKey = (sp) => [sp.host, sp.fromMs, sp.toMs, sp.log].join('|');
const spotOn = (sp) => !!(sp && (sp.host || sp.toMs || sp.log));

// drawSpot draws the spotlight on one chart: the time range shaded on a
// series of its own, the host emphasised (its series highlighted; on a
// chart of lanes, its lane banded and its label bold). The range's ends
// are x-axis labels; one the axis lacks (0 s, before the first sweep) is
// its first label. The lane is named by its index, which stays while the
// labels change ("h5 ×2").
function drawSpot(el) {
  const sp = spot.cur;
  const c = el.chart;
  if (!c || !document.body.dataset.spot) return;
  // A chart that shows no spotlight, while the room shows none, is left
  // alone: every follower's chart was given (and drew at once) an empty
  // one on each of the instructor's moves (issue 26).
  const on = !!(sp.host || sp.from);
  if (!on && !drawn.get(el)) return;
  drawn.set(el, on);
  try {
    const labels = spotLabels(c, 0);
    const at = (l) => (labels.length && labels.indexOf(l) < 0 ? labels[0] : l);
    const lane = spotLane(c, sp.host);
    const ys = [].concat(c.getOption().yAxis || []);
    c.setOption({
      series: [{ id: 'room-spot', type: 'line', data: [], silent: true, z: 0,
        markArea: { silent: true, itemStyle: { color: 'rgba(230,159,0,0.28)', borderColor: '#e69f00', borderWidth: 1 },
          data: sp.from ? [[{ xAxis: at(sp.from) }, { xAxis: at(sp.to) }]] : [] },
        markLine: { silent: true, z: 0, symbol: ['none', 'none'], label: { show: false }, animation: false,
          lineStyle: { type: 'solid', width: lane ? lane.px : 1, color: 'rgba(230,159,0,0.28)' },
          data: lane ? [{ yAxis: lane.i }] : [] } }],
      yAxis: ys.map((a) => (a.type === 'category' ? { axisLabel: { formatter: laneLabel, rich: { spot: { fontWeight: 'bold', color: '#8a4b00' } } } } : {})),
    });
    c.dispatchAction({ type: 'downplay' });
    if (sp.host) c.dispatchAction({ type: 'highlight', seriesName: sp.host });
  } catch (e) { /* a chart without a time axis (none today) keeps no spotlight */ }
}

// spotLane is the spotlit host's lane on a chart of lanes (a category y
// axis): its index and its height in pixels.
function spotLane(c, host) {
  const y = [].concat(c.getOption().yAxis || [])[0];
  if (!host || !y || y.type !== 'category' || !y.data) return null;
  const i = y.data.findIndex((l) => String(l).split(' ')[0] === host);
  if (i < 0) return null;
  const step = y.data.length > 1 ? Math.abs(c.convertToPixel({ yAxisIndex: 0 }, 1) - c.convertToPixel({ yAxisIndex: 0 }, 0)) : 20;
  return { i, px: Math.max(4, Math.round(step * 0.9)) };
}

// laneLabel is a lane's label, in bold when it is the spotlit host's.
function laneLabel(v) {
  const sp = spot.cur;
  return sp.host && String(v).split(' ')[0] === sp.host ? '{spot|' + v + '}' : v;
}

// spotLabels are the time labels of the x axis of grid g.
function spotLabels(c, g) {
  const axes = [].concat(c.getOption().xAxis || []);
  const a = axes.find((x) => (x.gridIndex || 0) === g) || axes[0];
  return (a && a.data) || [];
}

// markLog marks the log's lines the spotlight speaks of: the line picked,
// and every line of its host (if it names one) in its range (if it has
// one); a line at t speaks of the interval that ended at t, so it is in
// the range when fromMs < t ≤ toMs (a folded run when any of its
// intervals is). The marks are a stylesheet naming the lines, not a
// class on them: a line the stream sends again keeps its mark. The newest visible
// one is scrolled into view inside the log's own box, once per spotlight:
// the page itself does not move.
function markLog() {
  const sp = spot.cur;
  const on = spotOn(sp);
  const hits = on ? [...document.querySelectorAll('.log-list > li.entry')].filter((li) => hitBy(li, sp)) : [];
  let style = document.getElementById('olab-spot-lines');
  if (!style) {
    style = document.createElement('style');
    style.id = 'olab-spot-lines';
    document.head.appendChild(style);
  }
  const css = hits.length ? hits.map(lineSelector).join(',\n') + ' {' + spotLook + '}' : '';
  if (style.textContent !== css) style.textContent = css;
  if (!on) { spot.scrolled = ''; return; }
  const first = hits.find((li) => li.offsetParent !== null);
  if (!first || spot.scrolled === spotKey(sp)) return;
  spot.scrolled = spotKey(sp);
  const box = first.closest('.log');
  if (!box) return;
  const top = first.getBoundingClientRect().top - box.getBoundingClientRect().top;
  if (top < 0 || top + first.offsetHeight > box.clientHeight) box.scrollTop += top - 8;
}

// spotLook is a marked line's look: an outline and a bar, not only a
// colour; --spot names the mark for whoever reads the page's style.
const spotLook = ' --spot: 1; background: #fff3d6; box-shadow: inset 4px 0 0 #e69f00; outline: 1px solid #e69f00; outline-offset: -1px; ';

// lineSelector names one log line: by its id, or (a line without one)
// by what it speaks of.
function lineSelector(li) {
  if (li.id) return '.log-list > li#' + CSS.escape(li.id);
  const d = li.dataset;
  const q = (k, v) => '[' + k + '="' + CSS.escape(v) + '"]';
  return '.log-list > li.entry' + q('data-t-ms', d.tMs || '') +
    (d.tFromMs ? q('data-t-from-ms', d.tFromMs) : ':not([data-t-from-ms])') + (d.host ? q('data-host', d.host) : ':not([data-host])');
}

function hitBy(li, sp) {
  if (sp.log && li.id === sp.log) return true;
  if (sp.host && li.dataset.host !== sp.host) return false;
  if (sp.toMs) {
    const t = Number(li.dataset.tMs);
    const from = li.dataset.tFromMs ? Number(li.dataset.tFromMs) : t;
    if (!(t > sp.fromMs && from <= sp.toMs)) return false;
  }
  return true;
}

// ---- Picking the spotlight ----
// On the instructor's page (#room-bar.present): a host's lane, point,
// legend entry or table row, a drag across a chart's time axis, a log
// line (by pointer, or by keyboard along the log). Each pick is an
// olab-pick event ({host}, {from, to} in seconds, {log}) that the room
// bar's data-on posts to the room's spotlight address; nothing
// here talks to the server. Attendees' clicks pick nothing.

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
  const sp = spot.cur;
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
