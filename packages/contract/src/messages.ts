/**
 * Every user-facing validation message, once. Forms and the server both read these, so the
 * portal and the API can never word the same rule differently.
 */
export const messages = {
  required: 'Required',
  invalidEmail: 'Invalid email address',
  passwordTooShort: 'Needs to be at least 5 characters',
  passwordsNotMatching: 'Passwords are not matching',
  agreementRequired: 'You need to accept the privacy policy',
  invalidUrl: 'Not a valid url (make sure to add https:// or http://)',
  invalidUrlOrMailto: 'Not a valid url or mailto address',
  invalidSecureUrl: 'Not a valid SECURE url (make sure to add https://)',
  invalidHexColour: 'Not a valid Hex colour',
  logoWrongType: 'Please choose an image file of type JPEG or PNG',
  logoTooBig: 'Your file is too big! Please select an image under 1MB',
  logoHeightHint: 'Recommended logo height: 60px at most',
  tooLong: 'Too long',
  // Text the platform refuses anywhere (text.ts).
  controlCharacters: 'Must not contain control characters',
  lineBreaks: 'Must be a single line (no line breaks)',
  bidiControls: 'Must not contain characters that change the text direction',
  timeRange: 'Must be a time between 1970 and 9999, in seconds since 1970',
  // Auth keys (the spec checks only that the input parses; the platform needs a usable public key).
  keyNotJson: 'The key is not valid JSON',
  keyNotObject: 'The key must be a JSON object (a JWK)',
  keyPrivateMembers: 'This is a private key. Paste the public key only (remove "d" and the other private members).',
  keyUnsupportedType: 'Unsupported key type: use an RSA, EC or OKP public key',
  keyMissingKid: 'The key needs a "kid" (key id)',
  keyRsaTooShort: 'RSA keys must be at least 2048 bits',
  keyRsaMembers: 'An RSA key needs "n" and "e"',
  keyEcCurve: 'Unsupported curve: use P-256, P-384, P-521 or secp256k1',
  keyEcMembers: 'An EC key needs "x" and "y"',
  keyOkpCurve: 'Unsupported curve: use Ed25519',
  keyOkpMembers: 'An OKP key needs "x"',
  keyUse: 'A key used to verify tokens must have "use": "sig"',
  keyExp: '"exp" must be the key’s expiry in seconds since 1970 (like a token’s exp)',
  // Keys the crypto would take but nobody should trust, and ids/algorithms outside the safe set.
  keyKidInvalid: 'The "kid" may only hold letters, digits and . _ ~ : + / = - (no spaces or line breaks)',
  keyAlgUnknown: 'Unsupported "alg": use RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, ES256K or EdDSA',
  keyAlgMismatch: '"alg" does not fit this key: RSA keys take RS* or PS*, P-256 ES256, P-384 ES384, P-521 ES512, secp256k1 ES256K, Ed25519 EdDSA',
  keyRsaTooLong: 'RSA keys must be at most 8192 bits',
  keyRsaExponent: 'The RSA exponent "e" must be odd and at least 3 (usually 65537, "AQAB")',
  keyEcPoint: 'The key’s "x" and "y" are not a point on its curve',
  keyOkpPoint: 'This Ed25519 "x" is not a usable public key: it must be 32 bytes and not a weak (small-order) or non-canonical point',
  keyExpired: 'This key has already expired ("exp" is in the past)',
  keyInvalid: 'This key cannot be read as a public key: check its members',
} as const;

export type MessageKey = keyof typeof messages;
