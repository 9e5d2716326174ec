import { errors } from '@kb/platform';

export const NAME_MIN = 2;
export const NAME_MAX = 255;
export const DESCRIPTION_MAX = 1000;

/** Names are stored trimmed; uniqueness ignores case and Unicode form. */
export function cleanName(raw: string, field = 'name'): string {
  const name = raw.trim();
  if (name.length < NAME_MIN || name.length > NAME_MAX) {
    throw errors.validation(`${field} must be ${NAME_MIN} to ${NAME_MAX} characters`, { code: 'invalid_name', details: { field } });
  }
  return name;
}

export const nameKey = (name: string): string => name.normalize('NFKC').trim().toLowerCase();

export function checkDescription(description: string | null | undefined, field = 'description'): void {
  if (typeof description === 'string' && description.length > DESCRIPTION_MAX) {
    throw errors.validation(`${field} must be at most ${DESCRIPTION_MAX} characters`, {
      code: 'invalid_description',
      details: { field },
    });
  }
}
