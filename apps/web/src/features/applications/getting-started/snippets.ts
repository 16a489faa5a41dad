import type { Application } from '@latchkey/contract';
import type { Platform } from '../../../lib/paths';
import { algorithmFor } from '../../../lib/jwk-algorithm';
import { jsString as js, kotlinString as kt, swiftString as str } from '../../../lib/code-literals';

/**
 * Code samples for the Getting Started tabs, filled with one application's values. Kept as plain
 * functions (no React) so the exact text is easy to test. Code is not translated; the prose around it is.
 */
export interface SnippetValues {
  applicationId: string;
  /** The first registered issuer, or a placeholder when none is registered yet. */
  issuer: string;
  audience: string;
  kid: string;
  alg: string;
  kty: 'EC' | 'OKP' | 'RSA';
  /** Absolute URL of GET /platform/auth on this deployment. */
  authUrl: string;
}

export const ISSUER_PLACEHOLDER = 'https://auth.your-company.com';
export const KID_PLACEHOLDER = 'your-key-id';

export function snippetValues(app: Application, audience: string, origin: string): SnippetValues {
  const key = Object.values(app.authKeys)[0];
  const kty = key?.kty === 'RSA' || key?.kty === 'OKP' ? key.kty : 'EC';
  return {
    applicationId: app.applicationId,
    issuer: app.authDomains[0] ?? ISSUER_PLACEHOLDER,
    audience,
    kid: key?.kid ?? KID_PLACEHOLDER,
    alg: key ? algorithmFor(key) : 'ES256',
    kty,
    authUrl: `${origin}/api/platform/auth`,
  };
}

/*
 * Every stored value (key id, alg, issuer, audience, URL, application id) enters a sample
 * only as a string literal of the sample's language, written by lib/code-literals; never into a comment
 * and never as code. Where the code names an algorithm (a JWTKit type, a Nimbus constant), the name comes
 * from the fixed tables below, not from the stored `alg`.
 */

/** JWTKit's ECDSA private key types, by `alg`. */
const SWIFT_EC_KEYS: Record<string, string> = { ES256: 'ES256PrivateKey', ES384: 'ES384PrivateKey', ES512: 'ES512PrivateKey' };
/** JWTKit's RSA signing: padding method and digest, by `alg`. */
const SWIFT_RSA: Record<string, [method: string, digest: string]> = {
  RS256: ['rsa', 'sha256'],
  RS384: ['rsa', 'sha384'],
  RS512: ['rsa', 'sha512'],
  PS256: ['pss', 'sha256'],
  PS384: ['pss', 'sha384'],
  PS512: ['pss', 'sha512'],
};
/** Nimbus JOSE's JWSAlgorithm constants for the asymmetric algorithms; any other `alg` goes through parse(). */
const KOTLIN_ALGS = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES256K', 'ES384', 'ES512', 'EdDSA', 'Ed25519']);
const own = (table: object, key: string) => Object.prototype.hasOwnProperty.call(table, key);

const SWIFT_UNSUPPORTED = '// JWTKit cannot sign with this key\'s algorithm: register a P-256 key for a Swift backend.';

function swiftKey(v: SnippetValues): string {
  if (v.kty === 'OKP')
    return `// The "d" member of this key's private JWK, from your secret store.
let privateKeyD = ProcessInfo.processInfo.environment["PLATFORM_PRIVATE_KEY_D"]!
await keys.add(eddsa: try EdDSA.PrivateKey(d: privateKeyD, curve: .ed25519), kid: ${str(v.kid)})`;
  if (v.kty === 'RSA') {
    if (!own(SWIFT_RSA, v.alg)) return SWIFT_UNSUPPORTED;
    const [method, digest] = SWIFT_RSA[v.alg]!;
    return `// The private half of this key as PEM, from your secret store.
let privateKeyPEM = ProcessInfo.processInfo.environment["PLATFORM_PRIVATE_KEY_PEM"]!
await keys.add(${method}: try Insecure.RSA.PrivateKey(pem: privateKeyPEM), digestAlgorithm: .${digest}, kid: ${str(v.kid)})`;
  }
  if (v.alg === 'ES256K') return '// JWTKit cannot sign with secp256k1 (ES256K) keys: register a P-256 key for a Swift backend.';
  if (!own(SWIFT_EC_KEYS, v.alg)) return SWIFT_UNSUPPORTED;
  return `// The private half of this key as PEM (PKCS#8), from your secret store.
let privateKeyPEM = ProcessInfo.processInfo.environment["PLATFORM_PRIVATE_KEY_PEM"]!
await keys.add(ecdsa: try ${SWIFT_EC_KEYS[v.alg]}(pem: privateKeyPEM), kid: ${str(v.kid)})`;
}

