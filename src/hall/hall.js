// The Hall: where a person sees and tends every brain of this machine.
//
// Plain modern JavaScript, no dependencies, no build step. Everything shown comes from
// the owner's REST surface (docs/PROTOCOL.md). Text from the stores (claims, letters)
// is written by agents: it is only ever set as text, never parsed as HTML.
//
// The founder proof: `medulla hall` opens this page at `/#ticket=<t>`. The page trades
// the ticket once for a session (POST /api/hall/session), keeps the session in this
// tab's sessionStorage, strips the fragment from the address bar, and sends
// `Medulla-Hall-Session` on every call. Without a session it shows how to open it and
// nothing else.

const SESSION_KEY = 'medulla.hall.session';
const AGENT = 'human:founder';
const SOFT_CAP = 200;
const WARN_FROM = 300;
const FATES = {
  wet_ink: { mark: '◌', name: 'wet ink', says: 'unanswered' },
  in_flight: { mark: '➶', name: 'in flight', says: 'answered, not yet closed' },
  fired_clay: { mark: '●', name: 'fired clay', says: 'closed by a triage or receipt' },
  external: { mark: '↗', name: 'external', says: 'about another tool' },
  settled: { mark: '·', name: 'closing letter', says: 'a triage or receipt itself' },
};
const KINDS = ['leak', 'false_absence', 'wrong_store_write', 'misattribution', 'vanished'];

const S = {
  session: null,
  instances: null, // the last /api/instances answer
  health: null,
  view: null, // the mounted view: {name, onEvents(batch)}
  live: 'connecting',
};

// ---------------------------------------------------------------- DOM

/** An element: attributes (class, text, on*, data-*, aria-*, booleans) and children. */
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, kids);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, kids);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'text') el.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
}

function append(el, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
}

const $ = (sel, root = document) => root.querySelector(sel);

function replace(el, ...kids) {
  el.replaceChildren();
  append(el, kids);
}

// ---------------------------------------------------------------- formatting

// One formatter for every number: toLocaleString builds a new one per call, which a
// roster of a hundred cards feels.
const NUM = new Intl.NumberFormat('en');
const fmtNum = (n) => (typeof n === 'number' ? NUM.format(n) : n ?? '—');
const plural = (n, one, many = `${one}s`) => `${fmtNum(n)} ${n === 1 ? one : many}`;

