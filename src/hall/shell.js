// The Hall's frame and state: the session, toasts, the lock screen, the live light, loading into a container, titles.

import { h, $, replace } from './dom.js';

export const SESSION_KEY = 'medulla.hall.session';

export const S = {
  session: null,
  instances: null, // the last /api/instances answer
  health: null,
  view: null, // the mounted view: {name, onEvents(batch)}
  live: 'connecting',
};

export class Locked extends Error {}

export function toast(message, bad) {
  const p = h('p', { class: bad ? 'bad' : '', text: message });
  $('#toast').append(p);
  setTimeout(() => p.remove(), bad ? 9000 : 6000);
}

export function lock(why) {
  sessionStorage.removeItem(SESSION_KEY);
  S.session = null;
  S.view = null;
  if (S.liveAbort) S.liveAbort.abort();
  $('#nav').hidden = true;
  $('#live').hidden = true;
  replace($('#view'));
  if (why) $('#locked-why').textContent = why;
  $('#locked').hidden = false;
  document.documentElement.dataset.hall = 'locked';
}

export function setLive(state, text) {
  S.live = state;
  const el = $('#live');
  el.className = `live ${state}`;
  $('#live-text').textContent = text;
}

export function errorBox(e) {
  if (e instanceof Locked) return null;
  return h('p', { class: 'error', role: 'alert', text: `${e.code ? e.code + ': ' : ''}${e.message}` });
}

/** The mounted view refreshes with this on events, while `el` is still on the page. */
export function listen(el, fn) {
  if (el.isConnected && S.view) S.view.onEvents = fn;
}

/** Run an async loader into a container: "loading", then its nodes, or the error. */
export async function load(el, fn) {
  replace(el, h('p', { class: 'muted', text: 'loading…' }));
  try {
    replace(el, await fn());
  } catch (e) {
    replace(el, errorBox(e));
  }
}

export const href = (...parts) => '#/' + parts.map(encodeURIComponent).join('/');

export function title(text, ...rest) {
  const h1 = h('h1', { tabindex: '-1', text });
  document.title = `${text} · the Hall`;
  return [h1, ...rest];
}

export function focusTitle(root) {
  const h1 = $('h1', root);
  if (h1 && document.activeElement !== $('#confirm-ok')) h1.focus({ preventScroll: true });
}

export function markDrawn(what) {
  if (!document.documentElement.dataset.drawn) {
    performance.mark(`hall:${what}`);
    document.documentElement.dataset.drawn = what;
  }
}

export function touches(batch, store) {
  return batch.some((e) => e.kind === 'act' && (!e.store || e.store === store));
}
