# tools/lib/agent-node.sh — where tools/up keeps the files of the agent it runs as node NAME, so
# that two agents started from one checkout (`tools/up --node-name other --port … --tls-port …`)
# never share a PID file, log, kubeconfig or root dir; read by tools/up and tools/down.
#
# Sourced after tools/lib/common.sh, never executed. Gives:
#   default_node_name              this host's name, lower-cased (tools/up's default --node-name)
#   check_node_name NAME           die unless NAME is a lowercase DNS name (as the agent checks it)
#   agent_node_files NAME          set AGENT_NODE_DIR, AGENT_KUBECONFIG and AGENT_DEFAULT_ROOT_DIR
#   agent_root_dir                 the root dir the node's agent was given (recorded by tools/up)
#   agent_running DIR              true while the agent recorded in DIR/agent.pid runs
#   other_running_agents DIR       the files directories of this checkout's other running agents
#   agent_dir_node DIR             the node name recorded in DIR
#
# The default node (this host's name) keeps the paths it always had: .run/agent.pid, agent.log,
# agent.node, agent.runtime, agent.containerd, agent.root-dir, .run/kubelet-ts.kubeconfig, and the
# agent's default root dir /var/lib/kubelet-ts. Any other node NAME has them in .run/nodes/NAME/
# (its kubeconfig is .run/nodes/NAME/kubeconfig) and the root dir /var/lib/kubelet-ts-NAME: its
# own admin token, CA, socket, API pods and pod network (an agent's pod CIDR is picked per root dir).

# The agent's own entry point (tools/up starts it; a PID is ours only while its command line names it).
AGENT_MAIN=dist/src/main/index.js

# default_node_name — this host's name, lower-cased (the kubelet lowercases --hostname-override the same way).
default_node_name() {
  uname -n | tr '[:upper:]' '[:lower:]'
}

# check_node_name NAME — die unless NAME is a lowercase DNS name (a-z, 0-9, '-', '.'; ≤ 253 characters).
check_node_name() {
  [[ "$1" =~ ^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$ ]] ||
    die "--node-name must be a lowercase DNS name (a-z, 0-9, '-', '.'), got \"$1\""
}

# agent_node_files NAME — set AGENT_NODE_DIR (the node's agent.* files), AGENT_KUBECONFIG and
# AGENT_DEFAULT_ROOT_DIR for node NAME (see the top of this file).
agent_node_files() {
  if [ "$1" = "$(default_node_name)" ]; then
    AGENT_NODE_DIR="$RUN_DIR"
    AGENT_KUBECONFIG="$RUN_DIR/kubelet-ts.kubeconfig"
    AGENT_DEFAULT_ROOT_DIR=/var/lib/kubelet-ts
  else
    AGENT_NODE_DIR="$RUN_DIR/nodes/$1"
    AGENT_KUBECONFIG="$AGENT_NODE_DIR/kubeconfig"
    AGENT_DEFAULT_ROOT_DIR="/var/lib/kubelet-ts-$1"
  fi
}

# agent_root_dir — the --root-dir tools/up gave the agent of AGENT_NODE_DIR (its agent.root-dir),
# else AGENT_DEFAULT_ROOT_DIR.
agent_root_dir() {
  local dir
  if dir="$(cat "$AGENT_NODE_DIR/agent.root-dir" 2>/dev/null)" && [[ "$dir" == /* ]]; then
    printf '%s\n' "$dir"
  else
    printf '%s\n' "$AGENT_DEFAULT_ROOT_DIR"
  fi
}

# agent_running DIR — true while the agent whose PID DIR/agent.pid records runs (and is still ours).
agent_running() {
  local pid
  pid="$(read_pid "$1/agent.pid" 2>/dev/null)" && pid_matches "$pid" "$AGENT_MAIN"
}

# other_running_agents DIR [ENDPOINT] — print, one a line, the files directories (the default
# node's .run/ and those under .run/nodes/, all but DIR) of this checkout's other running agents;
# with ENDPOINT, only those whose agent.runtime is ENDPOINT (the agents on that CRI runtime).
other_running_agents() {
  local d
  for d in "$RUN_DIR" "$RUN_DIR"/nodes/*/; do
    d="${d%/}"
    [ -d "$d" ] && [ "$d" != "$1" ] && agent_running "$d" || continue
    [ -z "${2:-}" ] || [ "$(cat "$d/agent.runtime" 2>/dev/null)" = "$2" ] || continue
    printf '%s\n' "$d"
  done
}

# agent_dir_node DIR — the node name the agent of files directory DIR runs as (its agent.node).
agent_dir_node() {
  cat "$1/agent.node" 2>/dev/null || printf '%s\n' "${1##*/}"
}
