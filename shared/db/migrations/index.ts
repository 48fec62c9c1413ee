import type { Knex } from 'knex';
import * as core from './001_core.js';

// Ordered by name; append new migrations here.
export const migrations: Record<string, Knex.Migration> = {
  '001_core': core,
};
