/**
 * Looks for a secret in everything the product emitted: the raw value and the forms a careless log or
 * serializer produces (URL-encoded, JSON-escaped, base64 at every byte alignment, base64url), plus any
 * 16-character window of the secret, so a partly redacted value is caught too.
 */
import { inspect } from 'node:util';

export interface SecretForm {
  readonly form: string;
  readonly needle: string;
}

/** base64 of `secret` as it appears inside a longer base64 text that starts `offset` bytes earlier. */
function base64Inside(secret: Buffer, offset: number, url: boolean): string {
  const encoded = Buffer.concat([Buffer.alloc(offset, 0x41), secret]).toString(url ? 'base64url' : 'base64');
  // Drop the characters that mix in the leading filler bytes and the last (possibly partial) group.
  const skip = offset === 0 ? 0 : offset + 1;
  return encoded.slice(skip, encoded.length - 4);
}

export function secretForms(secret: string): SecretForm[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms: SecretForm[] = [
    { form: 'raw', needle: secret },
    { form: 'url-encoded', needle: encodeURIComponent(secret) },
    { form: 'json-escaped', needle: JSON.stringify(secret).slice(1, -1) },
  ];
  for (const offset of [0, 1, 2]) {
    forms.push({ form: `base64@${offset}`, needle: base64Inside(bytes, offset, false) });
    forms.push({ form: `base64url@${offset}`, needle: base64Inside(bytes, offset, true) });
  }
  for (let start = 0; start + 16 <= secret.length; start += 8) {
    forms.push({ form: `window@${start}`, needle: secret.slice(start, start + 16) });
  }
  const seen = new Set<string>();
  return forms.filter((form) => form.needle.length >= 12 && !seen.has(form.needle) && seen.add(form.needle));
}

export interface Finding {
  readonly artifact: string;
  readonly form: string;
}

/** Every captured artifact, by a name that says where it came from. */
export class Capture {
  readonly artifacts: { name: string; text: string }[] = [];

  add(name: string, value: unknown): void {
    const text =
      typeof value === 'string'
        ? value
        : inspect(value, { depth: 20, breakLength: Infinity, maxArrayLength: null, maxStringLength: null });
    this.artifacts.push({ name, text });
  }

  /** Replaces console.* with recorders that still print, until `restore` is called. */
  patchConsole(): () => void {
    const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
    // The property descriptors put the very same functions back; bound copies do the printing.
    const saved = methods.map(
      (method) => [method, Object.getOwnPropertyDescriptor(console, method)] as const,
    );
    for (const method of methods) {
      const print = console[method].bind(console);
      console[method] = (...args: unknown[]) => {
        this.add(`console.${method}`, args);
        print(...args);
      };
    }
    return () => {
      for (const [method, descriptor] of saved) {
        if (descriptor !== undefined) Object.defineProperty(console, method, descriptor);
      }
    };
  }

  scan(secrets: readonly { name: string; value: string }[]): Finding[] {
    const findings: Finding[] = [];
    for (const secret of secrets) {
      const forms = secretForms(secret.value);
      for (const artifact of this.artifacts) {
        for (const form of forms) {
          if (artifact.text.includes(form.needle)) {
            findings.push({ artifact: artifact.name, form: `${secret.name}:${form.form}` });
          }
        }
      }
    }
    return findings;
  }

  get bytes(): number {
    return this.artifacts.reduce((sum, artifact) => sum + artifact.text.length, 0);
  }
}
