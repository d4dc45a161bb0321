// The review page (#/review/<brain>): what agents wrote that no person has looked at, what tending left, and a person's keep, verify, retire, edit and merge, by keyboard too.
//
// Everything goes through `POST /api/review` and `POST /api/tend` (src/service/verbs/
// review.rs, tend.rs) as the founder: each act is recorded as `human:founder`. The list
// is one roving tab stop (j/k or the arrows move between claims); every action is also a
// real button. A dialog keeps what was typed when the owner refuses it (the secret
// floor's refusal shows in the dialog, the text stays in its field).

import { h, $, replace } from './dom.js';
import { fmtNum, fmtAge, plural, time, base, badge } from './format.js';
import { S, Locked, toast, listen, href, title, focusTitle, errorBox, touches } from './shell.js';
import { api, instances } from './api.js';

const LIMIT = 25;

/** The page's keys: what is pressed, what it does. */
const KEYS = [
  [['j', '↓'], 'the next claim'],
  [['k', '↑'], 'the previous claim'],
  [['y'], 'keep it: reviewed as it is'],
  [['v'], 'keep it and raise it to verified'],
  [['r'], 'retire it (asks why)'],
  [['e'], 'edit its text'],
  [['m'], 'merge a near-duplicate into it'],
  [['t'], 'tend now: a dry run, then Apply'],
  [['?'], 'show these keys'],
  [['Esc'], 'cancel a dialog'],
  [['Enter'], 'in a dialog: confirm (Ctrl+Enter from the text)'],
];

const ACTION_KEYS = { y: 'keep', v: 'verify', r: 'retire', e: 'edit', m: 'merge' };

// One key handler for the mounted page: a new mount replaces the last one's.
let onKey = null;

const review = (brain, args) => api('/api/review', { method: 'POST', body: { brain, ...args } });
const tend = (brain, args) => api('/api/tend', { method: 'POST', body: { brain, ...args } });
const errText = (e) => `${e.code ? e.code + ': ' : ''}${e.message}`;

/** The brain to open at `#/review`: the first with claims to review, else the medulla's turn. */
function pickStore(inst) {
  const brains = (inst.instances || []).filter((b) => b.root);
  const waiting = brains.find((b) => b.unreviewed > 0);
  if (waiting) return waiting.fingerprint;
  if (inst.medulla?.unreviewed > 0 || !brains.length) return 'medulla';
  return brains[0].fingerprint;
}

