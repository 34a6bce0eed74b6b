export { capabilitiesOn, type GrantLike, type NamespaceLike, reachOf, subtreeCapabilitiesOn } from './capabilities';
export { DEV_AUDIENCE, DEV_ISSUER, DEV_SUBJECT, DevIssuer } from './dev-issuer';
export {
  ALLOWED_ALGORITHMS,
  DEFAULT_SCOPES,
  InvalidTokenError,
  type IssuerConfig,
  KeySetUnavailableError,
  parseBearer,
  type TokenKind,
  TokenVerifier,
  type VerifiedToken,
} from './token-verifier';
