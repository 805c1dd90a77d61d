// Counterpart of k8s.io/kubectl/pkg/cmd/cmd.go (NewKubectlCommand): the kubectl-like client's subcommands.
/**
 * The one module of src/cli that the agent's command line (src/main/cli.ts) imports: it adds the
 * client's subcommands (`get`, `apply`, `delete`, `logs`, `describe`, `top`, `exec`, `attach`, `port-forward`, `kubeconfig`) to the `kubelet-ts` parser.
 * Nothing in src/cli imports src/main/cli.ts; the commands write through {@link CliIo} (io.ts).
 */
import type { CommandModule } from 'yargs';
import { applyCommand } from './apply.js';
import type { SelectClient } from './client.js';
import { deleteCommand } from './delete.js';
import { describeCommand } from './describe.js';
import { attachCommand, execCommand } from './exec.js';
import { getCommand } from './get.js';
import { logsCommand } from './logs.js';
import { kubeconfigCommand } from './kubeconfig.js';
import { portForwardCommand } from './port-forward.js';
import { topCommand } from './top.js';

export { joinStdinFlag } from './apply.js';
export type { ClientRun, SelectClient } from './client.js';
export type { CliIo } from './io.js';
export { processTerminal } from './io.js';

/**
 * clientCommands: the client's yargs command modules in `--help` order. `select` receives the
 * parsed command (`{command: 'client', run}`) when one of them matches; runCli then runs it.
 */
export function clientCommands(select: SelectClient): CommandModule[] {
  return [
    getCommand(select),
    applyCommand(select),
    deleteCommand(select),
    logsCommand(select),
    describeCommand(select),
    topCommand(select),
    execCommand(select),
    attachCommand(select),
    portForwardCommand(select),
    kubeconfigCommand(select),
  ];
}
