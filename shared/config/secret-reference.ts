/**
 * Secrets in settings are references, never values: a Key Vault secret URI or the name of an app setting
 * (`VMSSP_SECRET_*`, typically itself a Key Vault reference the platform resolves). Also the heuristics that
 * spot a pasted secret and the redaction used whenever a settings value is echoed.
 */

/**
 * Key Vault DNS suffixes of the clouds a Function App can run in
 * (learn.microsoft.com/azure/key-vault/general/about-keys-secrets-certificates#dns-suffixes-for-object-identifiers).
 * Azure Germany (`vault.microsoftazure.de`) closed in 2021 and Azure Stack Hub vaults are not reachable from
 * a Function App, so neither is accepted.
 */
const KEY_VAULT_DNS_SUFFIXES = ['vault.azure.net', 'vault.azure.cn', 'vault.usgovcloudapi.net'] as const;

/** App settings that hold secrets (or Key Vault references to them) must carry this prefix. */
export const SECRET_SETTING_PREFIX = 'VMSSP_SECRET_';

export const KEY_VAULT_SECRET_URI_FORMAT = `a Key Vault secret URI https://<vault>.${KEY_VAULT_DNS_SUFFIXES.join('|')}/secrets/<name>[/<32-hex version>]`;

export const SECRET_ENV_NAME_FORMAT = `the name of an app setting that holds the secret: ${SECRET_SETTING_PREFIX} followed by 1–100 uppercase letters, digits and "_"`;

export const SECRET_REFERENCE_FORMAT = `a secret reference: { "keyVaultSecretUri": "https://<vault>.vault.azure.net/secrets/<name>" } or { "env": "${SECRET_SETTING_PREFIX}<NAME>" }`;

/** How to fix a pasted secret; used wherever one is detected. */
export const INLINE_SECRET_HINT = `a reference to the secret, never the secret itself: store the value in Key Vault and give ${SECRET_REFERENCE_FORMAT} (that app setting may hold @Microsoft.KeyVault(SecretUri=…))`;

export type SecretReference =
  | {
      readonly source: 'key-vault';
      /** The URI as configured. */
      readonly secretUri: string;
      /** `https://<vault>.<suffix>`, what a Key Vault client is constructed with. */
      readonly vaultUrl: string;
      readonly secretName: string;
      /** Absent: the current version, so a rotated secret is picked up on the next read. */
      readonly version?: string;
    }
  | { readonly source: 'env'; readonly name: string };

const VAULT_NAME = /^[a-z](?!.*--)[a-z0-9-]{1,22}[a-z0-9]$/i;
const SECRET_NAME = /^[A-Za-z0-9-]{1,127}$/;
const SECRET_VERSION = /^[0-9a-f]{32}$/i;
const SECRET_ENV_NAME = new RegExp(`^${SECRET_SETTING_PREFIX}[A-Z0-9_]{1,100}$`);

/**
 * Parses a Key Vault secret URI; returns a description of the problem instead when it is not one.
 * The host must be `<vault>.<suffix>` with a valid vault name (3–24 letters, digits and single hyphens,
 * starting with a letter), the path `/secrets/<name>[/<version>]`, and nothing else (no port, credentials,
 * query or fragment).
 */
export function parseKeyVaultSecretUri(uri: string): SecretReference | string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'it is not a URL';
  }
  if (url.protocol !== 'https:') return 'it does not use https';
  if (url.username !== '' || url.password !== '') return 'it carries credentials';
  if (url.port !== '') return 'it names a port';
  if (url.search !== '' || url.hash !== '' || uri.includes('?') || uri.includes('#')) {
    return 'it has a query or fragment';
  }
  const host = url.hostname.toLowerCase();
  const suffix = KEY_VAULT_DNS_SUFFIXES.find((s) => host.endsWith(`.${s}`));
  if (suffix === undefined) return `its host is not <vault>.${KEY_VAULT_DNS_SUFFIXES.join(' or <vault>.')}`;
  const vault = host.slice(0, host.length - suffix.length - 1);
  if (!VAULT_NAME.test(vault)) return `"${vault}" is not a vault name (3–24 letters, digits and "-")`;
  const segments = url.pathname.split('/').slice(1);
  const [collection, name = '', version, ...rest] = segments;
  if (collection !== 'secrets' || rest.length > 0 || !SECRET_NAME.test(name)) {
    return 'its path is not /secrets/<name>[/<version>]';
  }
  if (version !== undefined && !SECRET_VERSION.test(version)) return 'its version is not 32 hex digits';
  const base = {
    source: 'key-vault',
    secretUri: uri,
    vaultUrl: `https://${host}`,
    secretName: name,
  } as const;
  return version === undefined ? base : { ...base, version };
}

