import { useRef } from 'preact/hooks';
import type { Revision } from './api';
import { endingOf, endingText } from './history';
import { axis, stepStop, toMilliseconds } from './scale';
import { localTime, tickLabel } from './time';

/** A point of the two clocks: valid time (`as_of`) and record time (`known_at`), Unix seconds. */
export interface Point {
  asOf: number;
  knownAt: number;
}

const WIDTH = 960;
const HEIGHT = 380;
const PLOT = { left: 120, right: WIDTH - 24, top: 16, bottom: HEIGHT - 56 };

/** The hatching (`url(#stripes)`) that marks purged revisions. */
function StripesPattern() {
  return (
    <defs>
      <pattern id="stripes" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
        <rect width="8" height="8" class="stripes-back" />
        <line x1="0" y1="0" x2="0" y2="8" class="stripes-line" />
      </pattern>
    </defs>
  );
}

export function Timeline(props: {
  revisions: Revision[];
  point: Point | null;
  onPick: (point: Point) => void;
  causeHref: (revisionId: string) => string | null;
}) {
  const { revisions, point, onPick } = props;
  // Keys pressed faster than a render each move on from the last pick, not from the last drawn point.
  const last = useRef(point);
  last.current = point;
  const pick = (next: Point) => {
    last.current = next;
    onPick(next);
  };
  const x = axis(
    revisions.flatMap((r) => (r.valid_to === null ? [r.valid_from] : [r.valid_from, r.valid_to])),
    PLOT.left,
    PLOT.right,
  );
  const recordTimes = revisions.flatMap((r) => [
    r.recorded_at,
    ...(r.recorded_until === null ? [] : [r.recorded_until]),
    ...(r.invalidation ? [r.invalidation.recorded_at] : []),
  ]);
  const y = axis(recordTimes, PLOT.bottom, PLOT.top);

  const pickAt = (event: MouseEvent) => {
    const svg = event.currentTarget as SVGSVGElement;
    const box = svg.getBoundingClientRect();
    const px = ((event.clientX - box.left) / box.width) * WIDTH;
    const py = ((event.clientY - box.top) / box.height) * HEIGHT;
    if (px < PLOT.left || px > PLOT.right || py < PLOT.top || py > PLOT.bottom) return;
    pick({ asOf: toMilliseconds(x.invert(px)), knownAt: toMilliseconds(y.invert(py)) });
  };

  const onKey = (event: KeyboardEvent) => {
    const step = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowDown: [0, -1], ArrowUp: [0, 1] }[event.key];
    if (!step) return;
    event.preventDefault();
    const from = last.current;
    pick({ asOf: stepStop(x, from?.asOf, step[0] ?? 0), knownAt: stepStop(y, from?.knownAt, step[1] ?? 0) });
  };

  const xTicks = x.edges.length > 8 ? x.edges.filter((_, i) => i % Math.ceil(x.edges.length / 8) === 0) : x.edges;
  const yTicks = y.edges.length > 8 ? y.edges.filter((_, i) => i % Math.ceil(y.edges.length / 8) === 0) : y.edges;
  return (
    <figure class="timeline">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="application"
        aria-label="Timeline: valid time across, record time up. Arrow keys move the crosshair; the table below lists the same revisions."
        tabindex={0}
        onClick={pickAt}
        onKeyDown={onKey}
        data-x-domain={`${x.min} ${x.end}`}
        data-y-domain={`${y.min} ${y.end}`}
        data-plot={`${PLOT.left} ${PLOT.top} ${PLOT.right} ${PLOT.bottom}`}
      >
        <StripesPattern />
        <rect x={PLOT.left} y={PLOT.top} width={PLOT.right - PLOT.left} height={PLOT.bottom - PLOT.top} class="plot" />
        {xTicks.map((t) => (
          <g key={`x${t}`} class="tick">
            <line x1={x.at(t)} x2={x.at(t)} y1={PLOT.bottom} y2={PLOT.bottom + 5} />
            <text x={x.at(t)} y={PLOT.bottom + 18} text-anchor="middle">
              {tickLabel(t, x.end - x.min)}
            </text>
          </g>
        ))}
        {yTicks.map((t) => (
          <g key={`y${t}`} class="tick">
            <line x1={PLOT.left - 5} x2={PLOT.left} y1={y.at(t)} y2={y.at(t)} />
            <text x={PLOT.left - 8} y={y.at(t) + 4} text-anchor="end">
              {tickLabel(t, y.end - y.min)}
            </text>
          </g>
        ))}
        <text x={(PLOT.left + PLOT.right) / 2} y={HEIGHT - 12} text-anchor="middle" class="axis-title">
          valid time (as_of) →
        </text>
        <text
          x={14}
          y={(PLOT.top + PLOT.bottom) / 2}
          transform={`rotate(-90 14 ${(PLOT.top + PLOT.bottom) / 2})`}
          text-anchor="middle"
          class="axis-title"
        >
          record time (known_at) →
        </text>
        {revisions.map((r) => {
          const left = x.at(r.valid_from);
          const right = x.at(r.valid_to ?? x.end);
          const top = y.at(r.recorded_until ?? y.end);
          const bottom = y.at(r.recorded_at);
          const ending = endingOf(r, revisions);
          const cause = r.invalidation ? props.causeHref(r.invalidation.cause_revision_id) : null;
          return (
            <g key={r.id} class={`revision ${r.status} ${ending.kind}`}>
              <rect
                x={left}
                y={top}
                width={right - left}
                height={bottom - top}
                data-revision-id={r.id}
                data-generation={r.generation}
                data-status={r.status}
              >
                <title>{`generation ${r.generation} (${r.status}), ${endingText(ending)}: ${r.text}`}</title>
              </rect>
              {r.valid_to === null && (
                <path d={`M${right - 8},${(top + bottom) / 2 - 5} l8,5 l-8,5`} class="open-end" />
              )}
              {r.recorded_until === null && (
                <path d={`M${(left + right) / 2 - 5},${top + 8} l5,-8 l5,8`} class="open-end" />
              )}
              {ending.kind === 'retracted' && <line x1={left} x2={right} y1={top} y2={top} class="retracted-edge" />}
              {ending.kind === 'superseded' && (
                <line x1={left} x2={right} y1={top} y2={top} class="superseded-edge">
                  <title>{`superseded by generation ${ending.by.generation} (${ending.by.id})`}</title>
                </line>
              )}
              {r.invalidation && (
                <a href={cause ?? undefined} class="invalidation">
                  <line
                    x1={left}
                    x2={right}
                    y1={y.at(r.invalidation.recorded_at)}
                    y2={y.at(r.invalidation.recorded_at)}
                  />
                  <text x={left + 4} y={y.at(r.invalidation.recorded_at) - 3}>
                    {`stale: ${r.invalidation.reason}`}
                  </text>
                </a>
              )}
              {bottom - top > 14 && right - left > 12 && (
                // The browser lays the label out: whole when it fits, else cut with an ellipsis
                // (CSS text-overflow), the whole text in its title and the rectangle's.
                <foreignObject x={left + 4} y={bottom - 18} width={right - left - 8} height={16} class="label-box">
                  <div class="label" title={`g${r.generation} ${r.text}`} data-revision-id={r.id}>
                    {`g${r.generation} ${r.text}`}
                  </div>
                </foreignObject>
              )}
            </g>
          );
        })}
        {point && (
          <g class="crosshair" data-as-of={point.asOf} data-known-at={point.knownAt}>
            <line x1={x.at(point.asOf)} x2={x.at(point.asOf)} y1={PLOT.top} y2={PLOT.bottom} />
            <line x1={PLOT.left} x2={PLOT.right} y1={y.at(point.knownAt)} y2={y.at(point.knownAt)} />
            <circle cx={x.at(point.asOf)} cy={y.at(point.knownAt)} r="4" />
          </g>
        )}
      </svg>
      <figcaption>
        Each rectangle is one revision: valid from its left edge to its right, recorded from its bottom edge to its top.{' '}
        <span class="swatch asserted" /> asserted <span class="swatch candidate" /> candidate; a red top edge is a
        retraction, a dark one the correction or attestation that superseded it; a dashed line marks when a revision
        went stale (it links to the memory whose revision caused it); an arrowhead marks an interval still open. Click,
        or focus the chart and use the arrow keys, to pick a point.
      </figcaption>
    </figure>
  );
}

