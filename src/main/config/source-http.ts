// Counterpart of pkg/kubelet/config/http.go (NewSourceURL, extractFromURL): static pods polled from --manifest-url.
import { createHash } from 'node:crypto';
import type { Pod } from '../../shared/api.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import { boundedField, type Logger } from '../../shared/logging.js';
import type { ConfigObjectUpdate } from './object-store.js';
import type { PodUpdate, SourceError } from '../../shared/pod-update.js';
import type { ManifestLoader } from '../pool/worker-pool.js';
import { newManifestDecoder } from './manifest-decoder.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';

/** HttpSourceOptions: the kubelet's `--manifest-url`, `--manifest-url-header`, `--http-check-frequency`. */
export interface HttpSourceOptions {
  /** The http(s) URL serving one Pod, a List/PodList, or multi-document YAML (JSON or YAML). */
  url: string;
  /** This node's name: static pods are named `<name>-<nodeName>`. */
  nodeName: string;
  /** Headers sent with every request, each name with one or more values (`--manifest-url-header 'Name:Value'`, repeatable). */
  headers?: Record<string, string[]>;
  /** Milliseconds between two polls (kubelet default 20 s). */
  checkFrequencyMs?: number;
  /** Milliseconds before one request is abandoned (default 10 s, as http.go's client timeout). */
  timeoutMs?: number;
  /** Largest body accepted, in bytes (default 10 MiB); a larger one is a failed fetch. */
  maxBodyBytes?: number;
}

/** kDefaultHttpSourceOptions: the defaults of the optional HttpSourceOptions. */
export const kDefaultHttpSourceOptions = { checkFrequencyMs: 20_000, timeoutMs: 10_000, maxBodyBytes: 10 << 20 } as const;

/** HttpSourceDeps: what the http source calls out to. Callbacks run on the main thread. */
export interface HttpSourceDeps {
  logger: Logger;
  /** Receives `SET` (source `http`) with the complete set of pods whenever it changes, and once after the first poll even if it failed. */
  onUpdate(update: PodUpdate): void;
  /**
   * Receives a `SET` (source `http`) of the ConfigMaps and Secrets in the body, before each pods'
   * SET the body gives (the last good ones stay while a fetch fails). Absent = they are dropped.
   */
  onObjects?(update: ConfigObjectUpdate): void;
  /** Receives each distinct fetch/parse/validation problem once (until a good fetch); the last good pods stay. */
  onError(error: SourceError): void;
  /** The fetch to use (tests); default the global fetch. */
  fetch?: typeof fetch;
  /**
   * Starts the thread that decodes manifests (default newManifestLoader, the same manifest worker
   * as the file source's); called once, at the first non-empty body, and closed by stop().
   */
  newManifestLoader?: () => ManifestLoader;
  /** The clock (epoch ms) of the poll timer and the pods' config.seen; default the real clock. */
  clock?: Clock;
}

/** HttpSource: the running manifest-URL source. */
export interface HttpSource {
  /** start polls once, delivers the first `SET` and resolves; then polls every checkFrequencyMs. Idempotent. */
  start(): Promise<void>;
  /** stop clears the timer and waits for a poll in progress; no callback runs after it resolves. Idempotent. */
  stop(): Promise<void>;
  /** poll fetches now (what the timer calls); resolves when its update or error was delivered. */
  poll(): Promise<void>;
}

/**
 * newHttpSource builds the manifest-URL source, as the kubelet's NewSourceURL: it GETs `url` every
 * `checkFrequencyMs` with the configured headers and `If-None-Match: <last ETag>`; 304 changes
 * nothing. A 200 body is parsed (JSON when Content-Type says so, else YAML, which also reads JSON)
 * into static pods with `loadStaticPods` (source `http`, origin = the URL, names `<name>-<node>`,
 * deterministic UIDs: docs/contracts.md "Pod sources and pod identity") on the source's manifest thread (newManifestLoader: the
 * 10 MiB a body may hold is never parsed on the main thread) and sent as a `SET` when its content
 * changed; a thread that fails to answer is a failed poll, and the body is parsed again at the next. An empty 200 body
 * is an empty set, as http.go ("zero-length data"). A non-2xx answer, a network error, a timeout,
 * an oversized or an invalid body keeps the last good pods and is reported through `onError`
 * (all-or-nothing: one invalid pod rejects the whole document). The first poll always ends with a
 * `SET` — empty if it failed — so that the agent's seenAllSources becomes true.
 * @throws InvalidArgumentError naming the flag when the URL, a header, or a duration is invalid.
 */
