import { foundation } from './001_foundation.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Append-only: a released migration is never edited, a change is a new one with the next version. */
export const MIGRATIONS: Migration[] = [foundation];
