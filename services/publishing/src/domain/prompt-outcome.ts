/** One prompt's latest answer result per model and location. */
export type AnswerResult = 'won' | 'lost' | 'none';
export type PromptOutcome = 'won' | 'lost' | 'tied' | 'none';

export interface PromptOutcomeState {
  /** `${model}\u0000${location}` -> the latest answer's collection time and result. */
  latest: Record<string, { run_at: string; result: AnswerResult }>;
  outcome: PromptOutcome;
}

/**
 * A prompt's current outcome over its latest answers (one per model and
 * location), by the glossary's rule for prompts: won when its won answers
 * outnumber its lost ones, lost when the reverse, tied when equal and above
 * zero, none otherwise.
 */
export function outcomeOf(latest: PromptOutcomeState['latest']): PromptOutcome {
  let won = 0;
  let lost = 0;
  for (const { result } of Object.values(latest)) {
    if (result === 'won') won++;
    else if (result === 'lost') lost++;
  }
  return won > lost ? 'won' : lost > won ? 'lost' : won > 0 ? 'tied' : 'none';
}

/**
 * Folds one collected answer into the prompt's state: an answer older than the
 * latest of its model and location changes nothing. Says the outcome before and
 * after, so a change to won or lost can be announced (prompt.won, prompt.lost).
 */
export function foldAnswer(
  state: PromptOutcomeState | undefined,
  answer: { model: string; location: string; run_at: string; won: boolean; lost: boolean },
): { state: PromptOutcomeState; previous: PromptOutcome; changed: boolean } {
  const before = state ?? { latest: {}, outcome: 'none' as const };
  const key = `${answer.model}\u0000${answer.location}`;
  const current = before.latest[key];
  if (current && Date.parse(current.run_at) >= Date.parse(answer.run_at))
    return { state: before, previous: before.outcome, changed: false };
  const result: AnswerResult = answer.won ? 'won' : answer.lost ? 'lost' : 'none';
  const latest = { ...before.latest, [key]: { run_at: answer.run_at, result } };
  const outcome = outcomeOf(latest);
  return { state: { latest, outcome }, previous: before.outcome, changed: outcome !== before.outcome };
}
