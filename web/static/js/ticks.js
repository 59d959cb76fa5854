// Time axes: a chart's time labels at round times and at the faults.
// Pure functions of an option and its box; fit.js calls withTimeTicks on
// every fit, chart.js compares two fits with sameTicks.
// ---- Time axes: labels at round times and at the faults ----
// A time axis is a category axis of the run's sweeps ("10 s", "20 s" …).
// ECharts' own choice (interval 'auto', or a number) labels every nth
// category counting from the first, so a 10 s run read 10, 40, 70 … and
// the presets' fault start, 30 s, was never labelled (issue 25). Here the
// labels (and the ticks, which follow them) fall on round times counted
// from 0 s: the smallest of roundMs that is a whole number of sweeps and
// leaves room between two labels (20 s is not one: it would skip 30 s);
// a run whose sweep divides none (7 s) gets every kth sweep from 0 s.
// Where a shaded fault begins (once the cursor reached it) is labelled
// too, and the round labels too close to it give way. The test is a
// function, which JSON cannot carry: it is added here, after the
// server's option, so the server's options and patches stay data.
const roundMs = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600].map((s) => s * 1000);

// timeMs is a time category's milliseconds ("12.5 s" → 12500), or NaN
// for a category that is not a time.
function timeMs(v) {
  const m = /^(\d+(?:\.\d+)?) s$/.exec(v !== null && typeof v === 'object' ? v.value : v);
  return m ? Math.round(parseFloat(m[1]) * 1000) : NaN;
}

// timesOf is a time axis's categories in ms, its sweep (the least gap)
// and its widest name, or null for an axis of something else (a sweep of
// settings); remembered by the data array, which patches keep while the
// run does.
const axisTimes = new WeakMap();
function timesOf(data) {
  if (!Array.isArray(data) || data.length < 2) return null;
  if (!axisTimes.has(data)) {
    const ms = data.map(timeMs);
    let step = Infinity;
    for (let i = 1; i < ms.length; i++) step = Math.min(step, ms[i] - ms[i - 1]);
    const widest = data.reduce((a, d) => (String(d).length > a.length ? String(d) : a), '');
    axisTimes.set(data, ms.every((t) => t >= 0) && step > 0 ? { ms, step, widest } : null);
  }
  return axisTimes.get(data);
}

// faultStarts are the categories where the option's shaded faults begin
// (the events series' mark areas: web/chart/chartmarks.go faultAreas).
function faultStarts(o) {
  const out = [];
  for (const s of [].concat(o.series || [])) {
    if (!s || s.name !== 'events' || !s.markArea) continue;
    for (const area of s.markArea.data || []) if (area && area[0] && area[0].xAxis != null) out.push(area[0].xAxis);
  }
  return out;
}

// ticksTest is the axisLabel.interval test: a multiple of step ms at
// least gap sweeps from every fault start, or a fault start; below index
// `below` only (the last sweep's label, centred on its band at the
// plot's end, would stick out of a narrow right margin, which clips it).
// One function a set of arguments, so that ECharts' label cache sees the
// same test again.
const ticksTests = new Map();
function ticksTest(step, gap, below, starts) {
  const key = [step, gap, below].concat(starts).join('/');
  if (!ticksTests.has(key)) {
    ticksTests.set(key, (i, v) => i < below && (starts.includes(i) || (timeMs(v) % step === 0 && starts.every((j) => Math.abs(i - j) >= gap))));
  }
  return ticksTests.get(key);
}

// textWidth is how wide text is in ECharts' type (sans-serif) at fs px,
// measured once a text and size (it is asked on every frame).
let measureCtx = null;
const widths = new Map();
function textWidth(text, fs) {
  const key = fs + '/' + text;
  if (!widths.has(key)) {
    measureCtx = measureCtx || document.createElement('canvas').getContext('2d');
    measureCtx.font = fs + 'px sans-serif';
    widths.set(key, measureCtx.measureText(text).width);
  }
  return widths.get(key);
}

// plotSpan is how wide the grid of an axis is in the box, and its right
// margin: as drawn last (fitTicks measured it), else estimated from the
// grid's margins and, with containLabel, the value axes' labels.
function plotSpan(el, o, gridIndex, fs) {
  const w = el.clientWidth || 600;
  const g = [].concat(o.grid || [])[gridIndex || 0] || {};
  const px = (v, d) => (typeof v === 'number' ? v : /^\d+(\.\d+)?$/.test(v) ? +v : /%$/.test(v) ? (w * parseFloat(v)) / 100 : d);
  const right = px(g.right, w / 10);
  let plot = +el.dataset.plotW || 0;
  if (!plot) {
    plot = w - px(g.left, w / 10) - right;
    if (g.containLabel) plot -= [].concat(o.yAxis || []).filter((a) => (a.gridIndex || 0) === (gridIndex || 0)).length * (2.6 * fs + 8);
  }
  return { plot: Math.max(plot, 40), right };
}

export function withTimeTicks(el, o) {
  const axes = [].concat(o.xAxis || []);
  if (!axes.some((a) => a && a.type === 'category' && timesOf(a.data))) {
    delete el.dataset.ticksW;
    return o;
  }
  const out = Object.assign({}, o);
  const faults = faultStarts(o);
  out.xAxis = axes.map((a) => {
    const t = a && a.type === 'category' && timesOf(a.data);
    if (!t) return a;
    const label = a.axisLabel || {};
    const fs = label.fontSize || 12;
    const span = plotSpan(el, o, a.gridIndex, fs);
    el.dataset.ticksW = String(Math.round(span.plot));
    const perSweep = span.plot / t.ms.length;
    const room = textWidth(t.widest, fs) + fs / 2; // a label and a gap half the type's size
    const round = roundMs.filter((s) => s % t.step === 0);
    const steps = round.length ? round : [1, 2, 3, 5, 10, 20, 50, 100].map((k) => k * t.step);
    const step = steps.find((s) => (s / t.step) * perSweep >= room) || steps[steps.length - 1];
    const below = (room - fs / 2) / 2 > perSweep / 2 + span.right - 2 ? t.ms.length - 1 : t.ms.length;
    const starts = faults.map((f) => a.data.indexOf(f)).filter((i) => i >= 0 && i < below);
    const test = ticksTest(step, Math.ceil(room / perSweep), below, starts);
    return Object.assign({}, a, { axisLabel: Object.assign({}, label, { interval: test }) });
  });
  return out;
}

// fitTicks measures the plot a chart's time labels were chosen for; when
// it is another width than the one supposed (containLabel's value labels

// sameTicks reports whether two fits of one option chose the same time
// labels: fitChart changes nothing else with the plot's width.
export function sameTicks(a, b) {
  const ax = [].concat(a.xAxis || []), bx = [].concat(b.xAxis || []);
  return ax.length === bx.length && ax.every((x, i) => (x && x.axisLabel && x.axisLabel.interval) === (bx[i] && bx[i].axisLabel && bx[i].axisLabel.interval));
}

