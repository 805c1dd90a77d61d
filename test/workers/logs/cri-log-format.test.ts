// The CRI and json-file log line parsers and the line writer (pkg/kubelet/kuberuntime/logs/logs_test.go: TestParseCRILog, TestReadLogs' since/timestamps cases).
import { describe, expect, it } from 'vitest';
import {
  detectLogFormat,
  lineHead,
  parseCriLogLine,
  parseDockerJsonLogLine,
  parseTimestamp,
} from '../../../src/workers/logs/cri-log-format.js';
import { LogLineWriter } from '../../../src/workers/logs/cri-log-writer.js';

const b = (s: string) => Buffer.from(s, 'utf8');

describe('CRI log line format', () => {
  it('parses F and P lines: an F line keeps its newline, a P line loses it', () => {
    expect(parseCriLogLine(b('2016-10-06T00:17:09.669794202Z stdout F log content 1\n'))).toMatchObject({
      timestamp: '2016-10-06T00:17:09.669794202Z',
      stream: 'stdout',
      partial: false,
      log: b('log content 1\n'),
    });
    expect(parseCriLogLine(b('2016-10-06T00:17:09.669794203Z stderr P log content 2\n'))).toMatchObject({
      stream: 'stderr',
      partial: true,
      log: b('log content 2'),
    });
    // Forward-compatible tags: only the first counts.
    expect(parseCriLogLine(b('2016-10-06T00:17:09.669794203Z stdout P:x:y part\n'))).toMatchObject({ partial: true, log: b('part') });
    // An empty line.
    expect(parseCriLogLine(b('2016-10-06T00:17:09.669794203Z stdout F \n')).log).toEqual(b('\n'));
    expect(parseCriLogLine(b('2016-10-06T00:17:09.669794203Z stdout F\n')).log).toEqual(b('\n'));
  });

  it('refuses malformed lines naming what is wrong', () => {
    expect(() => parseCriLogLine(b('garbage\n'))).toThrow(/timestamp is not found/);
    expect(() => parseCriLogLine(b('yesterday stdout F x\n'))).toThrow(/unexpected timestamp format/);
    expect(() => parseCriLogLine(b('2016-10-06T00:17:09.669794202Z stdout'))).toThrow(/stream type is not found/);
    expect(() => parseCriLogLine(b('2016-10-06T00:17:09.669794202Z stdin F x\n'))).toThrow(/unexpected stream type "stdin"/);
    expect(() => parseCriLogLine(b('2016-10-06T00:17:09.669794202Z stdout F'))).toThrow(/log tag is not found/);
  });

  it('re-writes times as RFC3339NanoFixed and reads offsets', () => {
    expect(parseTimestamp('2016-10-06T00:17:09.5Z')).toEqual({
      timestamp: '2016-10-06T00:17:09.500000000Z',
      timeMs: Date.UTC(2016, 9, 6, 0, 17, 9, 500),
    });
    expect(parseTimestamp('2016-10-06T00:17:09Z').timestamp).toBe('2016-10-06T00:17:09.000000000Z');
    expect(parseTimestamp('2016-10-06T02:17:09.000000001+02:00')).toEqual({
      timestamp: '2016-10-06T02:17:09.000000001+02:00',
      timeMs: Date.UTC(2016, 9, 6, 0, 17, 9) + 1e-6,
    });
    expect(parseTimestamp('2016-10-06T00:17:09.1+00:00').timestamp).toBe('2016-10-06T00:17:09.100000000Z');
  });

  it('parses Docker json-file lines and detects the format from a line', () => {
    const line = b('{"log":"content 1\\n","stream":"stderr","time":"2016-10-20T18:39:20.57606443Z"}\n');
    expect(parseDockerJsonLogLine(line)).toMatchObject({
      stream: 'stderr',
      log: b('content 1\n'),
      partial: false,
      timestamp: '2016-10-20T18:39:20.576064430Z',
    });
    expect(parseDockerJsonLogLine(b('{"log":"split","stream":"stdout","time":"2016-10-20T18:39:20Z"}')).partial).toBe(true);
    expect(() => parseDockerJsonLogLine(b('{"log":"x","stream":"nope","time":"2016-10-20T18:39:20Z"}'))).toThrow(/unexpected stream type/);
    expect(detectLogFormat(line)).toBe('json-file');
    expect(detectLogFormat(b('2016-10-06T00:17:09.669794202Z stdout F x\n'))).toBe('cri');
    expect(() => detectLogFormat(b('hello\n'))).toThrow(/unsupported log format/);
  });

  it('counts a raw line as a line end unless it is a CRI P line', () => {
    expect(lineHead('cri', b('2016-10-06T00:17:09.669794202Z stdout P abc'))).toEqual({ stream: 'stdout', ends: false });
    expect(lineHead('cri', b('2016-10-06T00:17:09.669794202Z stderr P:t abc'))).toEqual({ stream: 'stderr', ends: false });
    expect(lineHead('cri', b('2016-10-06T00:17:09.669794202Z stdout F abc'))).toEqual({ stream: 'stdout', ends: true });
    expect(lineHead('cri', b('2016-10-06T00:17:09.669794202Z stdout PX abc')).ends).toBe(true);
    expect(lineHead('json-file', b('{"log":"x"'))).toEqual({ stream: '', ends: true });
  });
});

