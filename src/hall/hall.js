// The Hall's entry module: it opens the session, routes `#/<page>` to a page module, and starts the event stream.
//
// The Hall: where a person sees and tends every brain of this machine. Plain modern
// JavaScript as ES modules, no dependencies, no build step: the browser follows these
// imports, and the owner serves each module from the binary (src/hall/mod.rs). Everything
// shown comes from the owner's REST surface (docs/PROTOCOL.md). Text from the stores
// (claims, letters) is written by agents: it is only ever set as text, never parsed as HTML.
//
// The modules, none importing another in a circle: dom.js and format.js (building and
// formatting elements), shell.js (the page's frame and state), api.js (calls to the
// owner), live.js (the event stream), one per page (roster.js, brain.js, review.js,
// medulla.js, audit.js, mailbox.js, doctor.js) and what pages share (claims.js,
// actions.js, team.js).
//
// The founder proof: `medulla hall` opens this page at `/#ticket=<t>`. The page trades
// the ticket once for a session (POST /api/hall/session), keeps the session in this
// tab's sessionStorage, strips the fragment from the address bar, and sends
// `Medulla-Hall-Session` on every call. Without a session it shows how to open it and
// nothing else.

import { h, $ } from './dom.js';
import { SESSION_KEY, S, Locked, lock, setLive, errorBox } from './shell.js';
import { api, get } from './api.js';
import { viewRoster } from './roster.js';
import { viewMailbox } from './mailbox.js';
import { viewBrain } from './brain.js';
import { viewReview } from './review.js';
import { viewMedulla } from './medulla.js';
import { viewAudit } from './audit.js';
import { viewDoctor } from './doctor.js';
import { connectLive } from './live.js';

function route() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query] = raw.split('?');
  return {
    parts: path.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(query || ''),
  };
}

async function render() {
  if (!S.session) return;
  const { parts, query } = route();
  const name = parts[0] || 'roster';
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.view === (name === 'brain' ? 'roster' : name)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const view = $('#view');
  const root = h('div', { class: `view view-${name}` });
  view.replaceChildren(root);
  const views = { roster: viewRoster, brain: viewBrain, review: viewReview, medulla: viewMedulla, audit: viewAudit, mailbox: viewMailbox, doctor: viewDoctor };
  const fn = views[name] || viewRoster;
  S.view = { name, onEvents: () => {} };
  try {
    await fn(root, parts.slice(1), query);
  } catch (e) {
    if (!(e instanceof Locked)) root.append(errorBox(e));
  }
  if (root.isConnected) document.documentElement.dataset.view = name;
}

function ticketFromHash() {
  const m = /^#ticket=([0-9a-zA-Z]+)/.exec(location.hash);
  return m ? m[1] : null;
}

async function start() {
  performance.mark('hall:script');
  const ticket = ticketFromHash();
  // The roster is anyone's to read (GET /api/instances asks for no founder): ask for it
  // now, alongside the ticket's trade, and show it only once the session is proven.
  const early = fetch('/api/instances', { headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'omit' })
    .then((r) => (r.ok ? r.json() : null))
    .catch(() => null);
  if (ticket) {
    if (S.liveAbort) S.liveAbort.abort();
    // Off the address bar (and out of history) before anything else.
    history.replaceState(null, '', `${location.pathname}#/`);
    try {
      const v = await api('/api/hall/session', { method: 'POST', body: { ticket }, session: null });
      sessionStorage.setItem(SESSION_KEY, v.session);
      performance.mark('hall:session');
    } catch (e) {
      lock(`That ticket did not open the Hall (${e.message}). Tickets work once, for five minutes.`);
      return;
    }
  }
  S.session = sessionStorage.getItem(SESSION_KEY);
  if (!S.session) {
    lock();
    return;
  }
  $('#live').hidden = false;
  setLive('', 'connecting');
  get('/api/health').then((v) => { S.health = v; }, () => {});
  const live = connectLive();
  if (!ticket) {
    // A session kept from before: the event stream proves it is still good (the owner
    // may have restarted) before anything is shown.
    const v = await live;
    if (v === 'refused') return;
    if (v === 'down') {
      lock('The owner is not answering: start it with `medulla serve`, then run `medulla hall`.');
      return;
    }
  }
  S.instances = (await early) || S.instances;
  performance.mark('hall:data');
  $('#locked').hidden = true;
  $('#nav').hidden = false;
  document.documentElement.dataset.hall = 'open';
  await render();
}

// The policy forbids inline script and style: say so loudly if anything trips it.
document.addEventListener('securitypolicyviolation', (e) => {
  const el = document.documentElement;
  el.dataset.cspViolations = String(Number(el.dataset.cspViolations || 0) + 1);
  console.error(`content security policy: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`);
});

// A ticket pasted into an open tab arrives as a fragment change, not a new page.
window.addEventListener('hashchange', () => (ticketFromHash() ? start() : render()));
start();
