import type { Projection } from '@kb/eventsourcing';
import { configurationProjection } from './configuration.js';
import { answersProjection } from './answers.js';

/** Every read model fed by this service's own events, in apply order (configuration before answers). */
export const analyticsProjections: Projection[] = [configurationProjection, answersProjection];
