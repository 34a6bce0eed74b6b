import crypto from 'node:crypto';
import { DomainError } from './errors';

/**
 * Opaque, tamper-checked page cursors: base64url JSON plus a truncated HMAC. A cursor is bound
 * to the operation, workspace and filter it was issued for; anything else is `invalid_input`.
 */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(scope: string, position: unknown): string {
    const payload = Buffer.from(JSON.stringify([scope, position]), 'utf8').toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  decode<T>(scope: string, cursor: string | undefined): T | null {
    if (cursor === undefined) return null;
    const [payload, signature, extra] = cursor.split('.');
    if (!payload || !signature || extra !== undefined)
      throw new DomainError('invalid_input', 'query.cursor: malformed');
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) {
      throw new DomainError('invalid_input', 'query.cursor: not a cursor of this service');
    }
    const [cursorScope, position] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, T];
    if (cursorScope !== scope) throw new DomainError('invalid_input', 'query.cursor: issued for another listing');
    return position;
  }

  private sign(payload: string): string {
    return crypto.createHmac('sha256', this.secret).update(payload).digest().subarray(0, 16).toString('base64url');
  }
}
