// A plan scene's "explore on your own for N min" (web/room/explore.go):
// the room's state carries when it ends, and the stream patches the
// explore signal once when it starts or stops, with how long was left as
// the server reckoned it. The page counts down from that on its own
// monotonic clock (not Date.now(), which a laptop may have wrong), so no
// event per second is needed and every page of the room agrees to the
// second. An attendee exploring on their own still sees it: the room's
// bar is not theirs to change.

const $ = (id) => document.getElementById(id);
const explore = { deadline: 0, timer: 0, key: '', up: false };

// olab-explore is the explore signal's effect (room.templ roomExplore).
document.addEventListener('olab-explore', (ev) => {
  const e = ev.detail;
  const key = e && e.endMs ? e.endMs + '|' + e.minutes : '';
  clearInterval(explore.timer);
  explore.timer = 0;
  explore.deadline = key ? performance.now() + Math.max(0, e.leftMs || 0) : 0;
  const clock = $('room-explore');
  if (!clock) return;
  clock.hidden = !key;
  if (key && key !== explore.key) {
    $('room-explore-of').textContent = ' (' + e.minutes + ' min)';
    sayExplore(e.leftMs > 0 ? 'Explore on your own: ' + e.minutes + ' minutes' : '');
  }
  explore.key = key;
  explore.up = false;
  if (!key) return;
  tickExplore();
  explore.timer = setInterval(tickExplore, 250);
});

// mmss is a duration left as mm:ss, counting whole seconds up (4:59.2
// left shows 05:00 until it is 04:59).
function mmss(ms) {
  const s = Math.ceil(ms / 1000);
  return String(Math.floor(s / 60)).padStart(2, '0') + ':' + String(s % 60).padStart(2, '0');
}

function tickExplore() {
  const clock = $('room-explore');
  if (!clock || !explore.deadline) return;
  const left = explore.deadline - performance.now();
  const up = left <= 0;
  const text = up ? 'time is up' : mmss(left) + ' left';
  const out = $('room-explore-left');
  if (out.textContent !== text) out.textContent = text;
  clock.classList.toggle('up', up);
  if (up && !explore.up) sayExplore('Explore time is up');
  explore.up = up;
  if (up) {
    clearInterval(explore.timer);
    explore.timer = 0;
  }
}

// say tells a screen reader the timer's start and end (the clock itself
// is a timer, which is not read out each second).
function sayExplore(words) {
  const el = $('room-explore-say');
  if (el) el.textContent = words;
}
