/**
 * Time zones for a billing run. Every wall-clock step Luxon takes in an IANA zone (`plus`, `diff`,
 * `fromISO` with a zone) asks the zone for its UTC offset at an instant several times, and each
 * answer is an `Intl.DateTimeFormat#formatToParts` call (~10-30 µs): a billing run asks for
 * thousands per second, mostly about the same few hours. A `RunZone` is the same IANA zone (equal to
 * it, same name, same offsets) that remembers, per hour, the offset that holds through that whole
 * hour; an hour in which the offset changes is not remembered and each instant in it is asked as
 * before. The answers are therefore exactly the zone's own (tzdb never changes an offset twice within
 * an hour).
 */
import { IANAZone } from 'luxon';

const HOUR_MS = 3_600_000;

export class RunZone extends IANAZone {
  /** Hour number (ms since the epoch / 1 h) → the offset in minutes throughout it, or null when it changes within it. */
  private readonly hours = new Map<number, number | null>();

  override offset(ts: number): number {
    const hour = Math.floor(ts / HOUR_MS);
    let known = this.hours.get(hour);
    if (known === undefined) {
      if (!Number.isFinite(hour)) return super.offset(ts);
      const first = super.offset(hour * HOUR_MS);
      const last = super.offset(hour * HOUR_MS + HOUR_MS - 1);
      known = first === last && !Number.isNaN(first) ? first : null;
      this.hours.set(hour, known);
    }
    return known ?? super.offset(ts);
  }
}

/** The zones of one run (or one estimate), by name. Never shared between runs: it only grows. */
export class ZoneCache {
  private readonly zones = new Map<string, RunZone>();

  get(name: string): RunZone {
    let zone = this.zones.get(name);
    if (!zone) {
      zone = new RunZone(name);
      this.zones.set(name, zone);
    }
    return zone;
  }
}