/** The same rectangles as a table: the timeline's text alternative. */
export function TimelineTable(props: { revisions: Revision[]; causeHref: (revisionId: string) => string | null }) {
  const { revisions } = props;
  const time = (seconds: number | null, open: string) =>
    seconds === null ? (
      open
    ) : (
      <>
        {localTime(seconds)}
        <br />
        <code>{seconds}</code>
      </>
    );
  return (
    <table class="revisions" aria-label="Revisions (the timeline as a table)">
      <thead>
        <tr>
          <th scope="col">Gen.</th>
          <th scope="col">Revision</th>
          <th scope="col">Status</th>
          <th scope="col">Text</th>
          <th scope="col">Valid from</th>
          <th scope="col">Valid to</th>
          <th scope="col">Recorded at</th>
          <th scope="col">Recorded until</th>
          <th scope="col">Ended</th>
          <th scope="col">Invalidation</th>
        </tr>
      </thead>
      <tbody>
        {revisions.map((r) => {
          const cause = r.invalidation ? props.causeHref(r.invalidation.cause_revision_id) : null;
          return (
            <tr key={r.id} data-revision-id={r.id}>
              <td>{r.generation}</td>
              <td>
                <code>{r.id}</code>
              </td>
              <td>{r.status}</td>
              <td>{r.text}</td>
              <td>{time(r.valid_from, '')}</td>
              <td>{time(r.valid_to, 'open')}</td>
              <td>{time(r.recorded_at, '')}</td>
              <td>{time(r.recorded_until, 'open')}</td>
              <td>{endingText(endingOf(r, revisions))}</td>
              <td>
                {r.invalidation ? (
                  <>
                    {r.invalidation.reason} at {time(r.invalidation.recorded_at, '')}, cause{' '}
                    {cause ? (
                      <a href={cause}>{r.invalidation.cause_revision_id}</a>
                    ) : (
                      <code>{r.invalidation.cause_revision_id}</code>
                    )}
                  </>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** A purged memory's revisions as the change feed names them: record time only, hatched, no text. */
export function PurgedTimeline(props: { bands: { revisionId: string; from: number; to: number }[]; purgedAt: number }) {
  const y = axis(
    props.bands.flatMap((band) => [band.from, band.to]),
    PLOT.bottom,
    PLOT.top,
  );
  return (
    <figure class="timeline">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label="Purged revisions: record time only, no text">
        <rect x={PLOT.left} y={PLOT.top} width={PLOT.right - PLOT.left} height={PLOT.bottom - PLOT.top} class="plot" />
        {props.bands.map((band) => (
          <rect
            key={band.revisionId}
            class="purged"
            x={PLOT.left}
            y={y.at(band.to)}
            width={PLOT.right - PLOT.left}
            height={y.at(band.from) - y.at(band.to)}
            fill="url(#stripes)"
            data-revision-id={band.revisionId}
          >
            <title>{`revision ${band.revisionId}: purged`}</title>
          </rect>
        ))}
        {y.edges.map((t) => (
          <g key={t} class="tick">
            <text x={PLOT.left - 8} y={y.at(t) + 4} text-anchor="end">
              {tickLabel(t, y.end - y.min)}
            </text>
          </g>
        ))}
        <text x={(PLOT.left + PLOT.right) / 2} y={HEIGHT - 12} text-anchor="middle" class="axis-title">
          valid time: erased with the text
        </text>
        <StripesPattern />
      </svg>
      <figcaption>
        Purged at {localTime(props.purgedAt)} (<code>{props.purgedAt}</code>): every revision's text is erased at every
        known_at. The bands are the record intervals of the commits that wrote each revision, from the change feed.
      </figcaption>
    </figure>
  );
}
