import { AppError } from '../../../../shared/errors.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { z } from 'zod';

export function interactionRoutes(routes: RouteTable) {
  routes.add(
    {
      method: 'post',
      path: '/interactions/actions',
      summary: 'Invoke a button actionId handler (not implemented at feature level 2)',
      until: 2,
      tag: 'Interactions',
      body: z.unknown(),
      succeeds: false,
      errors: ['not_implemented'],
    },
    () => {
      throw new AppError('not_implemented', 'button actions are not implemented yet: clients render actionId buttons as disabled');
    },
  );
}
