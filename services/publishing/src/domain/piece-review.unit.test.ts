import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { isAppError } from '@kb/platform';
import { pieceDecider, type PieceCommand, type PieceState } from './aggregates.js';

const ok = { ok: true, sentences: [], stale_sources: [] };
const who = (revision: number) => ({ piece_id: 'p', org_id: 'o', revision, actor: 'a', at: '2026-01-01T00:00:00Z' });
const hosted = { destination_id: 'h', destination_type: 'hosted', slug: 's' };
const hook = { destination_id: 'w', destination_type: 'webhook', slug: 's' };

/** Runs the commands in order, folding each decision into the state. */
function run(cmds: PieceCommand[], s: PieceState = pieceDecider.initialState()): PieceState {
  for (const c of cmds) {
    const events = pieceDecider.decide(c, s);
    s = events.reduce((st, e) => pieceDecider.evolve(st, { ...e, data: e.data } as never), s);
  }
  return s;
}
const submit = (r: number): PieceCommand => ({ type: 'submit', ...who(r) });
const approve = (r: number): PieceCommand => ({ type: 'approve', gate: ok, ...who(r) });
const reject = (r: number): PieceCommand => ({ type: 'reject', comment: 'no', ...who(r) });
const publish = (r: number, auto = false): PieceCommand => ({ type: 'publish', gate: ok, auto, destination: hosted, ...who(r) });
const queue = (r: number, delivery = `d${r}`): PieceCommand => ({
  type: 'publish',
  gate: ok,
  auto: false,
  destination: hook,
  delivery_id: delivery,
  ...who(r),
});
const ack = (r: number, delivery = `d${r}`): PieceCommand => ({ type: 'confirm', destination: hook, delivery_id: delivery, ...who(r) });
const gaveUp = (r: number, delivery = `d${r}`): PieceCommand => ({
  type: 'record_failure',
  destination_id: 'w',
  delivery_id: delivery,
  error: 'receiver answered 500',
  ...who(r),
});
const takeDown = (dest: string, r: number): PieceCommand => ({ type: 'unpublish', destination_id: dest, mode: 'unpublish', ...who(r) });

function conflict(fn: () => unknown, code: string, message?: RegExp) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(isAppError(err));
    assert.equal(err.kind, 'conflict');
    assert.equal(err.code, code);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('the review state machine', () => {
  it('approves and rejects only a piece in review; a rejected piece is submitted again', () => {
    conflict(() => run([approve(1)]), 'not_in_review', /submit it first/);
    conflict(() => run([reject(1)]), 'not_in_review');
    const rejected = run([submit(1), reject(1)]);
    assert.equal(rejected.status, 'rejected');
    conflict(() => run([approve(1)], rejected), 'not_in_review');
    conflict(() => run([publish(1)], rejected), 'not_approved');
    const approved = run([submit(1), approve(1)], rejected);
    assert.equal(approved.status, 'approved');
    conflict(() => run([submit(1)], approved), 'already_approved');
    conflict(() => run([submit(1), submit(1)]), 'already_in_review');
  });

  it('publishes only the approved revision; a new revision is submitted, approved, then published', () => {
    conflict(() => run([publish(1)]), 'not_approved');
    const live = run([submit(2), approve(2), publish(2)]);
    assert.deepEqual(live.live, { h: 2 });
    assert.equal(live.approved_revision, 2);
    conflict(() => run([publish(3)], live), 'revision_not_approved', /^Revision 3 is not approved \(the approved revision is 2\)/);
    conflict(() => run([approve(3)], live), 'not_in_review');
    conflict(() => run([submit(2)], live), 'piece_published');
    const again = run([submit(3)], live);
    assert.equal(again.status, 'in_review');
    assert.deepEqual(again.live, { h: 2 }, 'the approved revision stays live during the review');
    conflict(() => run([publish(3)], again), 'revision_not_approved');
    const done = run([approve(3), publish(3)], again);
    assert.equal(done.status, 'published');
    assert.deepEqual(done.live, { h: 3 });
  });

  it('auto-publish skips the approval (never for a rejected piece)', () => {
    assert.deepEqual(run([publish(1, true), publish(2, true)]).live, { h: 2 });
    conflict(() => run([submit(1), reject(1), publish(1, true)]), 'not_approved');
  });

  it('keeps review facts across unpublish', () => {
    const s = run([submit(1), approve(1), publish(1), takeDown('h', 1)]);
    assert.equal(s.status, 'unpublished');
    conflict(() => run([publish(2)], s), 'revision_not_approved');
    assert.deepEqual(run([publish(1)], s).live, { h: 1 });
  });
});

describe('publications a destination acknowledges later (webhooks)', () => {
  const approved = run([submit(1), approve(1)]);

  it('is publishing until the receiver acknowledges, then published', () => {
    const queued = run([queue(1)], approved);
    assert.equal(queued.status, 'publishing');
    assert.deepEqual(queued.live, {});
    assert.deepEqual(queued.pending, { w: 1 });
    assert.deepEqual(pieceDecider.decide(queue(1, 'other'), queued), [], 'the same revision on its way: nothing to do');
    const live = run([ack(1)], queued);
    assert.equal(live.status, 'published');
    assert.deepEqual(live.live, { w: 1 });
    assert.deepEqual(live.pending, {});
  });

  it('a delivery that runs out of attempts leaves the piece publish_failed, and it can be published again', () => {
    const failed = run([queue(1), gaveUp(1)], approved);
    assert.equal(failed.status, 'publish_failed');
    assert.deepEqual(failed.live, {});
    assert.deepEqual(failed.failed, { w: 1 });
    const retried = run([queue(1, 'd1-again'), ack(1, 'd1-again')], failed);
    assert.equal(retried.status, 'published');
    // A failed delivery redelivered by hand that then succeeds makes it live too.
    assert.equal(run([ack(1)], failed).status, 'published');
  });

  it('a failure elsewhere leaves a piece that is live somewhere published; taking that down shows where it stands', () => {
    const both = run([publish(1), queue(1), gaveUp(1)], approved);
    assert.equal(both.status, 'published');
    assert.equal(run([takeDown('h', 1)], both).status, 'unpublished');
    const waiting = run([publish(1), queue(1), takeDown('h', 1)], approved);
    assert.equal(waiting.status, 'publishing');
  });

  it('a newer revision on its way keeps the live one; a stale acknowledgement or failure records nothing', () => {
    const v1 = run([queue(1), ack(1)], approved);
    const v2 = run([submit(2), approve(2), queue(2)], v1);
    assert.equal(v2.status, 'published');
    assert.deepEqual(v2.live, { w: 1 });
    assert.deepEqual(v2.pending, { w: 2 });
    assert.deepEqual(pieceDecider.decide(ack(1), v2), []);
    assert.deepEqual(pieceDecider.decide(gaveUp(1), v2), []);
    const failed = run([gaveUp(2)], v2);
    assert.equal(failed.status, 'published', 'still live at revision 1');
    assert.deepEqual(failed.live, { w: 1 });
  });

  it('a failure during the publish call changes nothing but the history', () => {
    const s = run([{ type: 'record_failure', destination_id: 'w', error: 'refused', ...who(1) }], approved);
    assert.deepEqual(s, approved);
  });
});
