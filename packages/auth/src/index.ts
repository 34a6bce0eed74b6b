export {
  type CredentialCeiling,
  capabilitiesOn,
  type GrantLike,
  type NamespaceLike,
  narrowGrants,
  reachOf,
  subtreeCapabilitiesOn,
} from './capabilities';
export {
  type CredentialKind,
  looksLikeCredentialSecret,
  mintCredentialSecret,
  parseCredentialSecret,
  secretMatches,
} from './credential-secret';
export { DEV_AUDIENCE, DEV_ISSUER, DEV_SUBJECT, DevIssuer } from './dev-issuer';
export {
  ALLOWED_ALGORITHMS,
  AUTH_FAILURES,
  type AuthFailure,
  DEFAULT_SCOPES,
  InvalidTokenError,
  type IssuerConfig,
  KeySetUnavailableError,
  parseBearer,
  type TokenKind,
  TokenVerifier,
  type VerifiedToken,
} from './token-verifier';
