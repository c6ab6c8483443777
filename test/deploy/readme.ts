/**
 * deploy/README.md's shell commands, taken as written, so the deployment test does what an
 * operator reading it does: the Secrets it creates and the commands it runs in pods. A `kubectl`
 * of the test's own goes first on PATH (kubectlShim): it hands `create secret` to the real kubectl
 * (`--dry-run=client -o json`, so the Secret is exactly what kubectl would send), records
 * `apply -k`, and runs `exec deploy/<name>` in that Deployment's first ready pod with podman.
 */
import { readFileSync } from 'node:fs';

/** The ```sh blocks of a Markdown text, in order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

export type Store = 'eventstore' | 'postgres';

/**
 * The blocks that create the Secrets for an event store: every block that creates one, except
 * EventStoreDB's own (it names tock-eventstore) on PostgreSQL and PostgreSQL's (it applies the
 * postgres overlay) on EventStoreDB. They run as one script: later blocks use earlier functions.
 */
export function secretCommands(markdown: string, store: Store): string {
  return shellBlocks(markdown)
    .filter((b) => /kubectl -n tock create secret/.test(b))
    // PostgreSQL's monitoring role is made in the running database (exporterCommands).
    .filter((b) => !b.includes('deploy/monitoring/postgres'))
    .filter((b) => (store === 'postgres' ? !b.includes('tock-eventstore') : !b.includes('overlays/postgres')))
    .join('\n');
}

/** The block that sets up PostgreSQL's monitoring (its role, its Secret, the exporter), run once PostgreSQL runs. */
export function exporterCommands(markdown: string): string | undefined {
  return shellBlocks(markdown).find((b) => b.includes('kubectl apply -n tock -k deploy/monitoring/postgres'));
}

/** The README's `kubectl ... exec ...` commands whose text includes `match`. */
export function execCommands(markdown: string, match: string): string[] {
  return shellBlocks(markdown)
    .flatMap((b) => b.split('\n'))
    .filter((l) => /^kubectl .*\bexec\b/.test(l) && l.includes(match));
}

export const readReadme = (path: string) => readFileSync(path, 'utf8');

/** The shim (bash). STATE holds secrets/<name>.json, applied (one `-k` path a line) and exec/<deploy> (a container name). */
export const kubectlShim = (realKubectl: string, podman: string) => `#!/bin/bash
set -euo pipefail
: "\${TOCK_DEPLOY_STATE:?}"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n|--namespace) shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
case "\${args[0]}" in
  create)
    if [ "\${args[1]}" = secret ]; then
      mkdir -p "$TOCK_DEPLOY_STATE/secrets"
      ${realKubectl} -n tock "\${args[@]}" --dry-run=client -o json > "$TOCK_DEPLOY_STATE/secrets/\${args[3]}.json"
      echo "secret/\${args[3]} created"
    else echo "\${args[1]}/\${args[2]} created"; fi ;;
  apply)
    for ((i = 1; i < \${#args[@]}; i++)); do [ "\${args[i]}" = -k ] && echo "\${args[i+1]}" >> "$TOCK_DEPLOY_STATE/applied"; done; true ;;
  exec)
    # exec [-i|-t|-it] <deploy|statefulset>/<name> -- command...
    i=1; while [[ "\${args[i]}" == -* ]]; do i=$((i + 1)); done
    target=\${args[i]}; i=$((i + 1)); [ "\${args[i]:-}" = -- ] && i=$((i + 1))
    exec ${podman} exec -i "$(cat "$TOCK_DEPLOY_STATE/exec/\${target#*/}")" "\${args[@]:i}" ;;
  *) echo "kubectl shim: \${args[0]} is not supported" >&2; exit 2 ;;
esac
`;
