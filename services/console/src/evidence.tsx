import { useRef, useState } from 'preact/hooks';
import { Show, useAnswer } from './answer';
import type { Api, Evidence, Verification } from './api';
import { sha256Hex } from './hash';
import { href } from './route';
import { When } from './when';

interface Check {
  computed: string;
  /** Each recorded hash the excerpt should hash to, and whether it does. */
  against: { label: string; expected: string; equal: boolean }[];
}

function CheckButton(props: { evidence: Evidence; verifications: Verification[]; excerpt: () => string }) {
  const [check, setCheck] = useState<Check | null>(null);
  const run = async () => {
    const computed = await sha256Hex(props.excerpt());
    const against = [
      { label: 'excerpt_sha256 of the evidence', expected: props.evidence.excerpt_sha256 },
      ...props.verifications.map((v) => ({
        label: `expected excerpt hash of verification ${v.id} (${v.verdict})`,
        expected: v.excerpt_sha256,
      })),
    ].map((entry) => ({ ...entry, equal: entry.expected === computed }));
    setCheck({ computed, against });
  };
  const ok = check?.against.every((entry) => entry.equal);
  return (
    <div class="check">
      <button type="button" onClick={run} data-testid="check">
        Check
      </button>{' '}
      <span class="muted">re-hashes the excerpt shown above with WebCrypto (SHA-256 of its UTF-8 bytes)</span>
      {check && (
        <div
          class={ok ? 'check-ok' : 'check-bad'}
          data-testid="check-result"
          data-ok={ok ? 'true' : 'false'}
          role="status"
        >
          <p>
            <strong>{ok ? 'Matches' : 'Does not match'}</strong>: the shown excerpt hashes to{' '}
            <code>{check.computed}</code>
          </p>
          <ul>
            {check.against.map((entry) => (
              <li key={entry.label} class={entry.equal ? 'equal' : 'differs'}>
                {entry.equal ? '✓' : '✗'} {entry.label}: <code>{entry.expected}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

/** The evidence with every verification (`evidence.get` pages them, 32 at a time, oldest first). */
async function loadEvidence(api: Api, id: string): Promise<{ evidence: Evidence; verifications: Verification[] }> {
  const path = `/v1/evidence/${encodeURIComponent(id)}`;
  const first = await api.get<{ evidence: Evidence; verifications: Verification[]; next_cursor: string | null }>(path);
  const verifications = [...first.verifications];
  for (let cursor = first.next_cursor; cursor; ) {
    const page = await api.get<{ verifications: Verification[]; next_cursor: string | null }>(path, { cursor });
    verifications.push(...page.verifications);
    cursor = page.next_cursor;
  }
  return { evidence: first.evidence, verifications };
}

export function EvidenceView(props: { api: Api; ws: string; id: string }) {
  const answer = useAnswer(() => loadEvidence(props.api, props.id), [props.api, props.id]);
  const excerpt = useRef<HTMLPreElement>(null);
  return (
    <section aria-labelledby="evidence-title">
      <h1 id="evidence-title">
        Evidence <code>{props.id}</code>
      </h1>
      <Show answer={answer}>
        {({ evidence, verifications }) => (
          <>
            <dl class="facts">
              <dt>Source</dt>
              <dd>
                <code>{evidence.source_locator}</code>
              </dd>
              <dt>Namespace</dt>
              <dd>
                <a href={href.namespace(props.ws, evidence.namespace_id)}>{evidence.namespace_id}</a>
              </dd>
              <dt>Content root SHA-256</dt>
              <dd>
                <code>{evidence.content_root_sha256}</code>
              </dd>
              <dt>Excerpt SHA-256</dt>
              <dd>
                <code>{evidence.excerpt_sha256}</code>
              </dd>
              <dt>Recorded</dt>
              <dd>
                <When at={evidence.recorded_at} /> by <code>{evidence.recorder_actor_id}</code>
              </dd>
            </dl>
            <h2>Excerpt</h2>
            <pre class="excerpt" ref={excerpt} data-testid="excerpt">
              {evidence.excerpt}
            </pre>
            <CheckButton
              evidence={evidence}
              verifications={verifications}
              excerpt={() => excerpt.current?.textContent ?? ''}
            />
            <h2>Verifications</h2>
            {verifications.length === 0 ? (
              <p>None recorded.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Verdict</th>
                    <th scope="col">Verifier</th>
                    <th scope="col">Recorded</th>
                    <th scope="col">Expected content root</th>
                    <th scope="col">Expected excerpt hash</th>
                  </tr>
                </thead>
                <tbody>
                  {verifications.map((v) => (
                    <tr key={v.id} data-verification-id={v.id}>
                      <td>{v.verdict}</td>
                      <td>
                        <code>{v.verifier_actor_id}</code>
                      </td>
                      <td>
                        <When at={v.recorded_at} />
                      </td>
                      <td>
                        <code>{v.content_root_sha256}</code>
                      </td>
                      <td>
                        <code>{v.excerpt_sha256}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </Show>
    </section>
  );
}
