import { localTime } from './time';

/** A time as the viewer's local time and as the Unix seconds the service gave. */
export function When(props: { at: number | null; open?: string }) {
  if (props.at === null) return <span class="when open">{props.open ?? 'open'}</span>;
  return (
    <span class="when">
      <time dateTime={new Date(props.at * 1000).toISOString()}>{localTime(props.at)}</time> <code>{props.at}</code>
    </span>
  );
}