function fmtAge(ms) {
  if (typeof ms !== 'number' || ms < 0) return '—';
  const s = ms / 1000;
  if (s < 60) return `${Math.floor(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  if (s < 86400 * 60) return `${Math.floor(s / 86400)} d`;
  if (s < 86400 * 730) return `${Math.floor(s / (86400 * 30))} mo`;
  return `${Math.floor(s / (86400 * 365))} y`;
}

function fmtDate(ms) {
  if (typeof ms !== 'number') return typeof ms === 'string' ? ms : '—';
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

function time(ms) {
  if (typeof ms !== 'number') return h('span', { text: ms ?? '—' });
  return h('time', { datetime: new Date(ms).toISOString(), title: new Date(ms).toISOString(), text: fmtDate(ms) });
}

const base = (root) => (root || '').replace(/\/+$/, '').split('/').pop() || root;
const short = (hash) => (hash ? String(hash).slice(0, 10) : '—');

/** A version named `<slug>@<ms>` (what `supersedes` and `promoted_to` hold), readable. */
function versionRef(v) {
  const m = /^(.*)@(\d{10,})$/.exec(v || '');
  return h('code', { title: v, text: m ? `${m[1]} of ${fmtDate(Number(m[2]))}` : v });
}

function badge(text, cls, title) {
  return h('span', { class: `badge ${cls || ''}`, title, text });
}

// ---------------------------------------------------------------- the API

class Locked extends Error {}

/** Call the owner; the session rides in its header. Errors carry the owner's code. */
async function api(path, { method = 'GET', body, brain, session = S.session } = {}) {
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
const get = (path, params) => api(path + qs(params));
const call = (verb, args, brain) => api(`/api/call/${verb}`, { method: 'POST', body: args, brain });

/** The roster, asked again when an event said it changed. */
async function instances(fresh) {
  if (!S.instances || fresh || S.instances.stale) S.instances = await get('/api/instances');
  return S.instances;
}

function brainByFp(fp) {
  return (S.instances?.instances || []).find((b) => b.fingerprint === fp);
}

// ---------------------------------------------------------------- shell

function toast(message, bad) {
  const p = h('p', { class: bad ? 'bad' : '', text: message });
  $('#toast').append(p);
  setTimeout(() => p.remove(), bad ? 9000 : 6000);
}

function lock(why) {
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

function setLive(state, text) {
  S.live = state;
  const el = $('#live');
  el.className = `live ${state}`;
  $('#live-text').textContent = text;
}

function errorBox(e) {
  if (e instanceof Locked) return null;
  return h('p', { class: 'error', role: 'alert', text: `${e.code ? e.code + ': ' : ''}${e.message}` });
}

/** The mounted view refreshes with this on events, while `el` is still on the page. */
function listen(el, fn) {
  if (el.isConnected && S.view) S.view.onEvents = fn;
}

/** Run an async loader into a container: "loading", then its nodes, or the error. */
async function load(el, fn) {
  replace(el, h('p', { class: 'muted', text: 'loading…' }));
  try {
    replace(el, await fn());
  } catch (e) {
    replace(el, errorBox(e));
  }
}

// ---------------------------------------------------------------- routing

function route() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query] = raw.split('?');
  return {
    parts: path.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(query || ''),
  };
}

const href = (...parts) => '#/' + parts.map(encodeURIComponent).join('/');

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
  const views = { roster: viewRoster, brain: viewBrain, medulla: viewMedulla, audit: viewAudit, mailbox: viewMailbox, doctor: viewDoctor };
  const fn = views[name] || viewRoster;
  S.view = { name, onEvents: () => {} };
  try {
    await fn(root, parts.slice(1), query);
  } catch (e) {
    if (!(e instanceof Locked)) root.append(errorBox(e));
  }
  if (root.isConnected) document.documentElement.dataset.view = name;
}

function title(text, ...rest) {
  const h1 = h('h1', { tabindex: '-1', text });
  document.title = `${text} · the Hall`;
  return [h1, ...rest];
}

function focusTitle(root) {
  const h1 = $('h1', root);
  if (h1 && document.activeElement !== $('#confirm-ok')) h1.focus({ preventScroll: true });
}

// ---------------------------------------------------------------- roster

async function viewRoster(root) {
  const grid = h('ul', { class: 'cards', 'aria-label': 'Brains' });
  const summary = h('ul', { class: 'summary', 'aria-label': 'Totals' });
  const filter = h('input', { type: 'search', id: 'roster-filter', placeholder: 'a root, a fingerprint…', autocomplete: 'off' });
  const sort = h('select', { id: 'roster-sort' },
    h('option', { value: 'root', text: 'root' }),
    h('option', { value: 'claims', text: 'live claims' }),
    h('option', { value: 'activity', text: 'activity (writes, recalls)' }),
    h('option', { value: 'mail', text: 'open letters' }));
  const foot = h('p', { class: 'muted' });
  root.append(
    ...title('Roster'),
    h('p', { class: 'lede', text: 'Every brain on disk, warm or dormant, and the medulla. A card carries that brain’s own numbers only: claims and acts from its store, sessions, recalls, writes and beats counted since the owner started.' }),
    summary,
    h('div', { class: 'toolbar', role: 'search' },
      h('label', {}, 'Filter brains', filter),
      h('label', {}, 'Sort by', sort)),
    grid,
    foot,
  );
  const draw = () => {
    const inst = S.instances;
    const rows = inst.instances || [];
    const brains = rows.filter((r) => r.root);
    const broken = rows.filter((r) => !r.root);
    const q = filter.value.trim().toLowerCase();
    const shown = brains.filter((b) => !q || b.root.toLowerCase().includes(q) || b.fingerprint.startsWith(q));
    const key = sort.value;
    shown.sort((a, b) => {
      if (key === 'claims') return b.claims - a.claims;
      if (key === 'activity') return (b.writes + b.recalls) - (a.writes + a.recalls);
      if (key === 'mail') return b.mailbox_open_count - a.mailbox_open_count;
      return a.root.localeCompare(b.root);
    });
    replace(summary,
      h('li', {}, h('b', { text: fmtNum(brains.length) }), 'brains'),
      h('li', {}, h('b', { text: fmtNum(brains.filter((b) => b.warm).length) }), 'warm'),
      h('li', {}, h('b', { text: fmtNum(brains.reduce((n, b) => n + (b.claims || 0), 0)) }), 'live claims in brains'),
      h('li', {}, h('b', { text: fmtNum(inst.medulla?.claims) }), 'in the medulla'),
      broken.length ? h('li', { class: 'error' }, h('b', { text: fmtNum(broken.length) }), 'unreadable') : null);
    const cards = [medullaCard(inst.medulla)];
    if (!q) for (const u of broken) cards.push(unreadableCard(u));
    for (const b of shown) cards.push(brainCard(b));
    replace(grid, cards);
    if (!brains.length) grid.append(h('li', { class: 'empty', text: 'No brain yet: run `medulla bootstrap` in a project.' }));
    else if (!shown.length) grid.append(h('li', { class: 'empty', text: `No brain matches “${filter.value}”.` }));
    replace(foot, `retrieval: ${inst.retrieval || '—'}`, S.health ? ` · owner ${S.health.version}, pid ${S.health.pid}, home ${S.health.home}` : '');
  };
  filter.addEventListener('input', draw);
  sort.addEventListener('change', draw);
  await instances();
  draw();
  markDrawn('roster');
  focusTitle(root);
  listen(root, async () => {
    await instances(true);
    if (root.isConnected) draw();
  });
}

function capStatus(live) {
  if (live >= WARN_FROM) return ['warn', 'bad', `at or past ${WARN_FROM}: prune or demote`];
  if (live > SOFT_CAP) return ['over soft cap', 'stale', `past the soft cap of ${SOFT_CAP}`];
  return ['ok', 'good', `within the soft cap of ${SOFT_CAP}`];
}

function capMeter(live) {
  return h('meter', {
    min: 0, max: Math.max(WARN_FROM + 100, live), low: SOFT_CAP, high: WARN_FROM, optimum: 0, value: live,
    'aria-label': `medulla live claims: ${live} against a soft cap of ${SOFT_CAP}, warning from ${WARN_FROM}`,
  });
}

function medullaCard(m) {
  const live = m?.claims ?? 0;
  const [st, cls, says] = capStatus(live);
  return h('li', { class: 'card medulla', 'data-brain': 'medulla' },
    h('div', { class: 'head' },
      h('h3', {}, h('a', { href: '#/medulla', text: 'the medulla' })),
      m?.fault ? faultBadge(m.fault) : badge(st, cls, says)),
    h('div', { class: 'sub', text: 'doctrine, preferences, findings confirmed across projects' }),
    m?.fault ? faultNote(m.fault) : null,
    capMeter(live),
    h('p', { class: 'foot' }, h('span', { 'data-stat': 'medulla-live', text: `${fmtNum(live)} live · soft cap ${SOFT_CAP} · warn from ${WARN_FROM}` })),
    h('dl', { class: 'stats' },
      stat('live', live), stat('history', m?.history_versions), stat('acts', m?.acts)));
}

function stat(name, value, title) {
  return h('div', { title }, h('dt', { text: name }), h('dd', { 'data-stat': name, text: fmtNum(value) }));
}

const FAULT_WORDS = {
  damaged: ['quarantined', 'nothing reads or writes it until it is restored'],
  disk_full: ['disk full', 'it recovers by itself once there is room'],
  io: ['file fault', 'it recovers by itself once the cause is gone'],
};

function faultBadge(f) {
  const [word, says] = FAULT_WORDS[f.kind] || [f.kind, ''];
  return badge(word, 'bad', says);
}

function faultNote(f) {
  return h('p', { class: 'error', 'data-fault': f.kind, text: f.detail });
}

function brainCard(b) {
  const activity = b.warm
    ? h('span', { text: 'warm: live counts' })
    : h('span', {}, 'dormant, counts as of ', time(b.counts_as_of));
  return h('li', { class: 'card', 'data-fp': b.fingerprint, 'data-root': b.root },
    h('div', { class: 'head' },
      h('h3', {}, h('a', { href: href('brain', b.fingerprint), text: base(b.root) })),
      b.fault ? faultBadge(b.fault)
        : b.warm ? badge('warm', 'warm', 'loaded now') : badge('dormant', '', 'not loaded: numbers from its manifest')),
    h('div', { class: 'root', text: b.root }),
    b.fault ? faultNote(b.fault) : null,
    h('dl', { class: 'stats' },
      stat('claims', b.claims, 'live claims'),
      stat('history', b.history_versions, 'outdated versions kept'),
      stat('acts', b.acts, 'recorded acts'),
      stat('open mail', b.mailbox_open_count, 'letters wet ink or in flight'),
      stat('sessions', b.sessions, 'since the owner started'),
      stat('recalls', b.recalls, 'since the owner started'),
      stat('writes', b.writes, 'since the owner started'),
      stat('beats', b.memory_beats_served, 'north beats served since the owner started')),
    h('p', { class: 'foot' }, activity, h('code', { text: b.fingerprint })));
}

function unreadableCard(u) {
  return h('li', { class: 'card unreadable', 'data-fp': u.fingerprint },
    h('div', { class: 'head' }, h('h3', { text: 'unreadable brain' }), badge('problem', 'bad')),
    h('div', { class: 'root', text: u.dir }),
    h('p', { class: 'error', text: u.problem || 'its manifest could not be read' }),
    h('p', { class: 'foot' }, h('code', { text: u.fingerprint })));
}

function markDrawn(what) {
  if (!document.documentElement.dataset.drawn) {
    performance.mark(`hall:${what}`);
    document.documentElement.dataset.drawn = what;
  }
}

// ---------------------------------------------------------------- a brain

async function viewBrain(root, [fp, tab = 'claims'], query) {
  await instances();
  let b = brainByFp(fp);
  if (!b) {
    // Bootstrapped since the roster was read?
    await instances(true);
    b = brainByFp(fp);
  }
  if (!b) {
    root.append(...title('Unknown brain'), h('p', { class: 'error', text: `No brain with fingerprint ${fp} is on disk.` }), h('a', { href: '#/', text: 'Back to the roster' }));
    return;
  }
  const tabs = [['claims', 'Claims'], ['acts', 'Act log'], ['mailbox', 'Mailbox']];
  const body = h('div', {});
  root.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/', text: 'Roster' }), ' / ', base(b.root)),
    ...title(base(b.root)),
    h('p', { class: 'lede' }, h('code', { text: b.root }), ' · ', h('code', { text: b.fingerprint }), ' · ',
      b.warm ? badge('warm', 'warm') : badge('dormant'), ' ',
      `${plural(b.claims, 'live claim')}, ${fmtNum(b.history_versions)} in history, ${plural(b.acts, 'act')}, ${plural(b.mailbox_open_count, 'open letter')}`),
    h('nav', { class: 'tabs', 'aria-label': 'Brain sections' },
      tabs.map(([t, label]) => h('a', { href: href('brain', fp, t), 'aria-current': t === tab ? 'page' : false, text: label }))),
    body);
  const brain = { fp: b.fingerprint, root: b.root };
  if (tab === 'acts') await actsPanel(body, b.fingerprint, b.root);
  else if (tab === 'mailbox') await boxPanel(body, b.fingerprint, b.root);
  else await claimsPanel(body, brain, query);
  focusTitle(root);
}

/** Search and paged claims of one brain. */
async function claimsPanel(el, brain, query) {
  const q = h('input', { type: 'search', id: 'seek-query', name: 'query', placeholder: 'what are you looking for?', value: query.get('q') || '', maxlength: 4096 });
  const tier = h('select', { id: 'seek-tier', name: 'tier' },
    h('option', { value: 'project', text: 'this brain' }),
    h('option', { value: '', text: 'this brain + the medulla (the default beat)' }),
    h('option', { value: 'medulla', text: 'the medulla only' }),
    h('option', { value: 'all-brains', text: 'every brain (explicit cross-project pull)' }));
  tier.value = query.get('tier') ?? 'project';
  const scope = h('input', { type: 'text', id: 'seek-scope', name: 'scope', placeholder: 'slug or label prefix', value: query.get('scope') || '' });
  const limit = h('input', { type: 'number', id: 'seek-limit', name: 'limit', min: 1, max: 200, value: query.get('limit') || 20 });
  const form = h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Search this brain' },
    h('label', {}, 'Search', q),
    h('label', {}, 'Tier', tier),
    h('label', {}, 'Scope', scope),
    h('label', {}, 'Limit', limit),
    h('button', { type: 'submit', class: 'primary', text: 'Seek' }),
    h('button', { type: 'button', id: 'seek-clear', text: 'Clear', onclick: () => { location.hash = href('brain', brain.fp, 'claims'); } }));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const p = new URLSearchParams({ q: q.value, tier: tier.value, scope: scope.value, limit: limit.value });
    location.hash = `${href('brain', brain.fp, 'claims')}?${p}`;
  });
  const list = h('div', {});
  el.append(form, list);
  const searching = query.has('q');
  const ctx = { brain, open: new Set() };
  if (searching) {
    const run = async () => {
      const args = { query: q.value, limit: Number(limit.value) || 20 };
      if (tier.value) args.tier = tier.value;
      if (scope.value.trim()) args.scope = scope.value.trim();
      const v = await call('seek', args, brain.fp);
      const out = [h('p', { class: 'muted' }, `tier ${v.tier || args.tier || 'project+medulla'} · retrieval ${v.retrieval || '—'}`, v.reception ? ` · ${v.reception.message}` : '')];
      if (v.groups) {
        out[0].append(` · ${v.brains_searched} brains searched`);
        for (const g of v.groups) {
          // Each group's rows live in that group's store: act on them there.
          const other = (S.instances?.instances || []).find((x) => x.root === g.origin_brain);
          const gctx = { ...ctx, brain: other ? { fp: other.fingerprint, root: other.root } : null };
          out.push(h('h2', { text: g.origin_brain === 'medulla' ? 'the medulla' : g.origin_brain }));
          out.push(claimList(g.results, gctx));
        }
        for (const f of v.failed || []) out.push(h('p', { class: 'error', text: `${f.brain}: ${f.error?.message}` }));
        if (!v.groups.length) out.push(h('p', { class: 'empty', text: 'Nothing matched in any brain.' }));
      } else {
        out.push(v.results?.length ? claimList(v.results, ctx) : h('p', { class: 'empty', text: 'Nothing matched (memory may still exist: try fewer words, or clear the search to page through every claim).' }));
      }
      return out;
    };
    await load(list, run);
    listen(list, (batch) => { if (touches(batch, brain.root)) load(list, run); });
    return;
  }
  let offset = Number(query.get('offset')) || 0;
  const size = 50;
  const page = async () => {
    const v = await get('/api/claims', { brain: brain.fp, offset, limit: size });
    const end = offset + v.claims.length;
    const pager = () => h('div', { class: 'pager' },
      h('button', { type: 'button', disabled: offset === 0, text: '← Newer', onclick: () => { offset = Math.max(0, offset - size); load(list, page); } }),
      h('span', { 'data-total': v.total, text: v.total ? `claims ${fmtNum(offset + 1)}–${fmtNum(end)} of ${fmtNum(v.total)}, newest first` : 'no live claims' }),
      h('button', { type: 'button', disabled: v.next_offset == null, text: 'Older →', onclick: () => { offset = v.next_offset; load(list, page); } }));
    return [pager(), v.claims.length ? claimList(v.claims, ctx) : h('p', { class: 'empty', text: 'This brain holds no live claim yet.' }), v.claims.length > 10 ? pager() : null];
  };
  await load(list, page);
  listen(list, (batch) => { if (touches(batch, brain.root)) load(list, page); });
}

function touches(batch, store) {
  return batch.some((e) => e.kind === 'act' && (!e.store || e.store === store));
}

function claimList(rows, ctx) {
  return h('ul', { class: 'claims' }, rows.map((r) => claimItem(r, ctx)));
}

/** One claim: its badges, text, provenance, and what the founder may do with it. */
function claimItem(r, ctx) {
  const medulla = r.tier === 'medulla';
  const ws = r.witness_superseded;
  const li = h('li', { class: `claim${ws ? ' witness-changed' : ''}`, 'data-slug': r.slug, 'data-tier': r.tier });
  const text = h('p', { class: 'text clamped', text: r.text });
  const hist = h('div', { class: 'history' });
  const trust = typeof r.trust === 'number' ? r.trust.toFixed(2) : '—';
  const tc = r.trust_counts;
  const histBtn = h('button', { type: 'button', 'aria-expanded': 'false', text: 'History' });
  const toggleHistory = async () => {
    const open = histBtn.getAttribute('aria-expanded') !== 'true';
    histBtn.setAttribute('aria-expanded', String(open));
    if (!open) { replace(hist); ctx.open.delete(r.slug); return; }
    ctx.open.add(r.slug);
    await load(hist, () => historyOf(r, ctx));
  };
  histBtn.addEventListener('click', toggleHistory);
  const actions = [histBtn];
  if (r.text && r.text.length > 280) {
    actions.push(h('button', { type: 'button', text: 'Full text', onclick: (e) => { text.classList.toggle('clamped'); e.target.textContent = text.classList.contains('clamped') ? 'Full text' : 'Less'; } }));
  }
  if (!medulla && ctx.brain && r.state !== 'outdated') {
    actions.push(h('button', { type: 'button', class: 'act-promote', text: r.promoted_to ? 'Promote again…' : 'Promote…', onclick: () => promoteDialog(r, ctx) }));
    actions.push(h('button', { type: 'button', class: 'act-grade', text: 'Grade…', onclick: () => gradeDialog(r, ctx, false) }));
    actions.push(h('button', { type: 'button', class: 'act-retire danger', text: 'Retire…', onclick: () => retireDialog(r, ctx) }));
  }
  if (medulla && r.state !== 'outdated') {
    actions.push(h('button', { type: 'button', class: 'act-grade', text: 'Grade…', onclick: () => gradeDialog(r, ctx, false) }));
    actions.push(h('button', { type: 'button', class: 'act-demote danger', text: 'Demote…', onclick: () => gradeDialog(r, ctx, true) }));
    actions.push(h('button', { type: 'button', class: 'act-retire danger', text: 'Retire…', onclick: () => retireDialog(r, ctx) }));
  }
  const flag = ctx.flags?.get(r.slug);
  append(li, [
    h('div', { class: 'line1' },
      h('h3', { class: 'label', text: r.label }),
      h('code', { class: 'slug', text: r.slug }),
      medulla ? badge('medulla', 'promoted') : null,
      r.tier === 'team' ? badge('team', 'promoted', 'the team medulla') : null,
      r.member ? badge(`by ${r.member}`, '', 'the team member who wrote it (the database says so)') : null,
      r.conflict ? badge('conflict', 'flag', `${r.conflict.member} superseded the same version at the same time: ${r.conflict.with}`) : null,
      r.races?.length ? badge('conflict', 'flag', r.races.map((x) => `${x.member} (${x.act}) meant ${x.version}`).join('; ')) : null,
      r.strength ? badge(r.strength, `strength-${r.strength}`, 'strength') : null,
      badge(`trust ${trust}`, '', tc ? `graded correct ${tc.correct}, partial ${tc.partial}, wrong ${tc.wrong}` : 'trust'),
      typeof r.version === 'number' ? badge(`v${r.version}`, '', 'version') : null,
      badge(`${fmtAge(r.age_ms)} old`, '', r.created ? `created ${fmtDate(r.created)}` : ''),
      r.stale ? badge('stale', 'stale', 'older than 30 days') : null,
      r.aged_out ? badge('aged out', 'aged', 'older than the 720 h half-life') : null,
      r.promoted_to ? badge('promoted', 'promoted', r.promoted_to) : null,
      typeof r.score === 'number' ? badge(`score ${r.score.toFixed(3)}`, '', 'recall score') : null,
      flag?.flag ? badge(flag.flag.replaceAll('_', ' '), 'flag', `${flag.kind} by ${flag.agent}: not expected of this agent (audited, not enforced)`) : null,
      r.state === 'outdated' ? badge('outdated', 'aged') : null),
    text,
    h('p', { class: 'meta' },
      'by ', h('code', { text: r.source_agent || 'unknown' }),
      ' · ', time(r.created),
      ' · origin ', h('code', { text: r.origin_brain || 'unknown' }),
      r.evidence?.length ? [' · evidence ', r.evidence.join(', ')] : null,
      r.supersedes ? [' · supersedes ', versionRef(r.supersedes)] : null,
      r.content_hash ? [' · ', h('code', { title: r.content_hash, text: short(r.content_hash) })] : null),
    r.promotion ? chainLine(r.promotion) : null,
    ws ? witnessLine(ws) : null,
    r.evidence_changed?.length ? evidenceLine(r.evidence_changed) : null,
    r.outdated_reason ? h('p', { class: 'warnline', text: `outdated: ${r.outdated_reason}` }) : null,
    r.conflict ? h('p', { class: 'warnline conflict', text: `conflict: ${r.conflict.member} wrote ${r.conflict.with} over the same version at the same time; this one is ${r.state === 'outdated' ? 'kept in history' : 'live (later in the team\'s log)'}. Read both, then write the version that holds.` }) : null,
    ...(r.races || []).map((x) => h('p', { class: 'warnline conflict', text: `conflict: ${x.member} (${x.act}) meant ${x.version}, which another member superseded meanwhile; the act is kept here, not applied to the live version. Read both, then grade or retire the version that holds.` })),
    h('div', { class: 'actions' }, actions),
    hist,
  ]);
  if (ctx.open.has(r.slug)) queueMicrotask(() => { histBtn.setAttribute('aria-expanded', 'true'); load(hist, () => historyOf(r, ctx)); });
  return li;
}

/** A medulla copy's origin chain: learned in, by, when; promoted by, when, why. */
function chainLine(p) {
  if (p.chain) return h('p', { class: 'chain', text: p.chain });
  return h('p', { class: 'chain' },
    `learned in ${p.origin_claim || 'unknown'} by ${p.origin_agent || 'unknown'} (${p.origin_created ? fmtDate(p.origin_created) : 'unknown'}); `,
    `promoted by ${p.promoted_by || 'unknown'} (${fmtDate(p.promoted_at)}): ${p.promotion_reason || 'no reason recorded'}`);
}

/** Anchored evidence files that changed or disappeared since the claim was written. */
function evidenceLine(changes) {
  return h('p', { class: 'warnline evidence-changed' },
    h('strong', { text: 'Verify before relying on it: its evidence changed' }), ' — ',
    changes.map((c, i) => [
      i ? ', ' : '',
      h('code', { text: c.lines ? `${c.path}:${c.lines[0]}-${c.lines[1]}` : c.path }),
      ` ${c.state} since `, time(c.since),
    ]),
    '. Grade it correct to re-anchor it, or retire it.');
}

function witnessLine(ws) {
  return h('p', { class: 'warnline witness' },
    h('strong', { text: 'Its project witness changed since the promotion' }),
    ws.at ? [' on ', time(ws.at)] : null,
    ws.by_version != null ? ` (now v${ws.by_version})` : null,
    ws.new_text ? [': “', ws.new_text, '”'] : null,
    '. This copy still says what was promoted: promote again to follow it, or demote.');
}

async function historyOf(r, ctx) {
  const args = { slug: r.slug };
  if (r.tier === 'medulla') args.tier = 'medulla';
  const v = await call('history', args, r.tier === 'medulla' ? undefined : ctx.brain?.fp);
  const versions = v.versions || [];
  return [
    h('h4', { class: 'muted', text: `${versions.length} version${versions.length === 1 ? '' : 's'}, oldest first` }),
    h('ol', { class: 'timeline', 'aria-label': `history of ${r.label}` }, versions.map((x) => h('li', { class: x.state, 'data-version': x.version },
      h('div', { class: 'when' },
        `v${x.version} · `, time(x.created), ' · by ', h('code', { text: x.source_agent }), ` · ${x.strength} · `,
        x.state === 'outdated' ? badge('outdated', 'aged') : badge('live', 'good')),
      h('p', { class: 'vtext', text: x.text }),
      x.outdated_reason ? h('p', { class: 'meta', text: `why outdated: ${x.outdated_reason}` }) : null,
      x.promoted_to ? h('p', { class: 'meta' }, 'promoted to ', versionRef(x.promoted_to)) : null,
      x.supersedes ? h('p', { class: 'meta' }, 'supersedes ', versionRef(x.supersedes)) : null,
      x.promotion ? chainLine(x.promotion) : null))),
  ];
}

/** A brain's (or the medulla's) act log, paged by `next_before`. */
async function actsPanel(el, brainName, label) {
  const stack = [];
  let before;
  const page = async () => {
    const v = await get('/api/acts', { brain: brainName, before, limit: 50 });
    const pager = h('div', { class: 'pager' },
      h('button', { type: 'button', disabled: !stack.length, text: '← Newer', onclick: () => { before = stack.pop(); load(el, page); } }),
      h('span', { text: v.acts.length ? `acts ${v.acts[0].seq} down to ${v.acts[v.acts.length - 1].seq}, newest first` : 'no acts' }),
      h('button', { type: 'button', disabled: v.next_before == null, text: 'Older →', onclick: () => { stack.push(before); before = v.next_before; load(el, page); } }));
    return [pager, h('div', { class: 'tablewrap' }, h('table', { class: 'acts' },
      h('caption', { text: `The act log of ${label}: every change of state, who, when, content hashes before and after` }),
      h('thead', {}, h('tr', {}, ['seq', 'when', 'kind', 'subject', 'actor', 'before → after', 'note'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, v.acts.map((a) => h('tr', { 'data-seq': a.seq },
        h('td', { class: 'num', text: a.seq }),
        h('td', {}, time(a.at)),
        h('td', {}, badge(a.kind)),
        h('td', {}, h('code', { text: a.subject })),
        h('td', {}, h('code', { text: a.actor })),
        h('td', {}, h('code', { class: 'mono', title: `${a.before_hash || 'none'} → ${a.after_hash || 'none'}`, text: `${short(a.before_hash)} → ${short(a.after_hash)}` })),
        h('td', { text: a.note || '' })))))),
    ];
  };
  await load(el, page);
  listen(el, (batch) => { if (!stack.length && touches(batch, brainName === 'medulla' ? 'medulla' : label)) load(el, page); });
}

async function boxPanel(el, brainName, label) {
  const draw = async () => {
    const v = await get('/api/mailbox', { brain: brainName });
    return [
      fateCounts(v.counts),
      h('p', { class: 'muted' }, 'box ', h('code', { text: v.box })),
      v.letters.length ? letterList(v.letters) : h('p', { class: 'empty', text: `No letter in the box of ${label}.` }),
    ];
  };
  await load(el, draw);
  listen(el, (batch) => { if (batch.some((e) => e.kind === 'mail')) load(el, draw); });
}

// ---------------------------------------------------------------- founder actions

/**
 * The confirmation step of every founder action: the dialog says what will happen;
 * nothing is sent until Confirm. `run` returns the message to show once it landed.
 */
function confirmAct({ heading, body, run, okText = 'Confirm', danger = false }) {
  const dlg = $('#confirm');
  const form = $('#confirm-form');
  const ok = $('#confirm-ok');
  const err = $('#confirm-error');
  $('#confirm-title').textContent = heading;
  replace($('#confirm-body'), body);
  ok.textContent = okText;
  ok.className = danger ? 'danger' : 'primary';
  ok.disabled = false;
  err.hidden = true;
  const cleanup = () => { form.onsubmit = null; $('#confirm-cancel').onclick = null; };
  $('#confirm-cancel').onclick = () => { dlg.close(); cleanup(); };
  dlg.onclose = cleanup;
  form.onsubmit = async (e) => {
    e.preventDefault();
    if (!form.reportValidity()) return;
    ok.disabled = true;
    ok.textContent = 'Working…';
    try {
      const message = await run();
      dlg.close();
      toast(message);
    } catch (x) {
      if (x instanceof Locked) { dlg.close(); return; }
      err.textContent = `${x.code ? x.code + ': ' : ''}${x.message}`;
      err.hidden = false;
      ok.disabled = false;
      ok.textContent = okText;
    }
  };
  dlg.showModal();
  const first = $('#confirm-body input, #confirm-body textarea', dlg);
  (first || ok).focus();
}

function claimSummary(r) {
  return h('div', { class: 'what' }, h('strong', { text: r.label }), ' ', h('code', { text: r.slug }), h('br'), r.text.length > 300 ? r.text.slice(0, 300) + '…' : r.text);
}

function capLine(cap) {
  if (!cap) return '';
  return ` The medulla holds ${cap.live} live (soft cap ${cap.soft_cap}, warn from ${cap.warn_from}: ${cap.status}).${cap.message ? ' ' + cap.message : ''}`;
}

function promoteDialog(r, ctx) {
  const reason = h('input', { type: 'text', id: 'promote-reason', required: true, maxlength: 500, pattern: '.*\\S.*', placeholder: 'why every project should know this' });
  confirmAct({
    heading: 'Promote into the medulla',
    okText: 'Promote',
    body: [
      h('p', {}, 'Copy this claim of ', h('code', { text: ctx.brain.root }), ' into the medulla, where every brain’s default recall will find it. The project claim stays as the witness and is stamped promoted_to.'),
      claimSummary(r),
      h('p', {}, h('label', { class: 'field' }, 'Why (one line, recorded in the audit log)', reason)),
    ],
    run: async () => {
      const v = await call('promote', { brain: ctx.brain.fp, claim: r.slug, reason: reason.value.trim(), agent_id: AGENT });
      refreshSoon();
      return `Promoted “${r.label}” (${v.outcome}) as ${v.medulla_claim?.slug || r.slug}.${capLine(v.medulla_cap)}`;
    },
  });
}

function gradeDialog(r, ctx, demote) {
  const medulla = r.tier === 'medulla';
  const note = h('input', { type: 'text', id: 'grade-note', maxlength: 500, required: demote, pattern: demote ? '.*\\S.*' : null, placeholder: demote ? 'why it is wrong' : 'optional' });
  const verdicts = demote ? [] : ['correct', 'partial', ...(medulla ? [] : ['wrong'])];
  const radios = verdicts.map((v, i) => h('label', {}, h('input', { type: 'radio', name: 'verdict', value: v, checked: i === 0 }), ` ${v} `));
  confirmAct({
    heading: demote ? 'Demote from the medulla' : 'Grade this claim',
    okText: demote ? 'Demote' : 'Grade',
    danger: demote,
    body: [
      demote
        ? h('p', {}, 'Grade this medulla claim wrong: its medulla version moves to history as outdated (“demoted: <why>”). Its project witness is not touched.')
        : h('p', {}, 'Your verdict adjusts this claim’s trust', medulla ? ' in the medulla.' : [' in ', h('code', { text: ctx.brain?.root || '' }), '.']),
      claimSummary(r),
      demote ? null : h('fieldset', {}, h('legend', { text: 'Verdict' }), radios),
      h('p', {}, h('label', { class: 'field' }, demote ? 'Why (one line)' : 'Note', note)),
    ],
    run: async () => {
      const verdict = demote ? 'wrong' : $('#confirm-body input[name=verdict]:checked').value;
      const args = { slug: r.slug, verdict, agent_id: AGENT };
      if (note.value.trim()) args.note = note.value.trim();
      if (medulla) args.tier = 'medulla';
      const v = await call('learn', args, medulla ? undefined : ctx.brain?.fp);
      refreshSoon();
      if (v.demoted) return `Demoted “${r.label}” from the medulla; the witness is untouched.${capLine(v.medulla_cap)}`;
      return `Graded “${r.label}” ${verdict}: trust now ${v.claim?.trust?.toFixed?.(2) ?? '—'}.`;
    },
  });
}

function retireDialog(r, ctx) {
  const medulla = r.tier === 'medulla';
  const reason = h('input', { type: 'text', id: 'retire-reason', maxlength: 500, required: true, pattern: '.*\\S.*', placeholder: 'why it no longer holds' });
  confirmAct({
    heading: medulla ? 'Retire from the medulla' : 'Retire this claim',
    okText: 'Retire',
    danger: true,
    body: [
      h('p', {}, 'Take this claim out of recall without a replacement: it moves to history as outdated (“retired: <why>”), recorded with who retired it. Nothing is erased; the label can be written again later.', medulla ? ' Its project witness is not touched.' : ''),
      claimSummary(r),
      h('p', {}, h('label', { class: 'field' }, 'Why (one line)', reason)),
    ],
    run: async () => {
      const args = { slug: r.slug, reason: reason.value.trim(), agent_id: AGENT };
      if (medulla) args.tier = 'medulla';
      await call('retire', args, medulla ? undefined : ctx.brain?.fp);
      refreshSoon();
      return `Retired “${r.label}”${medulla ? ' from the medulla; the witness is untouched' : ''}: out of recall, kept in history.`;
    },
  });
}

function backupDialog() {
  confirmAct({
    heading: 'Back up every store',
    okText: 'Back up',
    body: [h('p', {}, 'Copy every store (each from one read transaction; writes go on meanwhile), the spool, the boxes and the config into a new directory under $MEDULLA_HOME/backups/, with a manifest of counts and sha256 hashes.')],
    run: async () => {
      const v = await call('backup', {});
      const stores = v.manifest?.stores || [];
      const failed = v.manifest?.failed || [];
      const live = stores.reduce((a, st) => a + (st.counts?.live_claims || 0), 0);
      return `Backed up ${plural(stores.length, 'store')} (${plural(live, 'live claim')}) in ${fmtNum(v.duration_ms)} ms into ${v.dir}${failed.length ? `; not copied: ${failed.map((f) => f.root || f.store).join(', ')}` : ''}.`;
    },
  });
}

/** After an action: the event stream will say so too; this covers a stream that is down. */
function refreshSoon() {
  if (S.live !== 'on') setTimeout(() => S.view?.onEvents([{ kind: 'act' }]), 50);
}

// ---------------------------------------------------------------- the medulla

async function viewMedulla(root, [tab = 'doctrine']) {
  const inst = await instances();
  const live = inst.medulla?.claims ?? 0;
  const [st, cls, says] = capStatus(live);
  const body = h('div', {});
  root.append(
    ...title('The medulla'),
    h('p', { class: 'lede', text: 'What belongs to no single repository: doctrine, preferences, findings confirmed across projects. Every brain’s default recall reads it; only the audit actor writes it.' }),
    h('div', { class: 'panel' },
      h('p', {}, h('strong', { 'data-stat': 'medulla-live', text: `${plural(live, 'live claim')}` }), ` against a soft cap of ${SOFT_CAP} (warn from ${WARN_FROM}) `, badge(st, cls, says)),
      capMeter(live),
      h('p', { class: 'muted', text: `${plural(inst.medulla?.history_versions ?? 0, 'outdated version')} in history · ${plural(inst.medulla?.acts ?? 0, 'act')}` })),
    h('nav', { class: 'tabs', 'aria-label': 'Medulla sections' },
      [['doctrine', 'Doctrine'], ['acts', 'Act log'], ['mailbox', 'Mailbox']].map(([t, label]) => h('a', { href: href('medulla', t), 'aria-current': t === tab ? 'page' : false, text: label }))),
    body);
  if (tab === 'acts') await actsPanel(body, 'medulla', 'the medulla');
  else if (tab === 'mailbox') await boxPanel(body, 'medulla', 'the medulla');
  else await doctrinePanel(body);
  focusTitle(root);
}

async function doctrinePanel(el) {
  const filter = h('input', { type: 'search', id: 'doctrine-filter', placeholder: 'label, text, origin, agent…', autocomplete: 'off' });
  const list = h('div', {});
  el.append(h('div', { class: 'toolbar', role: 'search' }, h('label', {}, 'Filter doctrine', filter)), list);
  const ctx = { brain: null, open: new Set(), flags: new Map() };
  let rows = [];
  let total = 0;
  const fetchAll = async () => {
    const [claims, audit] = await Promise.all([get('/api/claims', { brain: 'medulla', limit: 5000 }), get('/api/audit', { limit: 500 })]);
    rows = claims.claims;
    total = claims.total;
    ctx.flags = new Map();
    for (const e of audit.entries || []) if (!ctx.flags.has(e.slug) && e.kind !== 'demote' && e.kind !== 'witness_superseded') ctx.flags.set(e.slug, e);
  };
  const draw = () => {
    const q = filter.value.trim().toLowerCase();
    const shown = rows.filter((r) => !q || [r.label, r.text, r.origin_brain, r.source_agent, r.promotion?.chain].some((s) => s && s.toLowerCase().includes(q)));
    const changed = shown.filter((r) => r.witness_superseded);
    const flagged = shown.filter((r) => ctx.flags.get(r.slug)?.flag);
    return [
      changed.length ? [h('h2', { text: `Witness changed since promotion (${changed.length})` }),
        h('p', { class: 'muted', text: 'These medulla copies say what their project claim said when promoted; the project has since written a new version.' }),
        claimList(changed, ctx)] : null,
      flagged.length ? h('p', { class: 'warnline', text: `${flagged.length} claim${flagged.length === 1 ? '' : 's'} arrived by an agent not expected to promote (etiquette is audited, not enforced): see the flags below and the Audit view.` }) : null,
      h('h2', { text: `Doctrine (${shown.length}${shown.length !== total ? ` of ${total}` : ''})` }),
      shown.length ? claimList(shown, ctx) : h('p', { class: 'empty', text: rows.length ? 'Nothing matches the filter.' : 'The medulla holds no claim yet.' }),
    ];
  };
  await load(list, async () => { await fetchAll(); return draw(); });
  filter.addEventListener('input', () => replace(list, draw()));
  listen(list, (batch) => { if (touches(batch, 'medulla')) load(list, async () => { await fetchAll(); return draw(); }); });
}

// ---------------------------------------------------------------- audit

async function viewAudit(root, _parts, query) {
  const inst = await instances();
  const brain = h('select', { id: 'audit-brain', name: 'brain' },
    h('option', { value: '', text: 'every origin' }),
    h('option', { value: 'medulla', text: 'medulla (doctrine births)' }),
    (inst.instances || []).filter((b) => b.root).map((b) => h('option', { value: b.root, text: b.root })));
  brain.value = query.get('brain') || '';
  const agent = h('input', { type: 'text', id: 'audit-agent', name: 'agent', list: 'audit-agents', placeholder: 'vendor:role', value: query.get('agent') || '' });
  const agents = h('datalist', { id: 'audit-agents' });
  const limit = h('select', { id: 'audit-limit', name: 'limit' }, [50, 100, 500].map((n) => h('option', { value: n, text: n })));
  limit.value = query.get('limit') || '100';
  const flagsOnly = h('input', { type: 'checkbox', id: 'audit-flags', checked: query.get('flags') === '1' });
  const form = h('form', { class: 'toolbar', 'aria-label': 'Filter the audit log' },
    h('label', {}, 'Origin brain', brain),
    h('label', {}, 'Agent', agent), agents,
    h('label', {}, 'Entries', limit),
    h('label', {}, h('span', {}, flagsOnly, ' flags only')),
    h('button', { type: 'submit', class: 'primary', text: 'Filter' }));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const p = new URLSearchParams({ brain: brain.value, agent: agent.value.trim(), limit: limit.value, flags: flagsOnly.checked ? '1' : '' });
    location.hash = `#/audit?${p}`;
  });
  const table = h('div', {});
  root.append(
    ...title('Audit'),
    h('p', { class: 'lede', text: 'The medulla’s audit log: promotions, doctrine births and demotions, newest first. Only *:orchestrator and human:founder are expected to promote; others land flagged. Agent ids are self-declared: this is an audit trail, not a lock.' }),
    form, table);
  const draw = async () => {
    const v = await get('/api/audit', { brain: brain.value, agent: agent.value.trim(), limit: limit.value });
    const seen = new Set((v.entries || []).map((e) => e.agent));
    replace(agents, [...seen].map((a) => h('option', { value: a })));
    const entries = (v.entries || []).filter((e) => !flagsOnly.checked || e.flag);
    if (!entries.length) return h('p', { class: 'empty', text: 'No entry matches.' });
    return h('div', { class: 'tablewrap' }, h('table', { class: 'audit' },
      h('caption', { text: v.caption || `${entries.length} entries` }),
      h('thead', {}, h('tr', {}, ['when', 'kind', 'claim', 'agent', 'origin', 'reason', 'etiquette'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, entries.map((e) => h('tr', { 'data-slug': e.slug, 'data-kind': e.kind },
        h('td', {}, time(e.at)),
        h('td', {}, badge(e.kind.replaceAll('_', ' '))),
        h('td', {}, h('code', { text: e.slug }), e.origin_claim ? h('div', { class: 'muted mono', text: e.origin_claim }) : null),
        h('td', {}, h('code', { text: e.agent })),
        h('td', {}, h('code', { text: e.origin_brain })),
        h('td', { text: e.reason || '' }),
        h('td', {}, e.flag ? badge(e.flag.replaceAll('_', ' '), 'flag', 'this agent was not expected to do this') : e.etiquette_expected ? badge('expected', 'good') : badge('—')))))));
  };
  await load(table, draw);
  focusTitle(root);
  listen(table, (batch) => { if (touches(batch, 'medulla')) load(table, draw); });
}

// ---------------------------------------------------------------- mailbox

function fateMark(state) {
  const key = state || 'settled';
  const f = FATES[key] || { mark: '?', name: key, says: '' };
  return h('span', { class: 'fate', 'data-fate': key, title: f.says }, h('span', { 'aria-hidden': 'true', text: f.mark }), f.name);
}

function fateCounts(c) {
  if (!c) return null;
  return h('ul', { class: 'summary', 'aria-label': 'Letters by fate' },
    ['wet_ink', 'in_flight', 'fired_clay', 'external'].map((k) => h('li', {}, h('b', { text: fmtNum(c[k]) }), fateMark(k))),
    h('li', {}, h('b', { text: fmtNum(c.open) }), 'open (wet ink + in flight)'));
}

function letterList(letters) {
  return h('ul', { class: 'letters' }, letters.map((l) => h('li', { class: 'letter', 'data-letter': l.id, 'data-fate': l.state || 'settled' },
    h('div', { class: 'line1' },
      fateMark(l.state),
      h('code', { text: l.id }),
      l.class ? badge(l.class) : null,
      l.kind ? badge(l.kind, l.class === 'memory_misdelivery' ? 'flag' : '') : null,
      l.tool && l.tool !== 'medulla' ? badge(`tool ${l.tool}`) : null,
      h('span', { class: 'muted' }, l.agent ? h('code', { text: l.agent }) : null, ' ', time(typeof l.ts === 'number' ? l.ts : l.ts ?? null))),
    l.what ? h('p', { class: 'what', text: l.what }) : null,
    h('p', { class: 'meta muted' },
      l.repo ? ['repo ', h('code', { text: l.repo }), ' '] : null,
      l.answers?.length ? ['answers ', l.answers.map((a) => h('code', { text: a + ' ' }))] : null,
      l.answered_by?.length ? ['answered by ', l.answered_by.map((a) => h('code', { text: a + ' ' }))] : null),
    h('details', {}, h('summary', { text: 'the letter as written' }), h('pre', { class: 'mono', text: JSON.stringify(l.letter, null, 2) })))));
}

async function viewMailbox(root) {
  const body = h('div', {});
  const fateFilter = new Set();
  root.append(
    ...title('Mailbox'),
    h('p', { class: 'lede', text: 'Field reports: every letter once (the spool and every known box), with its fate. Fates are derived, never stored: wet ink is unanswered, in flight is answered but not closed, fired clay is closed by a triage or receipt, external is about another tool.' }),
    body);
  let sweep;
  const draw = () => {
    const letters = sweep.letters.filter((l) => !fateFilter.size || fateFilter.has(l.state || 'settled'));
    const boxes = new Map();
    for (const l of letters) {
      // The box a letter was filed into; a letter only in the spool is not delivered yet.
      const boxesOf = (l.found_in || []).filter((f) => f !== 'spool');
      const where = boxesOf.length ? boxesOf[0] : 'the spool only (not filed in a box)';
      if (!boxes.has(where)) boxes.set(where, []);
      boxes.get(where).push(l);
    }
    const filters = h('fieldset', { class: 'toolbar' }, h('legend', { text: 'Show fates' }),
      Object.keys(FATES).map((k) => h('label', {}, h('span', {}, h('input', { type: 'checkbox', checked: fateFilter.has(k), onchange: (e) => { e.target.checked ? fateFilter.add(k) : fateFilter.delete(k); replace(body, draw()); } }), ' ', fateMark(k)))));
    return [
      fateCounts(sweep.counts),
      h('div', { class: 'grid2' },
        h('div', { class: 'panel' }, h('h2', { text: 'Not delivered' }), h('dl', { class: 'kv' },
          h('dt', { text: 'pending distribution' }), h('dd', { 'data-stat': 'pending', text: fmtNum(sweep.pending_distribution) }),
          h('dt', { text: 'refused at the floor' }), h('dd', { 'data-stat': 'refused', text: fmtNum(sweep.refused_at_floor) }),
          h('dt', { text: 'spool lines not letters' }), h('dd', { text: fmtNum(sweep.spool_garbage_lines) }))),
        h('div', { class: 'panel' }, h('h2', { text: `Unreachable boxes (${sweep.unreachable.length})` }),
          sweep.unreachable.length
            ? h('ul', {}, sweep.unreachable.map((u) => h('li', {}, h('code', { text: u.box }), ': ', u.why)))
            : h('p', { class: 'empty', text: 'Every known box could be read.' }))),
      filters,
      [...boxes].map(([where, ls]) => h('section', { class: 'box', 'aria-label': `box ${where}` },
        h('h3', { text: `${where} (${ls.length})` }),
        letterList(ls.slice(0, 300)),
        ls.length > 300 ? h('p', { class: 'muted', text: `and ${ls.length - 300} more` }) : null)),
      letters.length ? null : h('p', { class: 'empty', text: 'No letter.' }),
    ];
  };
  const fetchDraw = async () => { sweep = await get('/api/mailbox/sweep'); return draw(); };
  await load(body, fetchDraw);
  focusTitle(root);
  listen(body, (batch) => { if (batch.some((e) => e.kind === 'mail' || e.verb === 'report')) load(body, fetchDraw); });
}

// ---------------------------------------------------------------- doctor

async function viewDoctor(root) {
  const body = h('div', {});
  root.append(
    ...title('Doctor'),
    h('p', { class: 'lede', text: 'Whether memory is being delivered well: confirmed misdelivery per ISO week, letters that did not arrive, and anything broken. Owner-wide numbers.' }),
    body);
  const draw = async () => {
    const d = await get('/api/doctor');
    const L = d.letters || {};
    return [
      h('h2', { text: 'Misdelivery per week' }),
      misdeliveryChart(d.misdelivery_by_week || {}),
      h('div', { class: 'grid2' },
        h('section', { class: 'panel' }, h('h2', { text: 'Letters' }), h('dl', { class: 'kv' },
          h('dt', { text: 'pending distribution' }), h('dd', { 'data-stat': 'pending', text: fmtNum(L.pending_distribution) }),
          h('dt', { text: 'refused at the floor' }), h('dd', { 'data-stat': 'refused', text: fmtNum(L.refused_at_floor) }),
          h('dt', { text: 'spool lines not letters' }), h('dd', { text: fmtNum(L.spool_garbage_lines) }),
          h('dt', { text: 'unreachable boxes' }), h('dd', {}, (L.unreachable_boxes || []).length
            ? h('ul', {}, L.unreachable_boxes.map((u) => h('li', {}, h('code', { text: u.box }), ': ', u.why)))
            : 'none'))),
        h('section', { class: 'panel' }, h('h2', { text: 'Broken' }),
          (d.broken || []).length
            ? h('ul', { class: 'broken' }, d.broken.map((b) => h('li', { class: 'error' }, h('code', { text: b.brain }), ': ', b.problem)))
            : h('p', { class: 'good', text: 'Nothing broken: every store readable, every index in step, every box writable.' })),
        h('section', { class: 'panel' }, h('h2', { text: 'Owner-wide' }), h('dl', { class: 'kv' },
          h('dt', { text: 'live claims, all stores' }), h('dd', { text: fmtNum(d.live_claims_all_stores) }),
          h('dt', { text: 'beats served since start' }), h('dd', { text: fmtNum(d.memory_beats_served_since_start) }),
          h('dt', { text: 'brains on disk / warm' }), h('dd', { text: `${fmtNum(d.brains?.on_disk)} / ${fmtNum(d.brains?.warm)}` }),
          h('dt', { text: 'medulla' }), h('dd', { text: `${fmtNum(d.medulla?.live)} live, soft cap ${d.medulla?.soft_cap}, warn from ${d.medulla?.warn_from}` })),
        d.caption ? h('p', { class: 'muted', text: d.caption }) : null)),
      h('div', { class: 'grid2' },
        h('section', { class: 'panel', id: 'near-duplicates' }, h('h2', { text: 'Near-duplicates' }),
          (d.near_duplicates || []).length
            ? d.near_duplicates.map((n) => h('div', {},
              h('h3', {}, h('code', { text: n.store })),
              n.clusters.map((c) => h('ul', { class: 'cluster' }, c.map((m) => h('li', { 'data-slug': m.slug },
                h('strong', { text: m.label }), ' ', h('code', { text: m.slug }), ' ',
                h('button', { type: 'button', class: 'act-retire danger', text: 'Retire…', onclick: () => retireDialog(
                  { slug: m.slug, label: m.label, text: 'says nearly what the others of its cluster say', tier: n.store === 'medulla' ? 'medulla' : 'project' },
                  { brain: n.store === 'medulla' ? null : { fp: n.store, root: n.store } }) }))))),
              n.capped ? h('p', { class: 'muted', text: 'only the most recent claims were checked' }) : null))
            : h('p', { class: 'good', text: 'No live claims say the same thing under two labels.' })),
        h('section', { class: 'panel', id: 'evidence-drift' }, h('h2', { text: 'Evidence drift' }),
          (d.evidence_drift || []).length
            ? h('ul', {}, d.evidence_drift.map((x) => h('li', { class: x.drifted ? 'warn' : '' },
              h('code', { text: x.brain }), `: ${plural(x.drifted, 'claim')} of ${fmtNum(x.anchored)} anchored changed since written`)))
            : h('p', { class: 'muted', text: 'No claim carries anchored evidence yet.' }))),
      (d.nudges || []).length
        ? h('section', { class: 'panel', id: 'nudges' }, h('h2', { text: 'Does the nudge pay?' }),
          h('p', { class: 'muted', text: 'Per brain: agent sessions the client hooks saw, those asked once at the end of real work to debrief, and the claims written within 30 minutes of an ask.' }),
          h('ul', {}, d.nudges.map((n) => h('li', {},
            h('code', { text: n.brain }),
            `: ${plural(n.sessions_seen, 'session')}, ${fmtNum(n.sessions_nudged)} asked, ${plural(n.claims_after_nudge, 'claim')} written after an ask`))))
        : null,
      d.team ? teamPanel(d.team) : null,
      h('section', { class: 'panel', id: 'backup' }, h('h2', { text: 'Backup' }),
        h('p', { class: 'muted', text: 'A consistent copy of every store, the spool and the config, written while serving into $MEDULLA_HOME/backups/. Restore one with `medulla restore` (the owner stopped).' }),
        h('button', { type: 'button', class: 'act-backup', text: 'Back up now', onclick: () => backupDialog() })),
    ];
  };
  await load(body, draw);
  focusTitle(root);
  listen(body, () => load(body, draw));
}

/** The team link (SPEC §13): status, queue, members, shared brains, conflicts, and the team medulla's claims. */
function teamPanel(t) {
  const ctx = { brain: null, open: new Set(), flags: new Map() };
  const claims = h('div', {});
  load(claims, async () => {
    const c = await get('/api/claims', { brain: 'team', limit: 200 });
    return [h('h3', { text: `Team medulla (${fmtNum(c.total)})` }),
      c.claims.length ? claimList(c.claims, ctx) : h('p', { class: 'empty', text: 'The team medulla holds no claim yet.' })];
  });
  const ok = t.status === 'connected';
  return h('section', { class: 'panel', id: 'team' }, h('h2', { text: 'Team' }),
    h('dl', { class: 'kv' },
      h('dt', { text: 'database' }), h('dd', {}, h('code', { text: t.url }), ' as ', h('code', { text: t.member })),
      h('dt', { text: 'link' }), h('dd', { class: ok ? 'good' : 'error', 'data-stat': 'team-status', text: ok ? 'connected' : `${t.status}${t.since ? ` since ${fmtDate(t.since)}` : ''}${t.error ? `: ${t.error}` : ''}` }),
      h('dt', { text: 'queued here' }), h('dd', { 'data-stat': 'team-queued', text: fmtNum(t.queued) }),
      h('dt', { text: 'kept here by the floor' }), h('dd', { text: fmtNum(t.refused) }),
      h('dt', { text: 'log not yet applied' }), h('dd', { text: fmtNum(t.lag) }),
      h('dt', { text: 'members' }), h('dd', { text: (t.members || []).join(', ') || 'none yet' }),
      h('dt', { text: 'shared brains' }), h('dd', {}, (t.shared || []).length
        ? h('ul', {}, t.shared.map((s) => h('li', {}, h('code', { text: s.root }), ' as ', h('code', { text: s.label || s.key }))))
        : 'none (run `medulla team share` in a repository)')),
    (t.conflicts || []).length
      ? [h('h3', { text: `Conflicts (${t.conflicts.length})` }), claimList(t.conflicts, ctx)]
      : h('p', { class: 'good', text: 'No conflicting versions between members.' }),
    (t.purge_requests || []).length
      ? [h('h3', { text: `Purges asked of the admin (${t.purge_requests.length})` }),
        h('ul', { class: 'purge-requests' }, t.purge_requests.map((r) => h('li', { class: 'warnline' },
          `${r.member} asked to erase `, h('code', { text: r.slug }), ` in ${r.store}: `, h('code', { text: r.fix }))))]
      : null,
    claims);
}

/** A stacked bar per ISO week, one colour per kind, drawn as inline SVG; a table too. */
function misdeliveryChart(byWeek) {
  const weeks = Object.keys(byWeek).sort().slice(-26);
  if (!weeks.length) return h('p', { class: 'empty', text: 'No misdelivery reported. (Agents report one as a letter of class memory_misdelivery.)' });
  const kinds = [...KINDS];
  for (const w of weeks) for (const k of Object.keys(byWeek[w])) if (!kinds.includes(k)) kinds.push(k);
  const totals = weeks.map((w) => Object.values(byWeek[w]).reduce((a, b) => a + b, 0));
  const max = Math.max(1, ...totals);
  const W = Math.max(360, weeks.length * 46 + 50), H = 200, left = 34, bottom = 30, top = 10;
  const plotH = H - bottom - top;
  const bw = Math.min(30, (W - left - 10) / weeks.length - 10);
  const ticks = [...new Set([0, Math.ceil(max / 2), max])];
  const y = (v) => top + plotH - (v / max) * plotH;
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': `misdelivery events per week: ${weeks.map((w, i) => `${w} ${totals[i]}`).join(', ')}` },
    ticks.map((t) => [
      svg('line', { class: 'axis', x1: left, x2: W - 5, y1: y(t), y2: y(t) }),
      svg('text', { x: left - 6, y: y(t) + 4, 'text-anchor': 'end' }, String(t)),
    ]),
    weeks.map((w, i) => {
      const x = left + 8 + i * ((W - left - 10) / weeks.length);
      let acc = 0;
      return [
        kinds.filter((k) => byWeek[w][k]).map((k) => {
          const v = byWeek[w][k];
          const r = svg('rect', { class: `k-${KINDS.includes(k) ? k : 'unknown'}`, x, width: bw, y: y(acc + v), height: Math.max(1, y(acc) - y(acc + v)) }, svg('title', {}, `${w}: ${v} ${k.replaceAll('_', ' ')}`));
          acc += v;
          return r;
        }),
        svg('text', { x: x + bw / 2, y: H - bottom + 14, 'text-anchor': 'middle' }, w.replace(/^\d{4}-/, '')),
        svg('text', { x: x + bw / 2, y: y(acc) - 3, 'text-anchor': 'middle' }, String(acc)),
      ];
    }));
  const legend = h('ul', { class: 'legend', 'aria-hidden': 'true' }, kinds.map((k) => h('li', {},
    svg('svg', { width: 12, height: 12, viewBox: '0 0 12 12' }, svg('rect', { class: `k-${KINDS.includes(k) ? k : 'unknown'}`, width: 12, height: 12, rx: 2 })), ' ', k.replaceAll('_', ' '))));
  const table = h('details', {}, h('summary', { text: 'the numbers' }), h('div', { class: 'tablewrap' }, h('table', {},
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'week' }), kinds.map((k) => h('th', { scope: 'col', class: 'num', text: k.replaceAll('_', ' ') })), h('th', { scope: 'col', class: 'num', text: 'total' }))),
    h('tbody', {}, weeks.map((w, i) => h('tr', {}, h('th', { scope: 'row', text: w }), kinds.map((k) => h('td', { class: 'num', text: byWeek[w][k] || 0 })), h('td', { class: 'num', text: totals[i] })))))));
  return h('figure', { class: 'chart', 'data-weeks': weeks.length }, chart, legend, table);
}

// ---------------------------------------------------------------- live

/**
 * The event stream, read with fetch so the session travels in its header (never in a
 * URL a log could keep). Resolves once with 'ok', 'refused' (no valid session) or
 * 'down'; then keeps reading, reconnecting after a drop. Events are batched so a burst
 * of writes costs one refresh.
 */
function connectLive() {
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

// ---------------------------------------------------------------- start

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