function swiftSign(v: SnippetValues): string {
  return `import Foundation
import JWTKit

// The claims the platform checks, plus the user's email and name.
struct UserToken: JWTPayload {
    var iss: IssuerClaim
    var aud: AudienceClaim
    var sub: SubjectClaim
    var iat: IssuedAtClaim
    var exp: ExpirationClaim
    var email: String
    var name: String

    func verify(using algorithm: some JWTAlgorithm) throws {
        try exp.verifyNotExpired()
    }
}

let keys = JWTKeyCollection()
${swiftKey(v)}

func userToken(userId: String, email: String, name: String) async throws -> String {
    let now = Date()
    let claims = UserToken(
        iss: IssuerClaim(value: ${str(v.issuer)}),
        aud: AudienceClaim(value: [${str(v.audience)}]),
        sub: SubjectClaim(value: userId),
        iat: IssuedAtClaim(value: now),
        exp: ExpirationClaim(value: now.addingTimeInterval(10 * 60)),
        email: email,
        name: name
    )
    return try await keys.sign(claims, kid: ${str(v.kid)})
}`;
}

function swiftCall(v: SnippetValues): string {
  return `import Foundation

struct PlatformIdentity: Decodable {
    let applicationId: String
    let sub: String
    let email: String?
    let displayName: String?
}

func signInToPlatform(userToken: String) async throws -> PlatformIdentity {
    var request = URLRequest(url: URL(string: ${str(v.authUrl)})!)
    request.setValue("Bearer \\(userToken)", forHTTPHeaderField: "Authorization")
    let (data, response) = try await URLSession.shared.data(for: request)
    // A 401 body's "message" names the check that failed; the token tester shows them all.
    guard (response as? HTTPURLResponse)?.statusCode == 200 else {
        throw URLError(.userAuthenticationRequired)
    }
    let identity = try JSONDecoder().decode(PlatformIdentity.self, from: data)
    guard identity.applicationId == ${str(v.applicationId)} else {
        throw URLError(.badServerResponse)
    }
    return identity
}`;
}

function kotlinSigner(v: SnippetValues): { imports: string[]; signer: string; note: string } {
  if (v.kty === 'OKP')
    return {
      imports: ['com.nimbusds.jose.crypto.Ed25519Signer', 'com.nimbusds.jose.jwk.OctetKeyPair'],
      signer: 'Ed25519Signer(OctetKeyPair.parse(privateJwkJson))',
      note: '// Ed25519Signer also needs com.google.crypto.tink:tink on the classpath.\n',
    };
  if (v.kty === 'RSA')
    return { imports: ['com.nimbusds.jose.crypto.RSASSASigner', 'com.nimbusds.jose.jwk.RSAKey'], signer: 'RSASSASigner(RSAKey.parse(privateJwkJson))', note: '' };
  return { imports: ['com.nimbusds.jose.crypto.ECDSASigner', 'com.nimbusds.jose.jwk.ECKey'], signer: 'ECDSASigner(ECKey.parse(privateJwkJson))', note: '' };
}

