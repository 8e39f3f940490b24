/** A named lease on a job of the jobs loop (`job_leases`): who holds it, until when. */
export interface JobLease {
  name: string;
  /** The holder's id (host, process, run); kept after a release, to show who ran it last. */
  holder: string;
  /** ISO timestamp until which the holder has it; '' once released. */
  leasedUntil: string;
}

/**
 * Leases that make one pass of a job run on one instance at a time. A lease is free once released or
 * once `leasedUntil` has passed (its holder died or stopped renewing), and is then taken by the
 * first instance that claims it. Run `acquire`, `renew` and `release` in claim units
 * (`UnitOptions.claim`).
 */
export interface JobLeaseRepo {
  /**
   * Takes lease `name` for `holder` until `until` when it is free at `now` or already `holder`'s;
   * whether it did. On PostgreSQL a lease row another instance is claiming at this moment counts as
   * taken (`FOR UPDATE SKIP LOCKED`): it is skipped, not waited for.
   */
  acquire(name: string, holder: string, now: string, until: string): Promise<boolean>;
  /** Extends `holder`'s lease to `until`; false when it is no longer `holder`'s (it expired and was taken over). */
  renew(name: string, holder: string, until: string): Promise<boolean>;
  /** Frees `holder`'s lease at once (nothing when it is no longer `holder`'s). */
  release(name: string, holder: string): Promise<void>;
  get(name: string): Promise<JobLease | undefined>;
}