export async function viewReview(root, [id]) {
  const inst = await instances();
  const brains = (inst.instances || []).filter((b) => b.root);
  if (!id) {
    id = pickStore(inst);
    history.replaceState(null, '', `${location.pathname}${href('review', id)}`);
  }
  const byRoot = brains.find((b) => b.root === id);
  if (byRoot) id = byRoot.fingerprint;
  const brain = brains.find((b) => b.fingerprint === id);
  const name = id === 'medulla' ? 'the medulla' : id === 'team' ? 'the team medulla' : brain ? base(brain.root) : id;
  const st = { id, store: brain?.root || id, offset: 0, v: null, slug: null, index: 0, seq: 0, busy: false, tending: false, undone: new Set() };

  const option = (value, label, n) => h('option', { value, text: `${label} (${fmtNum(n ?? 0)} unreviewed)` });
  const picker = h('select', { id: 'review-store', name: 'store' },
    brains.map((b) => option(b.fingerprint, base(b.root), b.unreviewed)),
    option('medulla', 'the medulla', inst.medulla?.unreviewed),
    id === 'team' ? h('option', { value: 'team', text: 'the team medulla' }) : null,
    brain || ['medulla', 'team'].includes(id) ? null : h('option', { value: id, text: id }));
  picker.value = id;
  picker.addEventListener('change', () => { location.hash = href('review', picker.value); });
  const tendBtn = h('button', { type: 'button', id: 'review-tend', 'aria-keyshortcuts': 't', onclick: () => tendNow() }, 'Tend now ', kbd('t'));
  const keysBtn = h('button', { type: 'button', id: 'review-keys', 'aria-keyshortcuts': '?', 'aria-haspopup': 'dialog', onclick: () => showKeys() }, 'Keys ', kbd('?'));
  const err = h('p', { id: 'review-error', class: 'error', role: 'alert', hidden: true });
  const tendOut = h('section', { id: 'review-tend-result', class: 'panel tend-result', hidden: true, 'aria-live': 'polite', 'aria-labelledby': 'review-tend-title' });
  const summary = h('ul', { class: 'summary', 'aria-label': 'Review totals' });
  const list = h('div', { id: 'review-claims' });
  const left = h('div', { id: 'review-left' });
  const dialog = makeDialog();

  root.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/', text: 'Roster' }), ' / ', brain ? h('a', { href: href('brain', brain.fingerprint), text: name }) : name, ' / review'),
    ...title(`Review · ${name}`),
    h('p', { class: 'lede', text: 'What agents wrote that no person has looked at yet, newest first, with where it came from and what says nearly the same; then what tending left for a person. Keep, verify, retire, edit or merge: each is an act recorded as human:founder.' }),
    h('div', { class: 'toolbar' }, h('label', {}, 'Store', picker), tendBtn, keysBtn),
    h('p', { id: 'review-keyhint', class: 'keyhint muted' },
      kbd('j'), '/', kbd('k'), ' move · ', kbd('y'), ' keep · ', kbd('v'), ' keep & verify · ', kbd('r'), ' retire · ', kbd('e'), ' edit · ', kbd('m'), ' merge · ', kbd('t'), ' tend · ', kbd('?'), ' all keys'),
    err, summary, tendOut, list, left, dialog.el);

  const showError = (e) => {
    if (e instanceof Locked) return;
    err.textContent = errText(e);
    err.hidden = false;
  };
  const hideError = () => { err.hidden = true; };
  const items = () => [...list.querySelectorAll('li.review-item')];
  const claimOf = (slug) => (st.v?.claims || []).find((u) => u.claim.slug === slug);

  function setCurrent(li) {
    for (const x of items()) {
      const on = x === li;
      x.tabIndex = on ? 0 : -1;
      x.classList.toggle('current', on);
      if (on) x.setAttribute('aria-current', 'true');
      else x.removeAttribute('aria-current');
    }
    st.slug = li.dataset.slug;
    st.index = items().indexOf(li);
  }

  function focusItem(li) {
    li.focus({ preventScroll: true });
    li.scrollIntoView({ block: 'nearest' });
  }

  /** The claim focus is in (the keys act on it), if focus is in the list. */
  function focusedItem() {
    const li = document.activeElement?.closest?.('li.review-item');
    return li && list.contains(li) ? li : null;
  }

  /** Focus back on the claim that was current, else the one that took its place. */
  function focusCurrent() {
    const all = items();
    const li = all.find((x) => x.dataset.slug === st.slug) || all[Math.min(st.index, all.length - 1)];
    if (li) focusItem(li);
    else $('#review-claims-title', list)?.focus();
  }

  /** Move between claims; from outside the list, j or k first comes back to it. */
  function step(d) {
    const all = items();
    if (!all.length) return;
    const cur = focusedItem();
    if (!cur) {
      focusItem(all.find((x) => x.dataset.slug === st.slug) || all[0]);
      return;
    }
    focusItem(all[Math.max(0, Math.min(all.length - 1, all.indexOf(cur) + d))]);
  }

  async function refresh() {
    const seq = ++st.seq;
    let v;
    try {
      v = await review(st.id, { op: 'list', offset: st.offset, limit: LIMIT });
    } catch (e) {
      if (seq === st.seq) replace(list, errorBox(e));
      return;
    }
    if (seq !== st.seq || !root.isConnected) return;
    if (!v.claims?.length && st.offset > 0) {
      st.offset = Math.max(0, st.offset - LIMIT);
      return refresh();
    }
    // A redraw replaces the focused element: focus goes to its successor.
    const active = document.activeElement;
    const inList = list.contains(active);
    const inLeft = left.contains(active) ? active.closest('section')?.id || '' : null;
    const button = inList && active.matches('li.review-item button') ? [active.closest('li').dataset.slug, active.className] : null;
    st.v = v;
    st.store = v.store;
    draw(v);
    if (dialog.el.open) return;
    const same = button && [...list.querySelectorAll('li.review-item button')].find((x) => x.closest('li').dataset.slug === button[0] && x.className === button[1]);
    if (same) same.focus();
    else if (inList) focusCurrent();
    else if (inLeft !== null) ($(`#${inLeft}-title`, left) || $('h2', left) || $('#review-claims-title', list)).focus();
  }

  function draw(v) {
    const opt = [...picker.options].find((o) => o.value === st.id);
    if (opt && st.id !== 'team') opt.textContent = `${name} (${fmtNum(v.unreviewed)} unreviewed)`;
    replace(summary,
      h('li', {}, h('b', { 'data-stat': 'unreviewed', text: fmtNum(v.unreviewed) }), 'unreviewed'),
      h('li', {}, v.tended_at ? ['tended ', time(v.tended_at)] : 'never tended'),
      h('li', {}, h('b', { text: fmtNum(v.disagreements?.length || 0) }), 'disagreements'),
      h('li', {}, h('b', { text: fmtNum(v.retire?.length || 0) }), 'proposed for retirement'));
    const rows = v.claims || [];
    const end = st.offset + rows.length;
    const pager = v.next_offset != null || st.offset > 0
      ? h('div', { class: 'pager' },
        h('button', { type: 'button', disabled: st.offset === 0, text: '← Newer', onclick: () => { st.offset = Math.max(0, st.offset - LIMIT); refresh(); } }),
        h('span', { text: `${fmtNum(st.offset + 1)}–${fmtNum(end)} of ${fmtNum(v.unreviewed)}, newest first` }),
        h('button', { type: 'button', disabled: v.next_offset == null, text: 'Older →', onclick: () => { st.offset = v.next_offset; refresh(); } }))
      : null;
    const lis = rows.map(claimItem);
    replace(list,
      h('h2', { id: 'review-claims-title', tabindex: '-1', text: `Unreviewed claims (${fmtNum(v.unreviewed)})` }),
      lis.length
        ? h('ul', { class: 'claims review-list', 'aria-labelledby': 'review-claims-title', 'aria-describedby': 'review-keyhint' }, lis)
        : h('p', { class: 'empty', text: 'Nothing to review: every claim agents wrote here has been looked at by a person.' }),
      pager);
    const cur = lis.find((x) => x.dataset.slug === st.slug) || lis[Math.min(st.index, lis.length - 1)];
    if (cur) setCurrent(cur);
    drawLeft(v);
  }

  function claimItem(u) {
    const r = u.claim;
    const labelId = `review-label-${r.slug}`;
    const button = (action, text, key, cls) => h('button', { type: 'button', class: `act-${action}${cls ? ' ' + cls : ''}`, 'aria-keyshortcuts': key, onclick: () => perform(action, r.slug) }, text, ' ', kbd(key));
    const li = h('li', { class: 'claim review-item', 'data-slug': r.slug, tabindex: '-1', 'aria-labelledby': labelId },
      h('div', { class: 'line1' },
        h('h3', { class: 'label', id: labelId, text: r.label }),
        h('code', { class: 'slug', text: r.slug }),
        r.strength ? badge(r.strength, `strength-${r.strength}`, 'strength') : null,
        badge(`${fmtAge(r.age_ms)} old`, '', 'since it was written'),
        r.aged_out ? badge('aged out', 'aged', 'older than the half-life') : null),
      h('p', { class: 'text', text: r.text }),
      h('p', { class: 'meta' },
        'by ', h('code', { class: 'agent', text: r.source_agent || 'unknown' }), ' · ', time(r.created),
        u.written_from ? [' · checkout ', h('code', { class: 'checkout', text: u.written_from })] : null,
        u.session ? [' · session ', h('code', { class: 'session', text: u.session })] : null,
        r.evidence?.length ? [' · evidence ', r.evidence.map((e, i) => [i ? ', ' : '', h('code', { text: e })])] : null),
      u.near?.length ? h('div', { class: 'near' },
        h('span', { class: 'muted', text: 'Near-duplicates: ' }),
        h('ul', { 'aria-label': `near-duplicates of ${r.label}` }, u.near.map((n) => h('li', { 'data-near': n.slug },
          h('strong', { text: n.label }), ' ', h('code', { text: n.slug }), ' ', badge(`score ${Number(n.score).toFixed(2)}`))))) : null,
      h('div', { class: 'actions' },
        button('keep', 'Keep', 'y'),
        button('verify', 'Keep & verify', 'v'),
        button('retire', 'Retire…', 'r', 'danger'),
        button('edit', 'Edit…', 'e'),
        u.near?.length ? button('merge', 'Merge…', 'm') : null));
    li.addEventListener('focusin', () => setCurrent(li));
    return li;
  }

  function perform(action, slug) {
    const u = claimOf(slug);
    if (!u || st.busy) return;
    const li = items().find((x) => x.dataset.slug === slug);
    if (li && !li.contains(document.activeElement)) setCurrent(li);
    const r = u.claim;
    if (action === 'keep') quick({ op: 'keep', slug }, () => `Kept “${r.label}”: reviewed as it is.`);
    else if (action === 'verify') quick({ op: 'keep', slug, verify: true }, () => `Kept “${r.label}” and raised it to verified.`);
    else if (action === 'retire') retireDialog(r);
    else if (action === 'edit') editDialog(r);
    else if (action === 'merge') {
      if (u.near?.length) mergeDialog(u);
      else toast(`“${r.label}” has no near-duplicate to merge with.`, true);
    }
  }

  async function quick(args, said) {
    hideError();
    st.busy = true;
    try {
      const v = await review(st.id, args);
      toast(said(v));
      changed();
      await refresh();
    } catch (e) {
      showError(e);
    } finally {
      st.busy = false;
    }
  }

  /** Once a person acted, the roster's numbers and a dry run's proposals are stale. */
  function changed() {
    if (S.instances) S.instances.stale = true;
    tendOut.hidden = true;
  }

  function summaryOf(n) {
    return h('div', { class: 'what' }, h('strong', { text: n.label }), ' ', h('code', { text: n.slug }), h('br'), n.text.length > 400 ? n.text.slice(0, 400) + '…' : n.text);
  }

  function retireDialog(n, preset) {
    const reason = h('input', { type: 'text', id: 'review-retire-reason', required: true, maxlength: 500, pattern: '.*\\S.*', placeholder: 'why it no longer holds', autocomplete: 'off' });
    reason.value = preset || '';
    dialog.open({
      heading: 'Retire this claim',
      okText: 'Retire',
      danger: true,
      focus: reason,
      body: [
        h('p', { text: 'Take it out of recall without a replacement: it moves to history as outdated (“retired: <why>”), recorded with who retired it. Nothing is erased.' }),
        summaryOf(n),
        h('p', {}, h('label', { class: 'field' }, 'Why (one line)', reason)),
      ],
      run: async () => {
        await review(st.id, { op: 'retire', slug: n.slug, reason: reason.value.trim() });
        changed();
        await refresh();
        return `Retired “${n.label}”: out of recall, kept in history.`;
      },
    });
  }

  function editDialog(n) {
    const text = h('textarea', { id: 'review-edit-text', required: true, rows: 7, 'aria-describedby': 'review-edit-hint', spellcheck: 'true' });
    text.value = n.text;
    dialog.open({
      heading: 'Edit this claim',
      okText: 'Save',
      focus: text,
      body: [
        h('p', {}, 'Supersede it with your text: it keeps its label ', h('code', { text: n.slug }), ', the agent’s version goes to history, and yours is written by human:founder (it needs no review). The secret floor applies to it as to any write.'),
        h('label', { class: 'field' }, 'Text', text),
        h('p', { id: 'review-edit-hint', class: 'muted' }, kbd('Ctrl'), '+', kbd('Enter'), ' saves; ', kbd('Esc'), ' cancels.'),
      ],
      run: async () => {
        await review(st.id, { op: 'edit', slug: n.slug, text: text.value });
        changed();
        await refresh();
        return `Edited “${n.label}”: your text is the live version.`;
      },
    });
    text.setSelectionRange(text.value.length, text.value.length);
  }

  function mergeDialog(u) {
    const r = u.claim;
    const radios = u.near.map((n, i) => h('label', { class: 'choice' },
      h('input', { type: 'radio', name: 'merge-with', value: n.slug, checked: i === 0, required: true }), ' ',
      h('strong', { text: n.label }), ' ', h('code', { text: n.slug }), ' ', badge(`score ${Number(n.score).toFixed(2)}`)));
    const swap = h('input', { type: 'checkbox', id: 'review-merge-swap' });
    dialog.open({
      heading: 'Merge near-duplicates',
      okText: 'Merge',
      focus: radios[0]?.querySelector('input'),
      body: [
        h('p', { text: 'Join a claim that says nearly the same thing into this one: the survivor keeps its label and text and is marked reviewed; the other goes to history (“consolidated: into <survivor>”), and the join can be undone.' }),
        summaryOf(r),
        h('fieldset', {}, h('legend', { text: 'Join which' }), radios),
        h('p', {}, h('label', {}, swap, ' Keep the chosen claim’s label and text instead (this one joins it)')),
      ],
      run: async () => {
        const w = dialog.el.querySelector('input[name=merge-with]:checked').value;
        const [survivor, joined] = swap.checked ? [w, r.slug] : [r.slug, w];
        await review(st.id, { op: 'merge', slug: survivor, with: [joined] });
        changed();
        await refresh();
        return `Merged ${joined} into ${survivor}.`;
      },
    });
  }

  function showKeys() {
    dialog.open({
      heading: 'Keys on the review page',
      acting: false,
      body: [
        h('dl', { class: 'keys' }, KEYS.map(([ks, what]) => [h('dt', {}, ks.map((k, i) => [i ? ' or ' : '', kbd(k)])), h('dd', { text: what })])),
        h('p', { class: 'muted', text: 'Keys are ignored while you type in a field. Every action is also a button: Tab reaches it.' }),
      ],
    });
  }

  async function tendNow() {
    if (st.tending) return;
    st.tending = true;
    hideError();
    tendBtn.setAttribute('aria-busy', 'true');
    try {
      const p = await tend(st.id, {});
      drawPass(p);
      await refresh();
      ($('#review-apply', tendOut) || $('h2', tendOut)).focus();
    } catch (e) {
      showError(e);
    } finally {
      st.tending = false;
      tendBtn.removeAttribute('aria-busy');
    }
  }

  function drawPass(p) {
    const pending = (p.joins || []).filter((j) => !j.done);
    const made = (p.joins || []).filter((j) => j.done);
    const n = (p.disagreements?.length || 0) + (p.retire?.length || 0);
    const settle = n ? `${plural(p.disagreements?.length || 0, 'disagreement')} and ${plural(p.retire?.length || 0, 'claim')} proposed for retirement are listed below.` : 'No disagreement, nothing proposed for retirement.';
    const what = p.applied
      ? `Joined ${plural(made.length, 'group')}.`
      : pending.length ? `It would join ${plural(pending.length, 'group')}; nothing was written.` : 'Nothing says the same thing twice; nothing was written.';
    replace(tendOut,
      h('h2', { id: 'review-tend-title', tabindex: '-1', text: p.applied ? 'Tending: applied' : 'Tending: a dry run' }),
      h('p', {}, `${plural(p.claims, 'live claim')} gone over, ${plural(p.pairs_judged, 'pair')} judged (${p.mode}, ${fmtNum(p.ms)} ms). `, what, ' ', settle),
      !p.applied && pending.length ? joinList(pending, false) : null,
      h('div', { class: 'buttons' },
        !p.applied && pending.length ? h('button', { type: 'button', id: 'review-apply', class: 'primary', 'aria-haspopup': 'dialog', text: `Apply: join ${plural(pending.length, 'group')}…`, onclick: () => applyDialog(pending) }) : null,
        h('button', { type: 'button', text: 'Dismiss', onclick: () => { tendOut.hidden = true; tendBtn.focus(); } })));
    tendOut.hidden = false;
  }

  function applyDialog(pending) {
    dialog.open({
      heading: 'Join what says the same thing',
      okText: 'Apply',
      body: [
        h('p', { text: 'Each group becomes one consolidate act: the survivor keeps its label and text, the others go to history (“consolidated: into <survivor>”). Each join can be undone from this page.' }),
        joinList(pending, false),
      ],
      run: async () => {
        const p = await tend(st.id, { apply: true });
        changed();
        drawPass(p);
        await refresh();
        return `Joined ${plural((p.joins || []).filter((j) => j.done).length, 'group')}.`;
      },
    });
  }

  function joinList(joins, withUndo) {
    return h('ul', { class: 'joins' }, joins.map((j) => h('li', { 'data-survivor': j.survivor.slug },
      h('div', { class: 'line1' },
        h('strong', { text: j.survivor.label }), ' ', h('code', { text: j.survivor.slug }), ' ',
        j.done ? badge('joined', 'good') : badge('proposed')),
      h('p', { class: 'text', text: j.survivor.text }),
      h('p', { class: 'meta' }, 'joins ', j.joined.map((n, i) => [i ? ', ' : '', h('strong', { text: n.label }), ' ', h('code', { text: n.slug })])),
      j.dropped?.length ? h('p', { class: 'warnline', text: `left to history: ${j.dropped.map((d) => `${d.slug} says ${d.values.join(', ')}`).join('; ')}` }) : null,
      withUndo && j.done ? h('button', { type: 'button', class: 'act-undo', 'aria-label': `Undo the join into ${j.survivor.label}`, text: 'Undo', onclick: () => undo(j) }) : null)));
  }

  async function undo(j) {
    hideError();
    try {
      const v = await tend(st.id, { undo: j.survivor.slug });
      st.undone.add(j.survivor.slug);
      toast(`Brought back ${(v.revived || []).map((n) => `“${n.label}”`).join(', ') || 'nothing'}.`);
      changed();
      await refresh();
    } catch (e) {
      showError(e);
    }
  }

  function side(n, tag) {
    return h('div', { class: 'side', 'data-slug': n.slug },
      h('h3', {}, h('span', { class: 'muted', text: `${tag} ` }), n.label, ' ', h('code', { class: 'slug', text: n.slug })),
      h('p', { class: 'text', text: n.text }),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'act-edit', text: 'Edit…', 'aria-label': `Edit ${n.label}`, onclick: () => editDialog(n) }),
        h('button', { type: 'button', class: 'act-retire danger', text: 'Retire…', 'aria-label': `Retire ${n.label}`, onclick: () => retireDialog(n) })));
  }

  function section(id, heading, note, body) {
    return h('section', { id, class: 'review-left', 'aria-labelledby': `${id}-title` },
      h('h2', { id: `${id}-title`, tabindex: '-1', text: heading }),
      note ? h('p', { class: 'muted', text: note }) : null,
      body);
  }

  function drawLeft(v) {
    const dis = v.disagreements || [];
    const old = v.retire || [];
    // The joins made (a dry run's proposals are in its own panel), less those undone here.
    const joins = (v.joins || []).filter((j) => j.done && !st.undone.has(j.survivor.slug));
    replace(left,
      v.tended_at ? null : h('p', { class: 'muted', text: 'This store was never tended: Tend now finds what says the same thing, what disagrees, and what aged out unused.' }),
      dis.length ? section('review-disagreements', `Disagreements (${dis.length})`, 'Alike but for what differs: never joined. Keep the one that holds; edit or retire the other.',
        h('ul', { class: 'pairs' }, dis.map((d) => h('li', { class: 'pair', 'data-a': d.a.slug, 'data-b': d.b.slug },
          h('p', { class: 'differs' }, 'differ in ', d.differences.map((x, i) => [i ? '; ' : '', `${x.kind}: `, h('mark', { text: x.a }), ' ≠ ', h('mark', { text: x.b })])),
          h('div', { class: 'grid2' }, side(d.a, 'A'), side(d.b, 'B')))))) : null,
      old.length ? section('review-retire', `Proposed for retirement (${old.length})`, 'Aged out, and nothing used them in their half-life.',
        h('ul', { class: 'claims' }, old.map((s) => h('li', { class: 'claim', 'data-slug': s.slug },
          h('div', { class: 'line1' }, h('h3', { class: 'label', text: s.label }), h('code', { class: 'slug', text: s.slug })),
          h('p', { class: 'text', text: s.text }),
          h('p', { class: 'meta' }, 'written ', time(s.created), ' · ', s.last_used ? ['last used ', time(s.last_used)] : 'no use recorded'),
          h('div', { class: 'actions' }, h('button', { type: 'button', class: 'act-retire danger', text: 'Retire…', 'aria-label': `Retire ${s.label}`, onclick: () => retireDialog(s, 'aged out, unused in its half-life') })))))) : null,
      joins.length ? section('review-joins', `Joins made (${joins.length})`, 'What the last tending joined into one label; Undo brings the joined labels back.', joinList(joins, true)) : null);
  }

  // The keys: none while typing or while a dialog is open (the dialog has its own).
  if (onKey) document.removeEventListener('keydown', onKey);
  onKey = (e) => {
    if (!root.isConnected || e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (dialog.el.open || t?.closest?.('input, textarea, select, [contenteditable], dialog')) return;
    const key = e.key;
    if (key === 'ArrowDown' || key === 'ArrowUp') {
      if (!list.contains(t)) return;
      e.preventDefault();
      step(key === 'ArrowDown' ? 1 : -1);
    } else if (key === 'j' || key === 'k') {
      e.preventDefault();
      step(key === 'j' ? 1 : -1);
    } else if (key === '?') {
      e.preventDefault();
      showKeys();
    } else if (key === 't') {
      e.preventDefault();
      tendNow();
    } else if (ACTION_KEYS[key] && !e.repeat) {
      const li = focusedItem();
      if (!li) return;
      e.preventDefault();
      perform(ACTION_KEYS[key], li.dataset.slug);
    }
  };
  document.addEventListener('keydown', onKey);

  await refresh();
  focusTitle(root);
  listen(root, (batch) => { if (!st.busy && touches(batch, st.store)) refresh(); });

  /** The page's one dialog: a form whose error keeps what was typed. */
  function makeDialog() {
    const heading = h('h2', { id: 'review-dialog-title' });
    const body = h('div', { id: 'review-dialog-body' });
    const as = h('p', { class: 'as' }, 'Acting as ', h('code', { text: 'human:founder' }), '. The act is recorded with who and when.');
    const error = h('p', { id: 'review-dialog-error', class: 'error', role: 'alert', hidden: true });
    const ok = h('button', { type: 'submit', id: 'review-dialog-ok', class: 'primary' });
    const el = h('dialog', { id: 'review-dialog', 'aria-labelledby': 'review-dialog-title' });
    const cancel = h('button', { type: 'button', id: 'review-dialog-cancel', text: 'Cancel', onclick: () => el.close() });
    const form = h('form', { method: 'dialog' }, heading, body, as, error, h('div', { class: 'buttons' }, cancel, ok));
    el.append(form);
    let back = null;
    let run = null;
    let busy = false;
    let okText = '';
    // Enter confirms from a choice, Ctrl+Enter from the text (Enter in a text field
    // already submits; in a textarea it is a new line).
    el.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      const t = e.target;
      if (e.ctrlKey || e.metaKey || t.type === 'radio' || t.type === 'checkbox') {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      if (!run) { el.close(); return; }
      if (busy || !form.reportValidity()) return;
      busy = true;
      ok.setAttribute('aria-busy', 'true');
      ok.textContent = 'Working…';
      error.hidden = true;
      try {
        const said = await run();
        el.close();
        if (said) toast(said);
      } catch (x) {
        if (x instanceof Locked) { el.close(); return; }
        error.textContent = errText(x);
        error.hidden = false;
      } finally {
        busy = false;
        ok.removeAttribute('aria-busy');
        ok.textContent = okText;
      }
    });
    // Focus goes back where it was (Escape, Cancel), or to the claim that took the acted
    // one's place.
    el.addEventListener('close', () => {
      if (back?.isConnected && back !== document.body) back.focus();
      else focusCurrent();
    });
    return {
      el,
      open(o) {
        back = document.activeElement;
        run = o.run || null;
        okText = o.okText || 'Confirm';
        heading.textContent = o.heading;
        replace(body, o.body);
        as.hidden = o.acting === false || !run;
        ok.hidden = !run;
        ok.textContent = okText;
        ok.className = o.danger ? 'danger' : 'primary';
        cancel.textContent = run ? 'Cancel' : 'Close';
        error.hidden = true;
        el.showModal();
        (o.focus || (run ? ok : cancel)).focus();
      },
    };
  }
}

function kbd(k) {
  return h('kbd', { 'aria-hidden': 'true', text: k });
}
