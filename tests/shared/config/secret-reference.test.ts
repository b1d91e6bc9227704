// Tests for secret references: Key Vault URI shapes, app-setting names, secret detection and redaction.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  isSecretEnvName,
  parseKeyVaultSecretUri,
  readEnvSecret,
  redact,
  secretKind,
  withoutSecretLookingParts,
} from '../../../shared/config/secret-reference.js';

const VERSION = '0123456789abcdef0123456789ABCDEF';

void describe('parseKeyVaultSecretUri accepts', () => {
  const cases: readonly (readonly [string, string, string, string | undefined])[] = [
    [
      'https://kv-ops.vault.azure.net/secrets/k8s-token',
      'https://kv-ops.vault.azure.net',
      'k8s-token',
      undefined,
    ],
    [
      `https://kv-ops.vault.azure.net/secrets/k8s-token/${VERSION}`,
      'https://kv-ops.vault.azure.net',
      'k8s-token',
      VERSION,
    ],
    ['https://KV-Ops.Vault.Azure.Net/secrets/t', 'https://kv-ops.vault.azure.net', 't', undefined],
    ['https://kvchina1.vault.azure.cn/secrets/token', 'https://kvchina1.vault.azure.cn', 'token', undefined],
    [
      'https://kvgov.vault.usgovcloudapi.net/secrets/token',
      'https://kvgov.vault.usgovcloudapi.net',
      'token',
      undefined,
    ],
  ];
  for (const [uri, vaultUrl, secretName, version] of cases) {
    void it(uri, () => {
      const parsed = parseKeyVaultSecretUri(uri);
      assert.equal(typeof parsed, 'object');
      assert.deepEqual(parsed, {
        source: 'key-vault',
        secretUri: uri,
        vaultUrl,
        secretName,
        ...(version === undefined ? {} : { version }),
      });
    });
  }
});

void describe('parseKeyVaultSecretUri rejects', () => {
  const cases: readonly (readonly [string, RegExp])[] = [
    ['kv-ops.vault.azure.net/secrets/t', /not a URL/],
    ['http://kv-ops.vault.azure.net/secrets/t', /https/],
    ['https://user:pw@kv-ops.vault.azure.net/secrets/t', /credentials/],
    ['https://kv-ops.vault.azure.net:8443/secrets/t', /port/],
    ['https://kv-ops.vault.azure.net/secrets/t?api-version=7.4', /query/],
    ['https://kv-ops.vault.azure.net/secrets/t#x', /fragment/],
    ['https://kv-ops.vault.microsoftazure.de/secrets/t', /host/],
    ['https://kv-ops.vault.azure.net.evil.example/secrets/t', /host/],
    ['https://vault.azure.net/secrets/t', /host/],
    ['https://k.vault.azure.net/secrets/t', /vault name/],
    ['https://1kv.vault.azure.net/secrets/t', /vault name/],
    ['https://kv--ops.vault.azure.net/secrets/t', /vault name/],
    ['https://kv-ops-.vault.azure.net/secrets/t', /vault name/],
    ['https://kv-ops.vault.azure.net/keys/t', /path/],
    ['https://kv-ops.vault.azure.net/secrets/', /path/],
    ['https://kv-ops.vault.azure.net/secrets/bad_name', /path/],
    ['https://kv-ops.vault.azure.net/secrets/t/v/extra', /path/],
    ['https://kv-ops.vault.azure.net/secrets/t/latest', /32 hex/],
  ];
  for (const [uri, problem] of cases) {
    void it(uri, () => {
      const parsed = parseKeyVaultSecretUri(uri);
      assert.ok(typeof parsed === 'string', `accepted ${uri}`);
      assert.match(parsed, problem);
    });
  }
});

void describe('isSecretEnvName', () => {
  const cases: readonly (readonly [string, boolean])[] = [
    ['VMSSP_SECRET_PROD_TOKEN', true],
    ['VMSSP_SECRET_1', true],
    ['VMSSP_SECRET_', false],
    ['VMSSP_SECRET_prod', false],
    ['PROD_TOKEN', false],
    ['VMSSP_SECRET_A-B', false],
  ];
  for (const [name, valid] of cases)
    void it(`${name} → ${valid}`, () => assert.equal(isSecretEnvName(name), valid));
});

void describe('secretKind and redact', () => {
  const cases: readonly (readonly [string, string | undefined])[] = [
    ['eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2ln', 'JWT'],
    ['Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2ln', 'JWT'],
    ['-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----', 'private key'],
    ['-----BEGIN EC PRIVATE KEY-----', 'private key'],
    ['DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==', 'key or signature'],
    ['https://a.blob.core.windows.net/c?sv=2022&sig=abc', 'key or signature'],
    ['https://kv-ops.vault.azure.net/secrets/t', undefined],
    ['-----BEGIN CERTIFICATE-----', undefined],
    ['weave.works/kured-most-recent-reboot-needed', undefined],
  ];
  for (const [value, kind] of cases) {
    void it(`${value.slice(0, 30)} → ${kind ?? 'not secret'}`, () => {
      assert.equal(secretKind(value), kind);
      const redacted = redact(value);
      assert.match(redacted, new RegExp(`^<redacted ${value.length}-character `));
      assert.ok(!redacted.includes(value.slice(0, 8)) || value.startsWith('<'));
    });
  }
});

void describe('withoutSecretLookingParts', () => {
  const cases: readonly (readonly [string, string])[] = [
    ['token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2ln here', 'token X here'],
    ['auth: bearer abc.def~1 ok', 'auth: X ok'],
    ['key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nrest', 'key:\nX\nrest'],
    ['cut -----BEGIN PRIVATE KEY-----\nMIIE', 'cut X'],
    ['conn AccountKey=abc==;EndpointSuffix=core', 'conn X;EndpointSuffix=core'],
    ['conn accountkey=abc==;x', 'conn X;x'],
    [
      'url https://a.blob.core.windows.net/c?sv=2022&SIG=abc&se=1',
      'url https://a.blob.core.windows.net/c?sv=2022X&se=1',
    ],
    [
      'a plain message: pod check-0 exited 1 (eyJ is not enough)',
      'a plain message: pod check-0 exited 1 (eyJ is not enough)',
    ],
    ['-----BEGIN CERTIFICATE----- and Bearer', '-----BEGIN CERTIFICATE----- and Bearer'],
    ['', ''],
  ];
  for (const [text, want] of cases) {
    void it(JSON.stringify(text.slice(0, 30)), () =>
      assert.equal(withoutSecretLookingParts(text, 'X'), want),
    );
  }
});

void describe('readEnvSecret', () => {
  void it('returns the value', () => {
    assert.equal(readEnvSecret({ VMSSP_SECRET_T: 'v' }, 'VMSSP_SECRET_T'), 'v');
  });
  void it('refuses a missing setting', () => {
    assert.throws(
      () => readEnvSecret({}, 'VMSSP_SECRET_T'),
      /reading secret from app setting VMSSP_SECRET_T: it is not set/,
    );
  });
  void it('refuses an unresolved Key Vault reference without echoing it', () => {
    const reference = '@Microsoft.KeyVault(SecretUri=https://kv-ops.vault.azure.net/secrets/t)';
    assert.throws(
      () => readEnvSecret({ VMSSP_SECRET_T: reference }, 'VMSSP_SECRET_T'),
      (error: unknown) =>
        error instanceof Error &&
        /Key Vault Secrets User/.test(error.message) &&
        !error.message.includes('kv-ops'),
    );
  });
});
