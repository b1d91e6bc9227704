/**
 * PEM certificate text in settings: a cluster's API server CA (`apiServer.caCertificate.pem`) and the
 * simulator's CA (`VMSSP_SIMULATOR_CA`) are checked by the same rule.
 */

import { z } from 'zod';

export const PEM_FORMAT =
  'PEM text of one or more certificates: -----BEGIN CERTIFICATE-----\\n<base64>\\n-----END CERTIFICATE-----';
const PEM_BLOCK = /-----BEGIN CERTIFICATE-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END CERTIFICATE-----/g;

/** One or more PEM certificates and nothing else; base64 of PEM gets a hint to decode it first. */
export const PemCertificate = z.string({ error: PEM_FORMAT }).superRefine((value, ctx) => {
  const blocks = [...value.matchAll(PEM_BLOCK)];
  const rest = value.replace(PEM_BLOCK, '').trim();
  if (blocks.length > 0 && rest.length === 0) return;
  const hint = value.startsWith('LS0tLS1CRUdJTi')
    ? ' (this is base64 of PEM text, as in kubeconfig certificate-authority-data: decode it first)'
    : '';
  ctx.issues.push({ code: 'custom', message: `${PEM_FORMAT}${hint}`, input: value });
});
