/** Times as the service gives them (Unix seconds), shown in the viewer's zone and as the number itself. */

const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

const format = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  fractionalSecondDigits: 3,
  timeZoneName: 'short',
});

export function localTime(seconds: number): string {
  return format.format(new Date(seconds * 1000));
}

export function viewerZone(): string {
  return zone;
}

/** A short tick label: date, or time of day when the span is under two days (with milliseconds under two minutes). */
export function tickLabel(seconds: number, spanSeconds: number): string {
  const date = new Date(seconds * 1000);
  if (spanSeconds < 120) {
    return date.toLocaleTimeString(undefined, {
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      fractionalSecondDigits: 3,
    });
  }
  if (spanSeconds < 2 * 86_400) {
    return date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  }
  return date.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}
