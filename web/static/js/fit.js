// A chart's option fitted to its box: the server's option is data, the
// same for every box; here the projector's large type, a phone's legend on
// top, a band legend (the handout) and the time labels (below) are
// fitted to the box the chart is drawn in. chart.js calls fitChart on
// every option it is given and again when its box changes, and compares
// two fits' time labels with sameTicks.
// sameShape reports whether merging option b into a chart holding a
// (ECharts' setOption without notMerge) leaves what b alone would. A merge
// goes down through pairs of objects and overwrites everything else whole
// (arrays, null, numbers), so it is exact unless an object of a has a key
// b lacks (it would stay). The top level's arrays (series, axes, grids)
// are merged element by element, a series found by its name: they must
// have the same length, names, ids and types.
export function sameShape(a, b, top) {
  if (top && (Array.isArray(a) || Array.isArray(b))) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      const x = a[i], y = b[i];
      if (!isObject(x) || !isObject(y)) {
        if (isObject(x) || isObject(y)) return false;
        continue; // a colour, a string: overwritten
      }
      if (x.name !== y.name || x.id !== y.id || x.type !== y.type || !sameShape(x, y, false)) return false;
    }
    return true;
  }
  if (!isObject(a) || !isObject(b)) return true; // overwritten whole
  for (const k in a) {
    if (!(k in b) || !sameShape(a[k], b[k], top && Array.isArray(a[k]))) return false;
  }
  return true;
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// chartMode is how a chart's box asks for its text: projector (large
// type for a room), narrow (a phone: the legend on top, small margins) or
// '' (the server's layout as sent).
export function chartMode(el) {
  if (el.closest('.projector')) return 'projector';
  return el.clientWidth > 0 && el.clientWidth < 560 ? 'narrow' : '';
}

// projectorType is the type size in px of a projector view's charts: the
// stylesheet's --chart-type, which follows the window (18 on a
// projector's own screen, less where the view shares a small window
// between six charts: css/lesson.css).
export function projectorType(el) {
  return parseFloat(getComputedStyle(el).getPropertyValue('--chart-type')) || 18;
}

// fitChart is the option for the chart's box: in the projector view every
// axis label and legend entry is 18 px or larger, read from the back of a
// room; on a narrow box the legend moves from the right (where it took 40%
// of the width) to a scrolling line on top. The option sent is not changed.
export function fitChart(el, o) {
  // go-echarts puts an empty toolbox ({}: no tools, nothing drawn) in every
  // option; the lab's ECharts bundle has no toolbox component
  // (web/assets/echarts-lab.js), so it is left out rather than refused.
  if (o.toolbox) {
    o = Object.assign({}, o);
    delete o.toolbox;
  }
  return withTimeTicks(el, fitBox(el, o));
}

// fitBox is the option with its type, legend and grid fitted to the box's
// mode.
function fitBox(el, o) {
  const mode = el.dataset.mode || '';
  const band = bandLegend(el);
  if (!mode && !band) return o;
  // A band's type is the server's on a wide box (12 px at least).
  const fs = mode === 'projector' ? +el.dataset.fs || 18 : mode === 'narrow' ? 12 : Math.max(12, (o.legend && o.legend.textStyle && o.legend.textStyle.fontSize) || 12);
  const out = Object.assign({}, o);
  const axes = (list) => [].concat(list || []).map((a) => Object.assign({}, a, { axisLabel: Object.assign({}, a.axisLabel, { fontSize: fs }) }));
  if (mode) {
    out.xAxis = axes(o.xAxis);
    out.yAxis = axes(o.yAxis);
  }
  const legend = o.legend && o.legend.show !== false;
  // A chart of stacked plots (the Envoy/gRPC strip) keeps its grids, which
  // its axes and titles are placed against, and its legend beside them;
  // only the type grows. The others get one grid fitted to the box and the
  // legend on top.
  const grids = [].concat(o.grid || []);
  // On a projector no legend is paged (issue 25: "threshold", "mean" and
  // the hosts were on a second page nobody turns): it wraps, and the plot
  // starts under the lines it took (fitLegend measures them). Its text is
  // 4 px below the box's top, where 18 px type at 0 was cut. A box with
  // its legend in a band (bandLegend) lays it out the same way.
  // A legend the server sends as 'plain' (a few named lines a lesson
  // reads by name: "watch the active gauge") is never paged either.
  const projector = mode === 'projector';
  const measured = projector || band || wrapsLegend(o);
  const legendH = measured ? +(el.dataset.legendH || 0) : 0;
  if (grids.length > 1) {
    if (projector) return fitStrip(el, o, out, fs, legendH);
    if (o.legend) out.legend = [].concat(o.legend).map((l) => Object.assign({}, l, { textStyle: Object.assign({}, l.textStyle, { fontSize: fs }) }));
    return out;
  }
  if (o.legend) {
    out.legend = Object.assign({}, o.legend, {
      type: measured ? 'plain' : 'scroll', orient: 'horizontal', top: 4, left: 0, right: 0, bottom: 'auto',
      // A paged legend clips its line to the item's height: 8 px cut the
      // top off 12 px text on a phone. A projector's small window packs
      // its legend closer, so that it takes fewer lines.
      itemWidth: fs >= 16 ? 24 : 16, itemHeight: 12, itemGap: fs >= 16 ? 10 : 6,
      pageIconSize: 12,
      textStyle: Object.assign({}, o.legend.textStyle, { fontSize: fs }),
    });
  }
  // A band's plot starts lower by half a value label (centred on the
  // plot's top line, it touched the legend's last line).
  const top = legend ? (legendH ? legendH + 10 + (band ? bandGap : 0) : fs + 22) : 10;
  out.grid = [{ left: 16, right: 12, top, bottom: 6, containLabel: true }];
  // A projector's small window leaves a plot a few lines of type tall:
  // where ECharts' six or so value labels would touch, three (50, 75,
  // 100%: a fixed range is halved, ECharts' nice steps put 90 by 100);
  // where the hosts' lanes are thinner than the type, the hosts' names
  // as large as the lanes (12 px at least), past that every kth host, so
  // that no labels overlap.
  // Every key is set either way: a refit is merged into the chart, where
  // a key left out would keep the last fit's value. The box's height is
  // kept so that a new height fits it again (refitCharts).
  const plotH = Math.max(1, (el.clientHeight || 240) - top - 6 - (fs + 10));
  if (projector) {
    el.dataset.fitH = String(el.clientHeight);
    out.yAxis = out.yAxis.map((a) => {
      if (a.type === 'category') {
        const n = Math.max(1, [].concat(a.data || []).length);
        const size = Math.max(12, Math.min(fs, Math.floor(plotH / n)));
        const k = Math.max(0, Math.ceil((size * n) / plotH) - 1);
        return Object.assign({}, a, { axisLabel: Object.assign({}, a.axisLabel, { fontSize: size, interval: k }) });
      }
      const crowded = plotH < 6 * (fs + 4);
      // A bound may come as a number or its string ("50"), or a word.
      const lo = a.min == null || a.min === '' ? NaN : +a.min, hi = a.max == null || a.max === '' ? NaN : +a.max;
      const fixed = hi > lo; // false for NaN
      return Object.assign({}, a, { splitNumber: crowded ? 2 : 5, interval: crowded && fixed ? (hi - lo) / 2 : null });
    });
  }
  return out;
}


