import { errors } from '@kb/platform';
import type { Decider } from '@kb/eventsourcing';

export interface UserState {
  exists: boolean;
}

export type UserCommand = { type: 'register'; user_id: string; email: string; name: string; password_hash: string; at: string };

export const userStream = (userId: string) => `user-${userId}`;

export const userDecider: Decider<UserCommand, UserState> = {
  initialState: () => ({ exists: false }),
  evolve: (state, event) => (event.type === 'user.registered' ? { exists: true } : state),
  decide(command, state) {
    if (state.exists) throw errors.conflict('User already exists');
    const { type: _command, ...data } = command;
    return [{ type: 'user.registered', data }];
  },
};