export function isSecretEnvName(name: string): boolean {
  return SECRET_ENV_NAME.test(name);
}

/** Names of JSON fields that hold a secret when their value is a string (compared case-insensitively). */
const SECRET_FIELD_NAMES = new Set([
  'token',
  'bearertoken',
  'serviceaccounttoken',
  'password',
  'secret',
  'clientsecret',
  'apikey',
  'accesskey',
  'accountkey',
  'sastoken',
  'connectionstring',
  'clientkey',
  'clientkeydata',
  'privatekey',
]);

export function isSecretFieldName(field: string): boolean {
  return SECRET_FIELD_NAMES.has(field.toLowerCase());
}

const JWT = /eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]*/;
const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;
const CONNECTION_SECRET =
  /(?:AccountKey|SharedAccessKey|SharedAccessSignature|InstrumentationKey)=|[?&]sig=/i;

/** What kind of secret a string looks like, or undefined. Heuristic, tuned to miss nothing common. */
export function secretKind(value: string): 'JWT' | 'private key' | 'key or signature' | undefined {
  if (JWT.test(value)) return 'JWT';
  if (PRIVATE_KEY.test(value)) return 'private key';
  if (CONNECTION_SECRET.test(value)) return 'key or signature';
  return undefined;
}

// The same kinds, found anywhere in a longer text (a pod's output), up to where the secret ends.
const SECRET_LOOKING_PARTS: readonly RegExp[] = [
  /eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]*/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|InstrumentationKey)=[^;\s"']*/gi,
  /[?&]sig=[^&\s"']*/gi,
  /\bBearer\s+[\w.~+/=-]+/gi,
];

/**
 * What every one of SECRET_LOOKING_PARTS starts with (a superset: case-insensitive throughout). Most texts
 * hold none of it and are answered by this one scan instead of five replaces: a run's events redact every
 * string they carry (30-odd ms of a CLI refresh's CPU went to the five).
 */
const SECRET_LOOKING_START =
  /eyJ|-----BEGIN |(?:AccountKey|SharedAccessKey|SharedAccessSignature|InstrumentationKey)=|[?&]sig=|Bearer\s/i;

/** The text with every secret-looking part (see `secretKind`, and bearer tokens) replaced by `replacement`. */
export function withoutSecretLookingParts(text: string, replacement: string): string {
  if (!SECRET_LOOKING_START.test(text)) return text;
  return SECRET_LOOKING_PARTS.reduce((result, pattern) => result.replace(pattern, replacement), text);
}

/** The form in which a secret-looking value is shown: its size and kind, never any of its characters. */
export function redact(value: string): string {
  const kind = secretKind(value);
  return `<redacted ${value.length}-character ${kind ?? 'value'}>`;
}

/**
 * Reads the secret an `env` reference points at from the given environment (the composition root passes
 * `process.env` once). Throws without echoing the value when it is missing or is a Key Vault reference the
 * platform left unresolved.
 */
export function readEnvSecret(env: Readonly<Record<string, string | undefined>>, name: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') {
    throw new Error(`reading secret from app setting ${name}: it is not set`);
  }
  if (isUnresolvedKeyVaultReference(value)) {
    throw new Error(`reading secret from app setting ${name}: ${UNRESOLVED_KEY_VAULT_REFERENCE}`);
  }
  return value;
}

export const UNRESOLVED_KEY_VAULT_REFERENCE =
  "it still holds its @Microsoft.KeyVault(...) reference: the platform could not resolve it; grant the Function App's identity the 'Key Vault Secrets User' role on the vault and check the SecretUri";

export function isUnresolvedKeyVaultReference(value: string): boolean {
  return /^\s*@Microsoft\.KeyVault\(/i.test(value);
}
