// Event types given on the command line (`webhooks create|update --events`, `events list --type`):
// an unknown one is named, with the type it probably meant, and the catalogue is listed.
import { nearest } from '../../config/nearest.ts';
import { EVENT_TYPES } from '../../events/index.ts';
import { UsageError } from '../operations.ts';

export function unknownEventTypes(option: string, unknown: readonly string[]): UsageError {
  const named = unknown.map((type) => {
    const meant = nearest(type, EVENT_TYPES);
    return `"${type}"${meant ? ` (did you mean ${meant}?)` : ''}`;
  });
  const what = unknown.length === 1 ? 'is not an event type' : 'are not event types';
  return new UsageError(`${option}: ${named.join(', ')} ${what}; the types are: ${EVENT_TYPES.join(', ')}`);
}
