// A WebAuthn authenticator in software, written from the specification (W3C WebAuthn §6.1, §6.5,
// §8.7 "none" attestation; RFC 8949 CBOR; RFC 9053 COSE keys) independently of the library Tessera
// uses: it answers the options a page hands out as @simplewebauthn/browser would pass them back, so
// the server's checks can be driven over HTTP with answers a browser would never make (another
// origin, a replay, a counter gone back, no user verification).
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor> | { [key: string]: Cbor };

/** RFC 8949 §3: the few major types an attestation object needs. */
function cbor(value: Cbor): Buffer {
  const head = (major: number, n: number) => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 256) return Buffer.from([(major << 5) | 24, n]);
    if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  const entries = value instanceof Map ? [...value] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

interface Credential {
  id: Buffer;
  privateKey: KeyObject;
  userHandle: string;
  counter: number;
}

export interface AuthenticatorOptions {
  /** The origin the browser would put in clientDataJSON. */
  origin: string;
  /** Sets the BE flag: a synced passkey. */
  backupEligible?: boolean;
  /** Sets the UV flag (a PIN or biometric was checked). */
  userVerified?: boolean;
  /** Keeps a signature counter (else always 0, as synced passkeys do). */
  counts?: boolean;
}

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];
  readonly options: Required<AuthenticatorOptions>;

  constructor(options: AuthenticatorOptions) {
    this.options = { backupEligible: false, userVerified: true, counts: true, ...options };
  }

  #flags(attested: boolean, over: Partial<AuthenticatorOptions>): number {
    const o = { ...this.options, ...over };
    // UP, UV, BE, BS (backed up when eligible), AT (attested credential data follows).
    return 0x01 | (o.userVerified ? 0x04 : 0) | (o.backupEligible ? 0x18 : 0) | (attested ? 0x40 : 0);
  }

  #clientData(type: string, challenge: string, origin: string): string {
    return JSON.stringify({ type, challenge, origin, crossOrigin: false });
  }

  /** navigator.credentials.create, as startRegistration returns it. */
  register(
    options: { challenge: string; rp: { id?: string }; user: { id: string } },
    over: Partial<AuthenticatorOptions> & { credentialId?: Buffer } = {},
  ) {
    const rpId = options.rp.id!;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const id = over.credentialId ?? randomBytes(32);
    const credential: Credential = { id, privateKey, userHandle: options.user.id, counter: 0 };
    const jwk = publicKey.export({ format: 'jwk' });
    // RFC 9053 §7.1.1: an EC2 key, ES256, P-256.
    const coseKey = cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(String(jwk.x), 'base64url')],
        [-3, Buffer.from(String(jwk.y), 'base64url')],
      ]),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credential.id.length);
    const counter = Buffer.alloc(4);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([this.#flags(true, over)]),
      counter,
      Buffer.alloc(16),
      idLength,
      credential.id,
      coseKey,
    ]);
    this.credentials.push(credential);
    const origin = over.origin ?? this.options.origin;
    const clientDataJSON = this.#clientData('webauthn.create', options.challenge, origin);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(cbor({ fmt: 'none', attStmt: {}, authData })),
        transports: ['internal'],
      },
    };
  }

  /** navigator.credentials.get, as startAuthentication returns it, with the first (or given) credential. */
  authenticate(
    options: { challenge: string; rpId?: string },
    over: Partial<AuthenticatorOptions> & { credential?: Credential; counter?: number } = {},
  ) {
    const credential = over.credential ?? this.credentials[0]!;
    if (this.options.counts) credential.counter++;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(over.counter ?? (this.options.counts ? credential.counter : 0));
    const authenticatorData = Buffer.concat([sha256(options.rpId!), Buffer.from([this.#flags(false, over)]), counter]);
    const origin = over.origin ?? this.options.origin;
    const clientDataJSON = this.#clientData('webauthn.get', options.challenge, origin);
    // WebAuthn §6.3.3 step 11: over authenticatorData ‖ SHA-256(clientDataJSON); ES256 is DER-encoded.
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), credential.privateKey);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
    };
  }
}