function kotlinSign(v: SnippetValues): string {
  const { imports, signer, note } = kotlinSigner(v);
  const all = ['com.nimbusds.jose.JOSEObjectType', 'com.nimbusds.jose.JWSAlgorithm', 'com.nimbusds.jose.JWSHeader', ...imports, 'com.nimbusds.jwt.JWTClaimsSet', 'com.nimbusds.jwt.SignedJWT', 'java.util.Date'];
  return `${all.map((i) => `import ${i}`).join('\n')}

// The private JWK of this key (with its "d" member), from your secret store.
${note}val privateJwkJson: String = System.getenv("PLATFORM_PRIVATE_JWK")
val signer = ${signer}

fun userToken(userId: String, email: String, name: String): String {
    val now = Date()
    val claims = JWTClaimsSet.Builder()
        .issuer(${kt(v.issuer)})
        .audience(${kt(v.audience)})
        .subject(userId)
        .claim("email", email)
        .claim("name", name)
        .issueTime(now)
        .expirationTime(Date(now.time + 10 * 60 * 1000))
        .build()
    val header = JWSHeader.Builder(${KOTLIN_ALGS.has(v.alg) ? `JWSAlgorithm.${v.alg}` : `JWSAlgorithm.parse(${kt(v.alg)})`})
        .keyID(${kt(v.kid)})
        .type(JOSEObjectType.JWT)
        .build()
    return SignedJWT(header, claims).apply { sign(signer) }.serialize()
}`;
}

function kotlinCall(v: SnippetValues): string {
  return `import okhttp3.OkHttpClient
import okhttp3.Request
import org.json.JSONObject

val client = OkHttpClient()

// Call it off the main thread, e.g. withContext(Dispatchers.IO) { signInToPlatform(token) }.
fun signInToPlatform(userToken: String): JSONObject {
    val request = Request.Builder()
        .url(${kt(v.authUrl)})
        .header("Authorization", "Bearer $userToken")
        .build()
    client.newCall(request).execute().use { response ->
        val body = response.body?.string().orEmpty()
        // A 401 body's "message" names the check that failed; the token tester shows them all.
        check(response.isSuccessful) { "The platform refused the token: $body" }
        val identity = JSONObject(body) // applicationId, sub, email, displayName
        check(identity.getString("applicationId") == ${kt(v.applicationId)})
        return identity
    }
}`;
}

function jsSign(v: SnippetValues): string {
  return `import { importJWK, SignJWT } from 'jose';

// The private JWK of this key (with its "d" member), from your secret store.
const privateKey = await importJWK(JSON.parse(process.env.PLATFORM_PRIVATE_JWK), ${js(v.alg)});

export async function userToken(user) {
  return new SignJWT({ email: user.email, name: user.name })
    .setProtectedHeader({ alg: ${js(v.alg)}, kid: ${js(v.kid)}, typ: 'JWT' })
    .setIssuer(${js(v.issuer)})
    .setAudience(${js(v.audience)})
    .setSubject(user.id)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey);
}`;
}

function jsCall(v: SnippetValues): string {
  return `export async function signInToPlatform(userToken) {
  const res = await fetch(${js(v.authUrl)}, {
    headers: { Authorization: \`Bearer \${userToken}\` },
  });
  // A 401 body's "message" names the check that failed; the token tester shows them all.
  if (!res.ok) throw new Error(\`The platform refused the token: \${(await res.json()).message}\`);
  const identity = await res.json(); // { applicationId, sub, email, displayName }
  if (identity.applicationId !== ${js(v.applicationId)}) throw new Error('Token for another application');
  return identity;
}`;
}

export const SNIPPETS: Record<Platform, { language: string; sign: (v: SnippetValues) => string; call: (v: SnippetValues) => string }> = {
  ios: { language: 'Swift', sign: swiftSign, call: swiftCall },
  android: { language: 'Kotlin', sign: kotlinSign, call: kotlinCall },
  javascript: { language: 'JavaScript', sign: jsSign, call: jsCall },
};
