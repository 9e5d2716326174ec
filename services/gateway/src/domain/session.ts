import { errors } from '@kb/platform';
import type { Decider } from '@kb/eventsourcing';
import type { EventsNamed } from '@kb/events';

/** A signed-in user's session: which organization it acts in, and whether it is still open. */
export interface SessionState {
  status: 'new' | 'open' | 'ended';
  user_id: string;
  org_id: string | null;
}

export type SessionCommand =
  | { type: 'start'; session_id: string; user_id: string; org_id: string | null; token_hash: string; expires_at: string; at: string }
  | { type: 'switch_org'; session_id: string; org_id: string; at: string }
  | { type: 'end'; session_id: string; at: string };

export const sessionStream = (sessionId: string) => `session-${sessionId}`;

export const sessionDecider: Decider<SessionCommand, SessionState, EventsNamed<'session'>> = {
  initialState: () => ({ status: 'new', user_id: '', org_id: null }),
  evolve(state, event) {
    const { type, data: d } = event;
    switch (type) {
      case 'session.started':
        return { status: 'open', user_id: d.user_id, org_id: d.org_id ?? null };
      case 'session.org_switched':
        return { ...state, org_id: d.org_id ?? null };
      case 'session.ended':
        return { ...state, status: 'ended' };
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'start': {
        if (state.status !== 'new') throw errors.conflict('Session already exists');
        const { type: _t, ...data } = command;
        return [{ type: 'session.started', data }];
      }
      case 'switch_org':
        if (state.status !== 'open') throw errors.unauthenticated('Session has ended');
        if (state.org_id === command.org_id) return [];
        return [
          {
            type: 'session.org_switched',
            data: { session_id: command.session_id, user_id: state.user_id, org_id: command.org_id, at: command.at },
          },
        ];
      case 'end':
        if (state.status !== 'open') return [];
        return [{ type: 'session.ended', data: { session_id: command.session_id, user_id: state.user_id, at: command.at } }];
      default: {
        const never: never = command;
        throw new Error(`Unknown command ${JSON.stringify(never)}`);
      }
    }
  },
};
