import type { JobLease, JobLeaseRepo } from '../ports/jobLeases.js';
import type { Sql } from '../sql.js';

/**
 * `job_leases` on both engines. A lease's row is made on first use (empty holder, free); taking it is
 * one conditional UPDATE (free, expired, or already ours). On PostgreSQL the row is first locked with
 * `FOR UPDATE SKIP LOCKED`, so that of several instances claiming at once the others skip it at once
 * instead of waiting for the first to commit; on SQLite units run one at a time and the plain UPDATE
 * is the whole claim.
 */
export class SqlJobLeaseRepo implements JobLeaseRepo {
  constructor(private readonly sql: Sql) {}

  async acquire(name: string, holder: string, now: string, until: string): Promise<boolean> {
    await this.sql.run("INSERT INTO job_leases (name, holder, leased_until) VALUES (?, '', '') ON CONFLICT (name) DO NOTHING", name);
    const taken =
      this.sql.dialect === 'postgres'
        ? await this.sql.run(
            `UPDATE job_leases SET holder = ?, leased_until = ?
             WHERE name IN (SELECT name FROM job_leases WHERE name = ? AND (leased_until <= ? OR holder = ?) FOR UPDATE SKIP LOCKED)`,
            holder,
            until,
            name,
            now,
            holder,
          )
        : await this.sql.run(
            'UPDATE job_leases SET holder = ?, leased_until = ? WHERE name = ? AND (leased_until <= ? OR holder = ?)',
            holder,
            until,
            name,
            now,
            holder,
          );
    return taken.changes === 1;
  }

  async renew(name: string, holder: string, until: string): Promise<boolean> {
    return (await this.sql.run("UPDATE job_leases SET leased_until = ? WHERE name = ? AND holder = ? AND leased_until <> ''", until, name, holder))
      .changes === 1;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.sql.run("UPDATE job_leases SET leased_until = '' WHERE name = ? AND holder = ?", name, holder);
  }

  async get(name: string): Promise<JobLease | undefined> {
    const row = await this.sql.get<{ name: string; holder: string; leased_until: string }>(
      'SELECT name, holder, leased_until FROM job_leases WHERE name = ?',
      name,
    );
    return row && { name: row.name, holder: row.holder, leasedUntil: row.leased_until };
  }
}
