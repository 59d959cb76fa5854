// Lessons: progress kept in this browser only, and what it shows.
// localStorage["outlierlab.progress"] = {lessonId: {steps: {stepId: true},
// predict: choice, quiz: {questionIndex: choice}, right: {questionIndex:
// bool}}}. The server never sees it; it only decides, run by run, whether
// a step's check holds now (and renders "done before" beside "not yet":
// the step's was-done class, the page's own, picks which one shows). A
// lesson is done when every step is; the quiz is a score beside it.

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

const lessonPage = () => document.querySelector('.lesson-page');

// A prediction answered on an earlier visit: tell the server with the first
// request (the "predicted" signal), so playback does not pause for it again.
// This runs before Datastar reads data-signals (modules run in document
// order, and the Datastar module comes after this one).
(function restorePrediction() {
  const page = lessonPage();
  const lab = page && page.querySelector('.lab[data-signals]');
  if (!lab || progress.lesson(page.dataset.lesson).predict === undefined) return;
  try {
    const sig = JSON.parse(lab.getAttribute('data-signals'));
    sig.predicted = true;
    lab.setAttribute('data-signals', JSON.stringify(sig));
  } catch (_) { /* leave the page as served */ }
})();

// olab-held is the prediction box's effect on the held signal (lesson.templ
// predictBox). When the run stops at the pause while the page is open
// (played or stepped into it here, or by the room's instructor) the box
// comes into view and the focus moves to its first choice (a keyboard
// user was 30 Tabs away, on Play); not when the page opens on a run
// already held there: a page opens at its top, where its transport is
// (issue 33). The stream's first redraw clears the drawn signal and
// brings the held state the page opens on.
document.addEventListener('olab-held', (ev) => {
  const el = ev.target, { held, drawn } = ev.detail;
  if (drawn !== '') return; // the page as served, before its first redraw
  const was = el.dataset.held;
  el.dataset.held = held ? 'yes' : 'no';
  if (!held || was !== 'no') return;
  // The question's step becomes the current one, under its chart; on a
  // short window the page goes on down to the first choice, if need be.
  const li = el.closest('.step[data-step]');
  setNow(li && li.dataset.step, () => {
    const first = el.querySelector('.choice');
    if (!first || el.classList.contains('answered')) return;
    first.scrollIntoView({ block: 'nearest' });
    first.focus({ preventScroll: true });
  });
});

// The current step (lab.stepFocus): the one the lab shows, with its
// settings and charts, its key chart first. setNow makes step id current
// (the try box's olab-now sets the page's _now signal) and, once the page
// has drawn it, brings it into view, then calls then: its key chart just
// under the transport, which is sticky at the top, and the step under the
// chart (css/lesson.css).
function setNow(id, then) {
  const box = document.getElementById('try');
  const li = id && document.getElementById('step-' + id);
  if (!box || !li) return;
  box.dispatchEvent(new CustomEvent('olab-now', { detail: id }));
  if (!then) return;
  requestAnimationFrame(() => {
    const chart = document.getElementById('fig-' + li.dataset.key);
    const bar = document.querySelector('.lesson-lab .transport');
    if (chart && bar && chart.offsetHeight > 0) {
      window.scrollBy({ top: chart.getBoundingClientRect().top - bar.offsetHeight - 6, behavior: 'instant' });
    }
    then(li);
  });
}

// firstToDo is the step to do now: the first neither done nor done
// before, else the last.
function firstToDo() {
  const steps = [...document.querySelectorAll('.lesson-page .steps > .step')];
  const now = steps.find((li) => !li.classList.contains('was-done') && !li.querySelector('.step-status.done')) || steps[steps.length - 1];
  return now && now.dataset.step;
}

