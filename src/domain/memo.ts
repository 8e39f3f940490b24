/** The value `map` holds for `key`, loaded (and kept) on first use: for lookups a unit of work repeats. */
export function memo<T>(map: Map<string, T>, key: string, load: () => T): T {
  let hit = map.get(key);
  if (hit === undefined) {
    hit = load();
    map.set(key, hit);
  }
  return hit;
}
