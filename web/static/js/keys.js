// The lab's keys (the page's keys dialog lists them): each clicks the
// button that does the same, or moves the scrubber as a drag would, so a
// key and a click take one path to the server. Opening the settings or
// the projector view is page.js's; the go-to box's state is a signal
// (lab.templ gotoBox), opened here by an event.
import { setSettings, settingsShown, setProjector, isProjector } from './page.js';

const $ = (id) => document.getElementById(id);

// typing: the key belongs to the field that has the focus (a text or
// number field, a menu, an editable area), so no shortcut fires.
function typing(t) {
  if (!t || !t.tagName) return false;
  if (t.isContentEditable || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') return true;
  return t.tagName === 'INPUT' && !['range', 'checkbox', 'radio', 'button', 'submit', 'reset'].includes(t.type);
}

// pressable: space and Enter already mean something on it (a link
// follows, a button presses, a scrolling box scrolls). A box focused only
// from script (tabindex -1: the lesson step the c key focuses) is not:
// there space plays, so c then space is "play this step" (issue 38: a
// keyboard learner went 24 Tabs back to Play).
function pressable(t) {
  return !!(t && t.closest && t.closest('a[href], button, summary, input, select, textarea, [tabindex]:not(#lab):not([tabindex="-1"])'));
}

const isRange = (t) => t && t.tagName === 'INPUT' && t.type === 'range';

function click(sel) {
  const el = sel[0] === '[' ? document.querySelector(sel) : $(sel);
  if (el) el.click();
}

// scrubTo moves the cursor as the scrubber would: the bound signal and
// its post follow the input event.
function scrubTo(n) {
  const s = $('scrub');
  if (!s) return;
  s.value = String(Math.max(0, Math.min(Number(s.max), n)));
  s.dispatchEvent(new Event('input', { bubbles: true }));
}

// currentStep asks the lesson (js/lesson.js) to make the step to do now
// current, in view, and focused (its text is read out).
function currentStep() {
  document.dispatchEvent(new CustomEvent('olab-current'));
}

// shortcut is the action of a key on the lab, or null.
function shortcut(ev, t) {
  switch (ev.key) {
    case ' ': return pressable(t) && !isRange(t) ? null : () => click('btn-play');
    case 'ArrowRight': return isRange(t) ? null : () => click('btn-step');
    case 'ArrowLeft': return isRange(t) ? null : () => click('btn-back');
    case 'Home': return isRange(t) ? null : () => scrubTo(0);
    case 'End': return isRange(t) ? null : () => scrubTo(Infinity);
    case 'r': return () => click('btn-reset');
    case '1': case '4': case '6': case 'i':
      return () => click('[data-speed="' + ({ 1: '1', 4: '4', 6: '16', i: 'instant' })[ev.key] + '"]');
    case 'g': return $('goto') ? () => $('goto').dispatchEvent(new CustomEvent('olab-goto', { detail: document.activeElement })) : null;
    case 'c': return document.querySelector('.lesson-page .steps') ? currentStep : null;
    case '?': return () => { const d = $('keys'); if (d && !d.open) d.showModal(); };
    case 's': return () => setSettings(!settingsShown(), true);
    case 'p': return () => setProjector(!isProjector());
  }
  return null;
}

document.addEventListener('keydown', (ev) => {
  const t = ev.target;
  if (ev.key === 'Escape') return escape(ev, t);
  if (ev.altKey || ev.ctrlKey || ev.metaKey || ev.defaultPrevented || !$('btn-play')) return;
  if (typing(t) || document.querySelector('dialog[open]')) return;
  const act = shortcut(ev, t);
  if (!act) return;
  ev.preventDefault();
  act();
});

// escape leaves what the focus is in: the copy fallback's field, the
// go-to box (its own data-on closes it), the settings drawer.
function escape(ev, t) {
  if (t && t.id === 'copy-link-field') {
    t.hidden = true;
    $('btn-copy-link').focus();
  } else if (t && t.closest && t.closest('#controls') && getComputedStyle($('controls')).position === 'fixed') {
    setSettings(false, true);
  } else return;
  ev.preventDefault();
}

// A menu chosen with the mouse lets go of the focus: it would otherwise
// take the arrows meant for the timeline (→ switched the scenario). A
// menu worked with the keyboard keeps it.
let pointedSelect = null;
document.addEventListener('pointerdown', (ev) => { pointedSelect = ev.target.closest && ev.target.closest('select'); }, true);
document.addEventListener('keydown', () => { pointedSelect = null; }, true);
document.addEventListener('change', (ev) => {
  if (ev.target.tagName === 'SELECT' && ev.target === pointedSelect) {
    pointedSelect = null;
    ev.target.blur();
  }
});

// On a recording's page the keys drive the replay, not the lab under it
// (whose transport is hidden, and whose state the recording sets): space
// plays or pauses the replay; the lab's other keys do nothing there.
document.addEventListener('keydown', (ev) => {
  const play = $('rec-play');
  if (!play || ev.altKey || ev.ctrlKey || ev.metaKey || ev.key === 'Escape' || ev.key === '?') return;
  const t = ev.target;
  if (typing(t) || document.querySelector('dialog[open]')) return;
  if (ev.key === ' ' && !(pressable(t) && !isRange(t))) {
    ev.preventDefault();
    play.click();
  }
  ev.stopImmediatePropagation();
}, true);
