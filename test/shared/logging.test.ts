// Bounded log fields (src/shared/logging.ts), issue #11 finding 4: a 900 KB image name wrote 54 MB
// of log in a minute.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { boundedErr, boundedField, kMaxLogFieldBytes, newLogger } from '../../src/shared/logging.js';

describe('boundedField', () => {
  it.each([
    ['a short string', 'kubelet-ts/busybox:1.35', 100, 'kubelet-ts/busybox:1.35'],
    ['a string of exactly the bound', 'abcd', 4, 'abcd'],
    ['a longer one, cut with the bytes left out', 'abcdefgh', 4, 'abcd…(4 more bytes)'],
    ['multi-byte characters, cut at a character boundary', 'ééé', 3, 'é…(4 more bytes)'],
  ])('keeps %s within the bound', (_what, value, max, want) => {
    expect(boundedField(value, max)).toBe(want);
  });

  it('bounds a 900 KB image name to kMaxLogFieldBytes plus the marker', () => {
    const image = `kubelet-ts/${'a'.repeat(900 * 1024)}:1`;
    const out = boundedField(image);
    expect(Buffer.byteLength(out)).toBeLessThan(kMaxLogFieldBytes + 40);
    expect(out).toMatch(new RegExp(`…\\(${Buffer.byteLength(image) - kMaxLogFieldBytes} more bytes\\)$`));
  });
});

describe('boundedErr', () => {
  it('bounds the message and the stack, keeping type, code and reason', () => {
    const err = Object.assign(new Error(`pull "${'a'.repeat(900 * 1024)}" failed`), { code: 'ERR_RUNTIME', reason: 'ErrImagePull' });
    const out = boundedErr(err);
    expect(out).toMatchObject({ type: 'Error', code: 'ERR_RUNTIME', reason: 'ErrImagePull' });
    expect(JSON.stringify(out).length).toBeLessThan(3 * kMaxLogFieldBytes);
    expect(out.message).toMatch(/more bytes\)$/);
  });

  it('logs a non-Error as a bounded message', () => {
    expect(boundedErr('x'.repeat(10), 4)).toEqual({ type: 'string', message: 'xxxx…(6 more bytes)' });
  });
});

describe('newLogger', () => {
  it('bounds every string field and err of a record, also when the call site did not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logging-'));
    let fd = -1;
    try {
      const file = join(dir, 'log.jsonl');
      fd = openSync(file, 'w');
      const logger = newLogger('info', fd);
      const image = 'a'.repeat(900 * 1024);
      logger.warn({ image, err: new Error(`pull ${image} failed`) }, 'Failed to pull image');
      // The destination writes asynchronously (sync: false): wait for the line, then close.
      let text = '';
      for (let i = 0; i < 200 && !text.endsWith('\n'); i++) {
        await new Promise((r) => setTimeout(r, 10));
        text = readFileSync(file, 'utf8');
      }
      const line = text.trim();
      expect(line.length).toBeLessThan(4 * kMaxLogFieldBytes);
      const record = JSON.parse(line) as { msg: string; image: string; err: { message: string; stack: string } };
      expect(record.msg).toBe('Failed to pull image');
      expect(record.image).toMatch(/…\(\d+ more bytes\)$/);
      expect(record.err.message).toMatch(/more bytes\)$/);
      expect(record.err.stack).toMatch(/more bytes\)$/);
    } finally {
      await new Promise((r) => setTimeout(r, 20));
      try {
        closeSync(fd);
      } catch {
        /* already closed */
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
