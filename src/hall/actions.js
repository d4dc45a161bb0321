// The founder's actions: the confirmation dialog, promote, grade, demote, retire and back up.

import { h, $, replace } from './dom.js';
import { fmtNum, plural } from './format.js';
import { S, Locked, toast } from './shell.js';
import { call } from './api.js';

const AGENT = 'human:founder';

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

export function promoteDialog(r, ctx) {
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

export function gradeDialog(r, ctx, demote) {
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

export function retireDialog(r, ctx) {
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

export function backupDialog() {
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
