import { z } from 'zod';

/** Days messages are kept (contract §16, any level): at least 1, a century at most; null keeps them for ever. */
export const RetentionDays = z.number().int().min(1).max(36_500).nullable();
