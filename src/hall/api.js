// The Hall's calls to the owner: fetch with the session header, verbs, the roster kept between views.

import { S, Locked, lock } from './shell.js';

/** Call the owner; the session rides in its header. Errors carry the owner's code. */
export async function api(path, { method = 'GET', body, brain, session = S.session } = {}) {
  const headers = { Accept: 'application/json' };
  if (session) headers['Medulla-Hall-Session'] = session;
  if (brain) headers['Medulla-Brain'] = brain;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let r;
  try {
    r = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (e) {
    throw Object.assign(new Error('the owner is not answering: is `medulla serve` running?'), { code: 'unreachable' });
  }
  const v = await r.json().catch(() => null);
  if (!r.ok) {
    const err = v && v.error ? v.error : { code: String(r.status), message: r.statusText };
    if (session && r.status === 403 && (err.code === 'founder_only' || err.code === 'not_your_brain')) {
      lock('Your Hall session is no longer valid (it expired, or the owner restarted).');
      throw new Locked(err.message);
    }
    throw Object.assign(new Error(err.message || err.code), err);
  }
  return v;
}

const qs = (params) => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
};
export const get = (path, params) => api(path + qs(params));
export const call = (verb, args, brain) => api(`/api/call/${verb}`, { method: 'POST', body: args, brain });

/** The roster, asked again when an event said it changed. */
export async function instances(fresh) {
  if (!S.instances || fresh || S.instances.stale) S.instances = await get('/api/instances');
  return S.instances;
}

export function brainByFp(fp) {
  return (S.instances?.instances || []).find((b) => b.fingerprint === fp);
}
