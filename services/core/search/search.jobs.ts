import type { JobHandler } from '../../../shared/jobs.js';
import * as store from './search.store.js';

/**
 * The search backfill (repeating, level 3): indexes what was written where
 * search did not exist, so a switch from level 2 to 3 finds old messages
 * too (migration 090, docs/decisions.md "Search").
 */
export const indexUnsearchedMessages: JobHandler<'search.backfill'> = async (rt) => {
  const indexed = await store.indexUnsearched(rt.db, { batch: 1000 });
  if (indexed > 0) rt.log.info({ indexed }, 'messages indexed for search by the backfill');
};
