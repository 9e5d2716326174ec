import type { Decider } from '@kb/eventsourcing';

export interface CreditsState {
  balance: number;
}

export type CreditsCommand = { type: 'grant'; org_id: string; amount: number; reason: string; at: string };

export const creditsStream = (orgId: string) => `credits-${orgId}`;

export const creditsDecider: Decider<CreditsCommand, CreditsState> = {
  initialState: () => ({ balance: 0 }),
  evolve: (state, event) =>
    event.type === 'credits.granted' ? { balance: state.balance + (event.data as { amount: number }).amount } : state,
  decide(command) {
    const { type: _command, ...data } = command;
    return [{ type: 'credits.granted', data }];
  },
};
