import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { CommandBus, CommandSession } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import type { AnswerCollected } from '@kb/events';
import { answerDecider, answerStream } from '../domain/aggregates.js';
import { validateAnswerInput, type AnswerInput } from '../domain/answer-input.js';
import { answerFacts, eventFacts, type FoldContext } from '../domain/facts.js';
import type { BrandName } from '../domain/reports.js';
import { loadFoldContext } from '../projections/fold-context.js';
import { bodyWritten, handOverAnswers, takeBackAnswers } from '../projections/answers.js';
import { FoldThreadInterrupted, type FoldThread } from '../projections/fold-thread.js';
import { ANSWER_BODIES, type AnswerBodyDoc } from '../projections/collections.js';
import { metadataOf } from './context.js';

export const MAX_IMPORT = 1000;

/** Brand names by key, made once per fold context (a batch shares one) instead of once per answer. */
const brandNames = new WeakMap<readonly BrandName[], ReadonlyMap<string, string>>();
function namesOf(names: readonly BrandName[]): ReadonlyMap<string, string> {
  let m = brandNames.get(names);
  if (!m) brandNames.set(names, (m = new Map(names.map((n) => [n.key, n.name]))));
  return m;
}

export interface ImportItemResult {
  index: number;
  status: 'accepted' | 'rejected';
  answer_id?: string;
  errors: string[];
}

export interface AnswersDeps {
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
  /**
   * Where an import of at least `minAnswers` answers folds its source and
   * outcome rows and latest answers while it appends them (embedded store only;
   * see handOverAnswers). Without it, every answer folds on this thread.
   */
  foldThread?: { thread: FoldThread; minAnswers: number };
}

