#!/usr/bin/env node
/**
 * Counterpart of cmd/kubelet/kubelet.go: the process entry of `kubelet-ts`. Parses the command
 * line, starts the agent, and on SIGTERM/SIGINT stops it cleanly, leaving the pods' containers
 * running (a restarted agent adopts them). A second signal exits at once.
 */
import { hideBin } from 'yargs/helpers';
import { realClock } from '../shared/clock.js';
import { isInvalidInput } from '../shared/errors.js';
import { newLogger } from '../shared/logging.js';
import { runCli } from './cli.js';
import { newAgent } from './agent.js';
import type { AgentOptions } from './options/agent-options.js';

async function runAgent(options: AgentOptions): Promise<void> {
  const logger = newLogger(options.logLevel);
  // The process's one clock (k8s.io/utils/clock RealClock): every component keeps time on it.
  const agent = newAgent(options, { logger, clock: realClock });
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'Received signal, shutting down');
    // Never wait forever: a wedged runtime call must not keep the process alive.
    setTimeout(() => process.exit(0), 5_000).unref();
    agent.stop().then(
      () => {
        logger.flush();
        process.exit(0);
      },
      (err) => {
        logger.error({ err }, 'Error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('unhandledRejection', (err) => logger.error({ err }, 'Unhandled rejection'));
  try {
    await agent.start();
  } catch (err) {
    await agent.stop().catch(() => {});
    // A bad option value found at start (a --tls-* file, the admin token file, --pod-cidr): one
    // line naming it and exit 2, as runCli reports the option errors it finds itself.
    if (isInvalidInput(err)) {
      process.stderr.write(`kubelet-ts: ${(err as Error).message.split('\n')[0]}\n`);
      process.exit(2);
    }
    logger.fatal({ err }, 'Failed to start kubelet-ts');
    logger.flush();
    process.exit(1);
  }
}

await runCli(hideBin(process.argv), { runAgent });
