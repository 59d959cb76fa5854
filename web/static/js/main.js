// The lab's own browser code: the page loads this module (before
// Datastar's, so that lesson.js can prepare the page's signals and every
// listener is in place before the first stream opens). Each module is one
// part of the page; the server builds every chart option and every
// sentence and decides every lesson step, and the page's state lives in
// Datastar signals and data-* attributes in the templates where it can.
import './chart.js';
import './page.js';
import './keys.js';
import './lesson.js';
import './spot.js';
import './explore.js';