/** The answer stream's producers: import (here) and scheduled runs (via collect). */
export function createAnswersService(deps: AnswersDeps) {
  const { commands, ids, clock, foldThread } = deps;

  /**
   * One answer as it is appended: its counted facts (tiers, rules and brands as
   * they are in force now, in this transaction) go into the event; its text,
   * URLs as cited and brand list go into ANSWER_BODIES, which keeps them only
   * while the answer is the latest of its combination (rule 6).
   */
  function record(
    orgId: string,
    context: FoldContext & { names: BrandName[] },
    input: AnswerInput,
    answerId: string,
    origin: AnswerCollected['origin'],
    runId?: string,
  ): { body: AnswerBodyDoc; data: AnswerCollected } {
    const body: AnswerBodyDoc = {
      id: answerId,
      org_id: orgId,
      text: input.text,
      citations: input.citations,
      ...(input.brands !== undefined && { brands: input.brands }),
    };
    const facts = answerFacts({ ...input, answer_id: answerId }, context);
    const data: AnswerCollected = {
      answer_id: answerId,
      org_id: orgId,
      prompt_id: input.prompt_id,
      model: input.model,
      location: input.location,
      run_at: input.run_at,
      ...eventFacts(facts, namesOf(context.names)),
      origin,
      ...(runId !== undefined && { run_id: runId }),
    };
    return { body, data };
  }

  /** Writes the body and appends the event (its projections fold it in this transaction). */
  async function append(session: CommandSession, { body, data }: { body: AnswerBodyDoc; data: AnswerCollected }): Promise<void> {
    await session.tx.put(ANSWER_BODIES, body);
    bodyWritten(session.tx, body);
    await session.execute(answerDecider, answerStream(data.answer_id), { type: 'collect', data });
  }

  return {
    /**
     * Imports a batch: each item is validated alone and gets its own result.
     * Accepted answers are appended (each to its own stream, with its counts)
     * in one transaction, so an answer is never half-applied. 400 when the batch
     * is empty, too large, or every item is rejected.
     */
    async importAnswers(ctx: CallContext, items: unknown[]): Promise<{ accepted: number; rejected: number; results: ImportItemResult[] }> {
      if (items.length === 0) throw errors.validation('the batch is empty', { details: { field: 'body' } });
      if (items.length > MAX_IMPORT) throw errors.validation(`at most ${MAX_IMPORT} answers per call`, { details: { field: 'body' } });
      const now = clock.now();
      const results: ImportItemResult[] = [];
      const valid: { index: number; input: AnswerInput; answer_id: string }[] = [];
      const seen = new Set<string>();
      items.forEach((item, index) => {
        const checked = validateAnswerInput(item, now);
        if (!checked.ok) {
          results.push({ index, status: 'rejected', errors: checked.errors });
          return;
        }
        const answer_id = checked.value.answer_id ?? ids.uuid();
        if (seen.has(answer_id)) {
          results.push({ index, status: 'rejected', errors: ['answer_id repeats an earlier item of this batch'] });
          return;
        }
        seen.add(answer_id);
        valid.push({ index, input: checked.value, answer_id });
      });

      /** Appends the fresh answers in one transaction; their results, and those of answers imported before. */
      const appendFresh = (useThread: boolean) =>
        commands.transaction(metadataOf(ctx), async (session) => {
          const appended: ImportItemResult[] = [];
          // Rules and brands do not change inside the batch's transaction: read them once.
          const context = valid.length > 0 ? await loadFoldContext(session.tx, ctx.org_id) : undefined;
          const recorded = valid.map((v) => ({ index: v.index, answer: record(ctx.org_id, context!, v.input, v.answer_id, 'import') }));
          // Handed over before the duplicates are known (a batch rarely has any), so the thread's work
          // overlaps the reads below as well as the appends; a batch that has one takes its answers back.
          const handedOver =
            useThread &&
            foldThread !== undefined &&
            recorded.length >= foldThread.minAnswers &&
            (await handOverAnswers(
              session.tx,
              foldThread.thread,
              recorded.map(({ answer: { data, body } }) => ({ data, body: { text: body.text, citations: body.citations } })),
            ));
          const fresh: typeof recorded = [];
          for (const r of recorded) {
            const { version } = await session.load(answerDecider, answerStream(r.answer.data.answer_id));
            if (version > 0) appended.push({ index: r.index, status: 'rejected', errors: ['answer_id was already imported'] });
            else fresh.push(r);
          }
          if (handedOver && fresh.length < recorded.length) takeBackAnswers(session.tx);
          // Every answer handed over is appended here (or the transaction fails), as handOverAnswers requires.
          for (const { index, answer } of fresh) {
            await append(session, answer);
            appended.push({ index, status: 'accepted', answer_id: answer.data.answer_id, errors: [] });
          }
          return appended;
        });
      // A thread that failed after the transaction wrote part of its work leaves it unable to finish: once more, here.
      results.push(
        ...(await appendFresh(true).catch((err: unknown) =>
          err instanceof FoldThreadInterrupted ? appendFresh(false) : Promise.reject(err),
        )),
      );
      results.sort((a, b) => a.index - b.index);
      const accepted = results.filter((r) => r.status === 'accepted').length;
      if (accepted === 0)
        throw errors.validation('no answer in the batch is valid', {
          details: { results: results.slice(0, 10), rejected: results.length },
        });
      return { accepted, rejected: results.length - accepted, results };
    },

    /**
     * One answer from a scheduled run. The answer id is derived from the slot,
     * so a second replica collecting the same slot appends nothing (false).
     */
    async collect(orgId: string, input: AnswerInput & { answer_id: string }, runId: string): Promise<boolean> {
      return commands.transaction({ metadata: { org_id: orgId, actor: 'system:scheduler' } }, async (session) => {
        const { version } = await session.load(answerDecider, answerStream(input.answer_id));
        if (version > 0) return false;
        await append(session, record(orgId, await loadFoldContext(session.tx, orgId), input, input.answer_id, 'scheduled', runId));
        return true;
      });
    },
  };
}

export type AnswersService = ReturnType<typeof createAnswersService>;