export function newHttpSource(options: HttpSourceOptions, deps: HttpSourceDeps): HttpSource {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new InvalidArgumentError(`options.url (--manifest-url) must be an http(s) URL, got ${JSON.stringify(options.url)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError(`options.url (--manifest-url) must be an http(s) URL, got ${JSON.stringify(options.url)}`);
  }
  if (typeof options.nodeName !== 'string' || options.nodeName === '')
    throw new InvalidArgumentError('options.nodeName must be a non-empty string');
  const clock = deps.clock ?? realClock;
  const opts = {
    checkFrequencyMs: options.checkFrequencyMs ?? kDefaultHttpSourceOptions.checkFrequencyMs,
    timeoutMs: options.timeoutMs ?? kDefaultHttpSourceOptions.timeoutMs,
    maxBodyBytes: options.maxBodyBytes ?? kDefaultHttpSourceOptions.maxBodyBytes,
  };
  for (const [k, v] of [
    ['checkFrequencyMs', '--http-check-frequency'],
    ['timeoutMs', 'timeoutMs'],
    ['maxBodyBytes', 'maxBodyBytes'],
  ] as const) {
    if (!Number.isInteger(opts[k]) || opts[k] <= 0)
      throw new InvalidArgumentError(`options.${k} (${v}) must be a positive integer, got ${String(opts[k])}`);
  }
  const headers = new Headers();
  for (const [name, values] of Object.entries(options.headers ?? {})) {
    for (const value of values) {
      try {
        headers.append(name, value);
      } catch {
        throw new InvalidArgumentError(`options.headers (--manifest-url-header): invalid header ${JSON.stringify(`${name}:${value}`)}`);
      }
    }
  }
  const doFetch = deps.fetch ?? fetch;
  const log = deps.logger.child({ component: 'http-source', source: 'http', url: url.href });
  // Never log header values: they may hold credentials.
  let etag: string | undefined;
  let lastBodyHash: string | undefined;
  let lastError: string | undefined;
  let sentFirst = false;
  let timer: TimerHandle | undefined;
  let running: Promise<void> | undefined;
  let started: Promise<void> | undefined;
  let stopped = false;
  const decoder = newManifestDecoder(deps.newManifestLoader);

  const fail = (message: string) => {
    if (stopped) return;
    if (message !== lastError) {
      lastError = message;
      log.warn({ message: boundedField(message) }, 'Could not read pod manifests from URL; keeping the last good pods');
      deps.onError({ source: 'http', origin: url.href, message });
    }
    if (!sentFirst) send([]);
  };

  const send = (pods: Pod[]) => {
    sentFirst = true;
    deps.onUpdate({ op: 'SET', source: 'http', pods });
  };

  const pollOnce = async (): Promise<void> => {
    const reqHeaders = new Headers(headers);
    if (etag !== undefined) reqHeaders.set('If-None-Match', etag);
    let res: Response;
    let text: string;
    try {
      res = await doFetch(url, { headers: reqHeaders, signal: AbortSignal.timeout(opts.timeoutMs), redirect: 'follow' });
      if (res.status === 304) {
        await res.body?.cancel();
        if (!sentFirst) send([]);
        return;
      }
      if (res.status < 200 || res.status > 299) {
        await res.body?.cancel();
        return fail(`${url.href}: HTTP ${res.status} ${res.statusText}`.trimEnd());
      }
      const length = Number(res.headers.get('content-length') ?? '0');
      if (length > opts.maxBodyBytes) {
        await res.body?.cancel();
        return fail(`${url.href}: body of ${length} bytes exceeds the limit of ${opts.maxBodyBytes}`);
      }
      text = await res.text();
    } catch (err) {
      const e = err as Error & { cause?: { message?: string } };
      const why =
        e.name === 'TimeoutError'
          ? `timed out after ${opts.timeoutMs} ms`
          : e.cause?.message
            ? `${e.message}: ${e.cause.message}`
            : e.message;
      return fail(`${url.href}: ${why}`);
    }
    if (stopped) return;
    if (Buffer.byteLength(text) > opts.maxBodyBytes) return fail(`${url.href}: body exceeds the limit of ${opts.maxBodyBytes} bytes`);
    const contentType = res.headers.get('content-type') ?? '';
    const bodyHash = createHash('sha256').update(contentType).update('\0').update(text).digest('hex');
    const newEtag = res.headers.get('etag') ?? undefined;
    if (bodyHash === lastBodyHash && sentFirst) {
      etag = newEtag;
      lastError = undefined;
      return;
    }
    const decoded = await decoder.decode({
      text,
      format: /json/i.test(contentType) ? 'json' : 'yaml',
      origin: url.href,
      nodeName: options.nodeName,
      source: 'http',
      seenAtMs: clock.now(),
    });
    if (stopped) return;
    if ('error' in decoded) {
      // Forget the ETag: the server must send the body again (once it is fixed, or to parse again).
      etag = undefined;
      return fail(
        decoded.retry
          ? `${url.href}: cannot parse pod manifests: the manifest thread failed (parsing again at the next poll): ${decoded.error}`
          : decoded.error,
      );
    }
    const pods = decoded.pods;
    deps.onObjects?.({ op: 'SET', source: 'http', objects: decoded.objects ?? [] });
    etag = newEtag;
    lastBodyHash = bodyHash;
    if (lastError !== undefined) log.info({ pods: pods.length }, 'Read pod manifests from URL again');
    lastError = undefined;
    send(pods);
  };

  const poll = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    running ??= pollOnce().finally(() => (running = undefined));
    return running;
  };

  const loop = () => {
    timer = clock.setTimeout(() => {
      void poll().then(() => {
        if (!stopped) loop();
      });
    }, opts.checkFrequencyMs);
  };

  return {
    start() {
      started ??= (async () => {
        log.info({ checkFrequencyMs: opts.checkFrequencyMs }, 'Polling pod manifest URL');
        await poll();
        if (!stopped) loop();
      })();
      return started;
    },
    async stop() {
      stopped = true;
      clock.clearTimeout(timer);
      await running?.catch(() => undefined);
      await decoder.close().catch((err: unknown) => log.debug({ err }, 'Stopping the pod manifest thread failed'));
    },
    poll,
  };
}
