// outlierlab's own browser code, kept small: the server builds every chart
// option and every sentence, and decides every lesson step; this file only
// hands options to ECharts, keeps the charts sized, maps keys to the
// transport buttons, and keeps a learner's lesson progress in this browser.
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

// Copy link: the stream keeps the address bar on the tab's permalink
// (inputs plus cursor), so the link is location.href at the click. Without
// the clipboard API (plain http on a room's LAN) the link is shown selected
// in a field beside the button, and the old copy command is tried; if it
// fails too, the reader copies the selection by hand.
document.addEventListener('click', (ev) => {
  const btn = ev.target.closest && ev.target.closest('[data-copy-link]');
  if (!btn) return;
  const url = location.href;
  const status = document.getElementById('copy-link-status');
  const field = document.getElementById('copy-link-field');
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
    say(ok ? 'Link copied' : 'Press Ctrl+C to copy the link');
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

// ---- Lessons: progress kept in this browser only ----
// localStorage["outlierlab.progress"] = {lessonId: {steps: {stepId: true},
// predict: choice, quiz: {questionIndex: choice}, right: {questionIndex:
// bool}}}. The server never sees it; it only decides, run by run, whether
// a step's check holds now. A lesson is done when every step is; the quiz
// is a score beside it, never "done".
const progress = {
  key: 'outlierlab.progress',
  all() {
    try { return JSON.parse(localStorage.getItem(this.key)) || {}; } catch (_) { return {}; }
  },
  lesson(id) {
    const p = this.all()[id] || {};
    p.steps = p.steps || {};
    p.quiz = p.quiz || {};
    p.right = p.right || {};
    return p;
  },
  update(id, fn) {
    const all = this.all();
    const p = this.lesson(id);
    fn(p);
    all[id] = p;
    try { localStorage.setItem(this.key, JSON.stringify(all)); } catch (_) { /* private mode: progress is not kept */ }
  },
};

// A prediction answered on an earlier visit: tell the server with the first
// request (the "predicted" signal), so playback does not pause for it again.
// This runs before Datastar reads data-signals (deferred scripts run in
// document order, and the Datastar module comes after this file).
(function restorePrediction() {
  const page = document.querySelector('.lesson-page');
  const lab = page && page.querySelector('.lab[data-signals]');
  if (!lab || progress.lesson(page.dataset.lesson).predict === undefined) return;
  try {
    const sig = JSON.parse(lab.getAttribute('data-signals'));
    sig.predicted = true;
    lab.setAttribute('data-signals', JSON.stringify(sig));
  } catch (_) { /* leave the page as served */ }
})();

// answer shows what a choice means: the choice picked, the right one, the
// verdict and the explanation (a prediction's reveal, a quiz answer).
function answer(box, choice) {
  const right = Number(box.dataset.answer);
  box.querySelectorAll('.choice').forEach((b) => {
    const i = Number(b.dataset.choice);
    b.classList.toggle('picked', i === choice);
    b.classList.toggle('right', i === right);
    b.classList.toggle('wrong', i === choice && i !== right);
    b.setAttribute('aria-pressed', i === choice ? 'true' : 'false');
  });
  const letter = String.fromCharCode(65 + right);
  const verdict = box.querySelector('.verdict');
  if (verdict) verdict.textContent = choice === right ? 'Right.' : 'Not quite: the answer is ' + letter + '.';
  box.classList.add('answered');
  const reveal = box.querySelector('.reveal');
  if (reveal) reveal.hidden = false;
  // The prose kept back until the prediction is answered.
  if (box.dataset.kind === 'predict') {
    document.querySelectorAll('.after-prediction[hidden]').forEach((el) => { el.hidden = false; });
  }
}

document.addEventListener('click', (ev) => {
  const btn = ev.target.closest && ev.target.closest('.choice[data-choice]');
  const box = btn && btn.closest('[data-kind]');
  const page = document.querySelector('.lesson-page');
  if (!box || !page) return;
  const choice = Number(btn.dataset.choice);
  answer(box, choice);
  progress.update(page.dataset.lesson, (p) => {
    if (box.dataset.kind === 'predict') p.predict = choice;
    else {
      p.quiz[box.dataset.index] = choice;
      p.right[box.dataset.index] = choice === Number(box.dataset.answer);
    }
  });
  showLessonProgress();
});

// Steps: the stream re-renders a step's status; once a step is done it is
// remembered, and shown as done before on later visits.
function noteDoneSteps() {
  const page = document.querySelector('.lesson-page');
  if (!page) return;
  const done = [...page.querySelectorAll('.step-status[data-done="true"]')].map((el) => el.id.replace(/^st-/, ''));
  const p = progress.lesson(page.dataset.lesson);
  if (done.some((id) => !p.steps[id])) {
    progress.update(page.dataset.lesson, (q) => done.forEach((id) => { q.steps[id] = true; }));
  }
  showLessonProgress();
}

// progressWords says how far a lesson is: "✓ done" once every step is
// done, else how many are; the quiz as a score beside it ("quiz 2/3"),
// once a question is answered. complete is every step done.
function progressWords(p, ids, quizTotal) {
  const n = ids.filter((id) => p.steps && p.steps[id]).length;
  const complete = ids.length > 0 && n === ids.length;
  let words = complete ? '✓ done' : n + ' of ' + ids.length + ' steps done';
  const answered = Object.keys(p.quiz || {}).length;
  if (quizTotal > 0 && answered > 0) {
    const right = Object.values(p.right || {}).filter(Boolean).length;
    words += ' · quiz ' + right + '/' + quizTotal;
  }
  return { words, complete, started: n > 0 || answered > 0 };
}

function showLessonProgress() {
  const page = document.querySelector('.lesson-page');
  if (!page) return;
  const p = progress.lesson(page.dataset.lesson);
  const ids = page.dataset.steps.split(' ').filter(Boolean);
  page.querySelectorAll('.step').forEach((li) => li.classList.toggle('was-done', !!p.steps[li.dataset.step]));
  const note = page.querySelector('[data-lesson-progress]');
  if (note) note.textContent = progressWords(p, ids, Number(page.dataset.quiz)).words;
}

document.addEventListener('DOMContentLoaded', () => {
  const page = document.querySelector('.lesson-page');
  if (page) {
    const p = progress.lesson(page.dataset.lesson);
    const predict = page.querySelector('[data-kind="predict"]');
    if (predict && p.predict !== undefined) answer(predict, p.predict);
    page.querySelectorAll('[data-kind="quiz"]').forEach((q) => {
      if (p.quiz[q.dataset.index] !== undefined) answer(q, p.quiz[q.dataset.index]);
    });
    const steps = page.querySelector('.steps');
    if (steps && window.MutationObserver) {
      new MutationObserver(noteDoneSteps).observe(steps, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-done'] });
    }
    noteDoneSteps();
  }

  // The course list: each lesson's progress in words.
  const all = progress.all();
  document.querySelectorAll('.lesson-card[data-lesson]').forEach((card) => {
    const p = all[card.dataset.lesson];
    const out = card.querySelector('[data-progress]');
    if (!p || !out) return;
    const ids = card.dataset.steps.split(' ').filter(Boolean);
    const w = progressWords(p, ids, Number(card.dataset.quiz));
    out.textContent = w.words;
    card.classList.toggle('complete', w.complete);
    card.classList.toggle('started', !w.complete && w.started);
  });
});
