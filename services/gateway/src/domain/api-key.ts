import { errors } from '@kb/platform';
import type { Decider } from '@kb/eventsourcing';
import type { EventsNamed } from '@kb/events';

export interface ApiKeyState {
  status: 'new' | 'active' | 'revoked';
  org_id: string;
}

export type ApiKeyCommand =
  | {
      type: 'create';
      key_id: string;
      org_id: string;
      name: string;
      key_hash: string;
      hint: string;
      folder_scope: string[] | null;
      created_by: string | null;
      at: string;
    }
  | { type: 'revoke'; key_id: string; org_id: string; at: string };

export const apiKeyStream = (keyId: string) => `api-key-${keyId}`;

export const apiKeyDecider: Decider<ApiKeyCommand, ApiKeyState, EventsNamed<'api_key'>> = {
  initialState: () => ({ status: 'new', org_id: '' }),
  evolve(state, event) {
    if (event.type === 'api_key.created') return { status: 'active', org_id: event.data.org_id };
    if (event.type === 'api_key.revoked') return { ...state, status: 'revoked' };
    return state;
  },
  decide(command, state) {
    switch (command.type) {
      case 'create': {
        if (state.status !== 'new') throw errors.conflict('API key already exists');
        const { type: _t, ...data } = command;
        return [{ type: 'api_key.created', data }];
      }
      case 'revoke':
        if (state.status !== 'active' || state.org_id !== command.org_id) throw errors.notFound('API key');
        return [{ type: 'api_key.revoked', data: { key_id: command.key_id, org_id: command.org_id, at: command.at } }];
      default: {
        const never: never = command;
        throw new Error(`Unknown command ${JSON.stringify(never)}`);
      }
    }
  },
};
