// outlierlab's own browser code, kept small: the server builds every chart
// option and every sentence; this file only hands options to ECharts,
// keeps the charts sized, and maps keys to the transport buttons.
'use strict';

// applyCharts is what the stream calls: {chartId: option}. Each chart has
// one ECharts instance for the page's life; setOption updates it in place,
// so nothing flickers or re-initialises. replace drops the old option
// (a new run may have other hosts); otherwise ECharts merges. heights
// ({chartId: px}) resizes boxes that follow the run (a lane per host).
window.applyCharts = function (options, replace, heights) {
  for (const id in options) {
    const el = document.getElementById(id);
    if (!el || !window.echarts) continue;
    if (heights && heights[id] && el.style.height !== heights[id] + 'px') {
      el.style.height = heights[id] + 'px';
      const old = echarts.getInstanceByDom(el);
      if (old) old.resize();
    }
    const chart = echarts.getInstanceByDom(el) || echarts.init(el, null, { renderer: 'canvas' });
    chart.setOption(options[id], { notMerge: !!replace, lazyUpdate: true });
  }
};

// Charts follow their box's size.
if (window.ResizeObserver) {
  const ro = new ResizeObserver((entries) => {
    for (const e of entries) {
      const chart = window.echarts && echarts.getInstanceByDom(e.target);
      if (chart) chart.resize();
    }
  });
  document.addEventListener('DOMContentLoaded', () => {
    document.querySelectorAll('.chart').forEach((el) => ro.observe(el));
  });
}

// Keyboard: space plays or pauses, → steps, ← steps back. Keys typed into
// a control keep their usual meaning (arrows move a focused slider, space
// presses a focused button).
document.addEventListener('keydown', (ev) => {
  if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const t = ev.target;
  const tag = t && t.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT' || (t && t.isContentEditable)) return;
  const inRange = tag === 'INPUT' && t.type === 'range';
  if (tag === 'INPUT' && !inRange) return;
  let id = '';
  if (ev.key === ' ' && tag !== 'BUTTON' && tag !== 'SUMMARY') id = 'btn-play';
  else if (ev.key === 'ArrowRight' && !inRange) id = 'btn-step';
  else if (ev.key === 'ArrowLeft' && !inRange) id = 'btn-back';
  const btn = id && document.getElementById(id);
  if (!btn) return;
  ev.preventDefault();
  btn.click();
});

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