describe('LogLineWriter', () => {
  const t0 = '2026-01-01T00:00:00.000000001Z';
  const t1 = '2026-01-01T00:00:10.000000000Z';

  function run(input: string, opts: ConstructorParameters<typeof LogLineWriter>[0], chunk = 7): { out: string; malformed: string[] } {
    const malformed: string[] = [];
    const w = new LogLineWriter({ ...opts, onMalformed: (reason) => malformed.push(reason) });
    const buf = b(input);
    let out = '';
    for (let i = 0; i < buf.length; i += chunk) {
      w.write(buf.subarray(i, i + chunk));
      out += w.take().toString('utf8');
    }
    w.endOfFile();
    out += w.take().toString('utf8');
    return { out, malformed };
  }

  it('merges stdout and stderr in file order and joins partial lines, whatever the chunking', () => {
    const input = `${t0} stdout P hel\n${t0} stderr F err\n${t0} stdout P lo \n${t1} stdout F world\n`;
    for (const chunk of [1, 5, 64, 1000]) expect(run(input, { timestamps: false }, chunk).out).toBe('err\nhello world\n');
  });

  it("prefixes a joined line once, with its first fragment's time", () => {
    const input = `${t0} stdout P hel\n${t1} stdout F lo\n${t1} stderr F e\n`;
    expect(run(input, { timestamps: true }).out).toBe(`${t0} hello\n${t1} e\n`);
  });

  it('since: drops lines older than sinceMs, a joined line by its first fragment', () => {
    const input = `${t0} stdout F old\n${t0} stdout P old-part\n${t1} stdout F -rest\n${t1} stdout F new\n`;
    expect(run(input, { timestamps: false, sinceMs: Date.UTC(2026, 0, 1, 0, 0, 5) }).out).toBe('new\n');
  });

  it('skips malformed lines and goes on; an unfinished last line is written at the end of the file', () => {
    const input = `junk line\n${t0} stdout F a\n${t0} stdin F nope\n${t0} stdout F b`;
    const { out, malformed } = run(input, { timestamps: false });
    expect(out).toBe('a\nb');
    expect(malformed).toEqual([expect.stringMatching(/unsupported log format/), expect.stringMatching(/unexpected stream type "stdin"/)]);
  });

  it('reads Docker json-file logs', () => {
    const input =
      '{"log":"a\\n","stream":"stdout","time":"2026-01-01T00:00:00Z"}\n{"log":"b","stream":"stderr","time":"2026-01-01T00:00:01Z"}\n{"log":"c\\n","stream":"stderr","time":"2026-01-01T00:00:02Z"}\n';
    expect(run(input, { timestamps: true }).out).toBe('2026-01-01T00:00:00.000000000Z a\n2026-01-01T00:00:01.000000000Z bc\n');
  });

  it('streams a raw line longer than maxLineBytes without buffering it, and skips a json-file one', () => {
    const big = 'x'.repeat(5000);
    const w = new LogLineWriter({ timestamps: false, maxLineBytes: 1024 });
    const sizes: number[] = [];
    const input = b(`${t0} stdout F ${big}\n${t0} stderr P ${big}\n${t0} stderr F !\n`);
    for (let i = 0; i < input.length; i += 512) {
      w.write(input.subarray(i, i + 512));
      sizes.push(w.outputBytes);
      w.take();
    }
    expect(Math.max(...sizes)).toBeLessThanOrEqual(1024 + 512);
    const all = run(`${t0} stdout F ${big}\n${t0} stderr P ${big}\n${t0} stderr F !\n`, { timestamps: false, maxLineBytes: 1024 }, 300).out;
    expect(all).toBe(`${big}\n${big}!\n`);
    const json = `{"log":"${big}\\n","stream":"stdout","time":"2026-01-01T00:00:00Z"}\n{"log":"ok\\n","stream":"stdout","time":"2026-01-01T00:00:00Z"}\n`;
    const r = run(json, { timestamps: false, maxLineBytes: 1024 }, 300);
    expect(r.out).toBe('ok\n');
    expect(r.malformed).toEqual([expect.stringMatching(/longer than 1024 bytes/)]);
  });
});