// A step's button makes it current; the c key (js/keys.js) the step to
// do now, and gives it the focus (its text is read out).
document.addEventListener('click', (ev) => {
  const b = ev.target.closest && ev.target.closest('.stepper [data-now]');
  if (b) setNow(b.dataset.now, () => {});
});
document.addEventListener('olab-current', () => setNow(firstToDo(), (li) => li.focus({ preventScroll: true })));
// A step's Load button sits under its text (and its prediction), below
// the key chart on a short screen: pressed, the key chart comes back
// under the transport, where the run it loads plays (issue 38: one idea
// on one screen; the learner scrolled down to press it).
// Once the loaded run is drawn, that is: the redraw re-lays the page out
// under the scroll position, which the browser's scroll anchoring moves.
let loading = null;
document.addEventListener('click', (ev) => {
  const li = ev.target.closest && ev.target.closest('.steps > .step[data-step]');
  if (li && ev.target.closest('button.load')) loading = { id: li.dataset.step, at: performance.now() };
});
document.addEventListener('olab-drawn', (ev) => {
  if (!loading || !ev.detail.replace) return;
  const { id, at } = loading;
  loading = null;
  if (performance.now() - at < 5000) setNow(id, () => {}); // not a later redraw's
});

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
    b.setAttribute('aria-disabled', 'true');
  });
  const verdict = box.querySelector('.verdict');
  if (verdict) verdict.textContent = choice === right ? 'Right.' : 'Not quite: the answer is ' + String.fromCharCode(65 + right) + '.';
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
  const page = lessonPage();
  if (!box || !page) return;
  // The first answer stands: once answered, another click changes
  // nothing, so a wrong guess cannot be turned into a right one.
  if (box.classList.contains('answered')) return;
  const choice = Number(btn.dataset.choice);
  answer(box, choice);
  progress.update(page.dataset.lesson, (p) => {
    if (box.dataset.kind === 'predict') p.predict = choice;
    else {
      p.quiz[box.dataset.index] = choice;
      p.right[box.dataset.index] = choice === Number(box.dataset.answer);
    }
  });
  showProgress();
});

// olab-step-done comes from a step's status each time the server renders
// it done (its data-init, lesson.templ StepStatus): remembered, and shown
// as done before on later visits.
document.addEventListener('olab-step-done', (ev) => {
  const page = lessonPage();
  const li = ev.target.closest && ev.target.closest('.step[data-step]');
  if (!page || !li) return;
  const id = li.dataset.step;
  // Its button, even where storage is refused (private mode).
  const b = page.querySelector('.stepper [data-now="' + id + '"]');
  if (b) markDone(b);
  if (!progress.lesson(page.dataset.lesson).steps[id]) progress.update(page.dataset.lesson, (q) => { q.steps[id] = true; });
  showProgress();
});

// markDone shows a step's button done: its ✓ (css/lesson.css) and its
// name, the words the server renders for a step done as the page is
// served (lesson.templ stepButtonName). A step stays done once done, as
// its was-done status does.
function markDone(b) {
  b.classList.add('done');
  b.setAttribute('aria-label', 'Step ' + b.firstChild.textContent + ', done');
}

// progressWords says how far a lesson is: "✓ done" once every step is
// done, else how many are; the quiz as a score beside it ("quiz 2/3"),
// once a question is answered.
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

// showProgress marks the steps done before (the page's li, which the
// stream never sends) and says the lesson's progress in its header.
function showProgress() {
  const page = lessonPage();
  if (!page) return;
  const p = progress.lesson(page.dataset.lesson);
  const ids = page.dataset.steps.split(' ').filter(Boolean);
  page.querySelectorAll('.step').forEach((li) => li.classList.toggle('was-done', !!p.steps[li.dataset.step]));
  page.querySelectorAll('.stepper [data-now]').forEach((b) => { if (p.steps[b.dataset.now]) markDone(b); });
  const note = page.querySelector('[data-lesson-progress]');
  if (note) note.textContent = progressWords(p, ids, Number(page.dataset.quiz)).words;
  const short = page.querySelector('[data-lesson-progress-short]');
  if (short) short.textContent = '(' + ids.filter((id) => p.steps[id]).length + '/' + ids.length + ')';
}

// A lesson page shown (its data-init, at load or when a room's stream
// brings it in place): its answers and its progress from this browser.
function showLesson() {
  const page = lessonPage();
  if (!page) return;
  const p = progress.lesson(page.dataset.lesson);
  const predict = page.querySelector('[data-kind="predict"]');
  if (predict && p.predict !== undefined && !predict.classList.contains('answered')) answer(predict, p.predict);
  page.querySelectorAll('[data-kind="quiz"]').forEach((q) => {
    if (p.quiz[q.dataset.index] !== undefined && !q.classList.contains('answered')) answer(q, p.quiz[q.dataset.index]);
  });
  showProgress();
  // The step to do now is current, once Datastar listens on the try box
  // (the page's data-init may run before it does); the page stays where
  // it opens, at its top.
  requestAnimationFrame(() => setNow(firstToDo()));
}
document.addEventListener('olab-lesson', showLesson);

// The course list: each lesson's progress in words.
document.addEventListener('DOMContentLoaded', () => {
  const all = progress.all();
  document.querySelectorAll('.lesson-card[data-lesson]').forEach((card) => {
    const p = all[card.dataset.lesson];
    const out = card.querySelector('[data-progress]');
    if (!p || !out) return;
    const w = progressWords(p, card.dataset.steps.split(' ').filter(Boolean), Number(card.dataset.quiz));
    out.textContent = w.words;
    card.classList.toggle('complete', w.complete);
    card.classList.toggle('started', !w.complete && w.started);
  });
});
