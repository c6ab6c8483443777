const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    });
    // Zones are few (IANA names the jobs service checked); the cap only guards memory.
    if (formats.size >= 1000) formats.clear();
    formats.set(zone, f);
  }
  return f;
}

/** ISO 8601 of `ms` on the wall clock of `zone`, with its offset there: 2026-03-29T03:00:00+02:00. */
export function isoInZone(ms: number, zone: string): string {
  const parts: Record<string, string> = {};
  for (const p of formatOf(zone).formatToParts(ms)) parts[p.type] = p.value;
  // "GMT+02:00", or "GMT" at offset zero.
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : (parts.timeZoneName ?? '').replace('GMT', '');
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}
