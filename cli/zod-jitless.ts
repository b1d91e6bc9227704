/**
 * Zod without its JIT for the CLI's short-lived process: before the first schema is built (zod reads the
 * flag when a schema is constructed), so import this module before any module that builds one.
 */
import { config } from 'zod';

config({ jitless: true });
