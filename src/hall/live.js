// The Hall's event stream: read with fetch, reconnected after a drop, batched into one refresh per burst.

import { fmtDate, base } from './format.js';
import { S, lock, setLive } from './shell.js';

/**
 * The event stream, read with fetch so the session travels in its header (never in a
 * URL a log could keep). Resolves once with 'ok', 'refused' (no valid session) or
 * 'down'; then keeps reading, reconnecting after a drop. Events are batched so a burst
 * of writes costs one refresh.
 */
export function connectLive() {
  const gen = (S.liveGen = (S.liveGen || 0) + 1);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (v) => { if (!settled) { settled = true; resolve(v); } };
    const attempt = async (again) => {
      // A newer connection (a new ticket, a new session) replaces this one.
      if (!S.session || gen !== S.liveGen) return settle('refused');
      const ctrl = new AbortController();
      S.liveAbort = ctrl;
      let r;
      try {
        r = await fetch('/api/events', { headers: { 'Medulla-Hall-Session': S.session, Accept: 'text/event-stream' }, cache: 'no-store', credentials: 'omit', signal: ctrl.signal });
      } catch {
        settle('down');
        setLive('off', 'owner unreachable: retrying');
        setTimeout(() => attempt(true), 3000);
        return;
      }
      if (r.status === 403) {
        settle('refused');
        if (S.session && gen === S.liveGen) lock('Your Hall session is no longer valid (it expired, or the owner restarted).');
        return;
      }
      if (!r.ok || !r.body) {
        settle('down');
        setLive('off', `event stream refused (${r.status}): retrying`);
        setTimeout(() => attempt(true), 3000);
        return;
      }
      settle('ok');
      setLive('on', 'live');
      if (again) dispatch([{ kind: 'resync' }]);
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let type = 'message';
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) type = line.slice(6).trim();
              else if (line.startsWith('data:')) data += line.slice(5).trim();
            }
            if (data) onEvent(type, data);
          }
        }
      } catch { /* dropped */ }
      if (!S.session || gen !== S.liveGen) return;
      setLive('off', 'reconnecting');
      setTimeout(() => attempt(true), 1000);
    };
    attempt(false);
  });
}

let batch = [];
let batchTimer = null;
let lastDispatch = 0;
function onEvent(type, data) {
  let ev;
  try { ev = JSON.parse(data); } catch { return; }
  if (type === 'lagged') ev = { kind: 'resync' };
  if (ev.kind === 'act') {
    const where = ev.store === 'medulla' ? ' in the medulla' : ev.store ? ` in ${base(ev.store)}` : '';
    setLive('on', `live · ${ev.verb || 'act'}${where} at ${fmtDate(ev.at)}`);
  }
  if (ev.kind === 'mail') setLive('on', `live · letters filed at ${fmtDate(ev.at)}`);
  batch.push(ev);
  // A burst costs one refresh, and refreshes come at most once a second.
  if (!batchTimer) {
    const wait = Math.max(300, lastDispatch + 1000 - Date.now());
    batchTimer = setTimeout(() => {
      const b = batch;
      batch = [];
      batchTimer = null;
      lastDispatch = Date.now();
      dispatch(b);
    }, wait);
  }
}

function dispatch(b) {
  if (S.instances) S.instances.stale = true;
  if (b.some((e) => e.kind === 'resync')) b = [{ kind: 'act' }, { kind: 'mail' }];
  try { S.view?.onEvents(b); } catch (e) { console.error(e); }
}
