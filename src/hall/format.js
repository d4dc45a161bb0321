// The Hall's formatting: numbers, ages, dates, short hashes, version names and badges.

import { h } from './dom.js';

// One formatter for every number: toLocaleString builds a new one per call, which a
// roster of a hundred cards feels.
const NUM = new Intl.NumberFormat('en');
export const fmtNum = (n) => (typeof n === 'number' ? NUM.format(n) : n ?? '—');
export const plural = (n, one, many = `${one}s`) => `${fmtNum(n)} ${n === 1 ? one : many}`;

export function fmtAge(ms) {
  if (typeof ms !== 'number' || ms < 0) return '—';
  const s = ms / 1000;
  if (s < 60) return `${Math.floor(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  if (s < 86400 * 60) return `${Math.floor(s / 86400)} d`;
  if (s < 86400 * 730) return `${Math.floor(s / (86400 * 30))} mo`;
  return `${Math.floor(s / (86400 * 365))} y`;
}

export function fmtDate(ms) {
  if (typeof ms !== 'number') return typeof ms === 'string' ? ms : '—';
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function time(ms) {
  if (typeof ms !== 'number') return h('span', { text: ms ?? '—' });
  return h('time', { datetime: new Date(ms).toISOString(), title: new Date(ms).toISOString(), text: fmtDate(ms) });
}

export const base = (root) => (root || '').replace(/\/+$/, '').split('/').pop() || root;
export const short = (hash) => (hash ? String(hash).slice(0, 10) : '—');

/** A version named `<slug>@<ms>` (what `supersedes` and `promoted_to` hold), readable. */
export function versionRef(v) {
  const m = /^(.*)@(\d{10,})$/.exec(v || '');
  return h('code', { title: v, text: m ? `${m[1]} of ${fmtDate(Number(m[2]))}` : v });
}

export function badge(text, cls, title) {
  return h('span', { class: `badge ${cls || ''}`, title, text });
}