// fitStrip fits a chart of stacked plots (the Envoy/gRPC strip, laid out
// in pixels for the lab's box: web/chart_compare.go) to a projector's
// box: the plots share its height, the titles are cut to its width, the
// axes' type is 18 px, and the legend wraps under the plots.
function fitStrip(el, o, out, fs, legendH) {
  const grids = [].concat(o.grid);
  const h = el.clientHeight || 240, w = el.clientWidth || 300;
  const title = fs + 8, xlab = fs + 10, gap = 6;
  const legendRoom = o.legend ? (legendH || fs + 8) + 6 : 0;
  const plot = Math.max(16, Math.floor((h - grids.length * (title + gap) - xlab - legendRoom) / grids.length));
  const top = (i) => title + i * (plot + gap + title);
  out.grid = grids.map((g, i) => Object.assign({}, g, { left: 4 * fs, right: 8, top: top(i), height: plot }));
  // A host named on every lane only where the lanes are as tall as the
  // type; else every second (third…) lane, so that no two labels overlap
  // (ECharts' 'auto' let them overlap on an empty strip).
  out.yAxis = out.yAxis.map((a) => Object.assign({}, a, { axisLabel: Object.assign({}, a.axisLabel,
    { interval: Math.max(0, Math.ceil((fs + 2) * [].concat(a.data || []).length / plot) - 1) }) }));
  out.title = [].concat(o.title || []).map((t, i) => Object.assign({}, t, { left: 4 * fs, top: top(i) - title + 2,
    textStyle: Object.assign({}, t.textStyle, { fontSize: fs - 2, width: w - 4 * fs - 8, overflow: 'truncate' }) }));
  if (o.legend) {
    out.legend = [].concat(o.legend).map((l) => Object.assign({}, l, { type: 'plain', orient: 'horizontal', left: 0, right: 0, top: 'auto', bottom: 2,
      textStyle: Object.assign({}, l.textStyle, { fontSize: fs }) }));
  }
  return out;
}

// wrapsLegend reports an option whose legend must never be paged: the
// server sent it 'plain' (web/chart wrapLegend).
export function wrapsLegend(o) {
  return !!(o && o.legend && !Array.isArray(o.legend) && o.legend.type === 'plain');
}

// bandLegend reports whether the box lays its chart's legend in a band of
// its own above the plot, at every width (data-legend="band": the
// handout). A column beside the plot (the lab's) is as wide and as tall
// as the type's metrics make it: where a line of text is taller (a font
// with CJK glyphs: ECharts measures a line by "国") it wrapped into a
// second column over the plot. A band wraps, unpaged (paper shows no
// second page), the plot starts under the lines it took, measured
// (fitLegend), and the box grows by them, so that the plot keeps the
// height the server gave the box.
export function bandLegend(el) {
  return el.dataset.legend === 'band';
}

// bandHeight is a band box's height once its legend is measured: the
// height the server gave it (kept in data-plot-box) and the legend's
// lines; '' before, and for another box.
export function bandHeight(el) {
  const h = +el.dataset.legendH || 0;
  if (!bandLegend(el) || !el.dataset.plotBox || !h) return '';
  return +el.dataset.plotBox + h + bandGap + 'px';
}

// bandGap is the room between a band's legend and its plot's top line
// over the projector's: half a value label.
const bandGap = 8;

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

function withTimeTicks(el, o) {
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

