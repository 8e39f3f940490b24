import { describe, expect, it } from 'vitest';
import { newId, ulidToUuid, uuidToUlid, UUID_RE } from '../src/ids.js';

describe('newId', () => {
  it('makes RFC 9562 version 7 UUIDs that increase strictly within the process', () => {
    const ids = Array.from({ length: 20_000 }, () => newId());
    for (const id of ids) {
      expect(id).toMatch(UUID_RE);
      expect(id[14]).toBe('7');
      expect('89ab').toContain(id[19]!);
    }
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!, `${ids[i - 1]} < ${ids[i]}`).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('carries the current time in its first 48 bits', () => {
    const before = Date.now();
    const ms = parseInt(newId().replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now() + 5);
  });
});

describe('ULID and UUID forms', () => {
  it('are the same 128 bits both ways', () => {
    const ulid = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    expect(uuidToUlid(ulidToUuid(ulid))).toBe(ulid);
    expect(ulidToUuid(ulid)).toBe('01563e3a-b5d3-d676-4c61-efb99302bd5b');
  });
});
