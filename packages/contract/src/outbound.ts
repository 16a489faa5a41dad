/**
 * Why the platform refused to call a URL for an owner (webhook endpoints, OpenID issuers). The API answers
 * these as 4xx `{ code, message }`; the portal shows the message verbatim.
 */
export const outboundErrors = {
  invalidUrl: 'The URL is not valid',
  notHttps: 'The URL must start with https://',
  credentials: 'The URL must not contain a user name or password',
  privateAddress: 'The URL must point to a public address: private, loopback, link-local and metadata addresses cannot be called',
  unresolvable: 'The URL’s host name could not be resolved',
  unreachable: 'The URL could not be reached',
  tooManyRedirects: 'The URL redirected too many times',
  badRedirect: 'The URL redirected to an address that is not allowed',
  timeout: 'The URL did not answer in time',
  tooLarge: 'The URL answered with too much data',
} as const;

export type OutboundRefusal = keyof typeof outboundErrors;
