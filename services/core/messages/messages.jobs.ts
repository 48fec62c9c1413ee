import type { JobHandler } from '../../../shared/jobs.js';
import * as messages from './messages.service.js';

/** The streaming sweep (repeating, level 3): finishes replies left streaming too long. */
export const finishStaleStreams: JobHandler<'messages.finish_stale_streams'> = async (rt) => {
  const finished = await messages.finishStaleStreams(rt);
  if (finished > 0) rt.log.info({ finished }, 'streamed replies left alone finished by the sweep');
};
