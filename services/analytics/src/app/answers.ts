import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { CommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import type { AnswerCollected } from '@kb/events';
import { answerDecider, answerStream } from '../domain/aggregates.js';
import { validateAnswerInput, type AnswerInput } from '../domain/answer-input.js';
import { metadataOf } from './context.js';

export const MAX_IMPORT = 1000;

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
}

/** The answer stream's producers: import (here) and scheduled runs (via collect). */
export function createAnswersService(deps: AnswersDeps) {
  const { commands, ids, clock } = deps;

  const eventData = (
    orgId: string,
    input: AnswerInput,
    answerId: string,
    origin: AnswerCollected['origin'],
    runId?: string,
  ): AnswerCollected => ({
    answer_id: answerId,
    org_id: orgId,
    prompt_id: input.prompt_id,
    model: input.model,
    location: input.location,
    run_at: input.run_at,
    text: input.text,
    citations: input.citations,
    ...(input.brands !== undefined && { brands: input.brands }),
    origin,
    ...(runId !== undefined && { run_id: runId }),
  });

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

      await commands.transaction(metadataOf(ctx), async (session) => {
        for (const v of valid) {
          const { version } = await session.load(answerDecider, answerStream(v.answer_id));
          if (version > 0) {
            results.push({ index: v.index, status: 'rejected', errors: ['answer_id was already imported'] });
            continue;
          }
          await session.execute(answerDecider, answerStream(v.answer_id), {
            type: 'collect',
            data: eventData(ctx.org_id, v.input, v.answer_id, 'import'),
          });
          results.push({ index: v.index, status: 'accepted', answer_id: v.answer_id, errors: [] });
        }
      });
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
        await session.execute(answerDecider, answerStream(input.answer_id), {
          type: 'collect',
          data: eventData(orgId, input, input.answer_id, 'scheduled', runId),
        });
        return true;
      });
    },
  };
}

export type AnswersService = ReturnType<typeof createAnswersService>;
