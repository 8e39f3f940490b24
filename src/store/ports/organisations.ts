import type { Organisation } from '../../schemas/organisation.js';

export interface OrganisationRepo {
  get(org: string): Promise<Organisation | undefined>;
  update(org: Organisation): Promise<void>;
}
