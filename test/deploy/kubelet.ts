/**
 * What the kubelet makes of a rendered Deployment or StatefulSet, as podman arguments: command,
 * args and env (ConfigMap and Secret references resolved), the security context, Secret,
 * ConfigMap, emptyDir and PVC volumes as host files and directories with the kubelet's ownership
 * and modes, and the replica count. Pure: the runner (cluster.ts) writes the files and runs podman.
 */

// Manifests are loose JSON-like trees; a narrow type per kind would add nothing here.
export type Obj = Record<string, any>;

/** Why the kubelet would not start a pod: the event it would record. */
export class KubeletError extends Error {
  constructor(
    readonly reason: 'CreateContainerConfigError' | 'FailedMount',
    readonly pod: string,
    message: string,
  ) {
    super(`${pod}: ${reason}: ${message}`);
    this.name = 'KubeletError';
  }
}

/** Secrets (values as bytes) and ConfigMaps (strings), by name, as the API server holds them. */
export interface Store {
  secrets: Map<string, Record<string, Buffer>>;
  configMaps: Map<string, Record<string, string>>;
}

export interface FileSpec {
  path: string;
  content: Buffer;
  mode: number;
}

/** A pod volume on the host: files (Secret/ConfigMap) or an empty directory (emptyDir, PVC). */
export interface VolumeSpec {
  name: string;
  kind: 'files' | 'dir';
  /** PVCs (and volume claim templates) outlive the pod: keyed by claim (and pod for templates). */
  claim?: string;
  uid: number;
  gid: number;
  dirMode: number;
  files: FileSpec[];
}

export interface ContainerSpec {
  name: string;
  image: string;
  env: Record<string, string>;
  /** podman run arguments, without the env (written to an env file) and volume sources (host paths). */
  args: string[];
  mounts: Array<{ volume: string; mountPath: string; readOnly: boolean }>;
  entrypoint?: string[];
  cmd: string[];
  probes: { startup?: Obj; readiness?: Obj; liveness?: Obj };
  ports: Obj[];
  preStop?: string[];
}

export interface PodSpec {
  name: string;
  workload: string;
  kind: string;
  labels: Record<string, string>;
  hostname: string;
  terminationGracePeriodSeconds: number;
  volumes: VolumeSpec[];
  containers: ContainerSpec[];
}

export const workloadsOf = (docs: Obj[]) => docs.filter((d) => d.kind === 'Deployment' || d.kind === 'StatefulSet');

/** Pod names as the controllers make them: <statefulset>-<ordinal>, <deployment>-<n> (the hash left out). */
export function podNames(workload: Obj): string[] {
  const replicas = workload.spec.replicas ?? 1;
  return Array.from({ length: replicas }, (_, i) => `${workload.metadata.name}-${i}`);
}

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** The container's environment: envFrom in order, then env (which wins), $(VAR) expanded. */
export function resolveEnv(pod: string, container: Obj, store: Store): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const source = from.configMapRef ? store.configMaps.get(ref.name) : store.secrets.get(ref.name);
    if (!source) {
      if (ref.optional) continue;
      throw new KubeletError('CreateContainerConfigError', pod, `${from.configMapRef ? 'configmap' : 'secret'} "${ref.name}" not found`);
    }
    for (const [k, v] of Object.entries(source)) if (ENV_NAME.test(k)) env[`${from.prefix ?? ''}${k}`] = String(v);
  }
  for (const e of container.env ?? []) {
    if (e.valueFrom) {
      const ref = e.valueFrom.secretKeyRef ?? e.valueFrom.configMapKeyRef;
      if (!ref) throw new KubeletError('CreateContainerConfigError', pod, `env ${e.name}: only secretKeyRef and configMapKeyRef are supported here`);
      const kind = e.valueFrom.secretKeyRef ? 'secret' : 'configmap';
      const source: Record<string, unknown> | undefined = kind === 'secret' ? store.secrets.get(ref.name) : store.configMaps.get(ref.name);
      if (!source || !(ref.key in source)) {
        if (ref.optional) continue;
        throw new KubeletError('CreateContainerConfigError', pod, source ? `couldn't find key ${ref.key} in ${kind} ${ref.name}` : `${kind} "${ref.name}" not found`);
      }
      env[e.name] = String(source[ref.key]);
    } else env[e.name] = expand(String(e.value ?? ''), env);
  }
  return env;
}

/** $(VAR) from variables defined before; $$( escapes; an unknown reference stays as written. */
const expand = (value: string, env: Record<string, string>) =>
  value.replace(/\$\$|\$\(([-._a-zA-Z0-9]+)\)/g, (m, name?: string) => (m === '$$' ? '$' : name !== undefined && name in env ? env[name]! : m));

/**
 * A volume as the kubelet lays it out. Secret and ConfigMap files get defaultMode (or the item's
 * mode); with an fsGroup the kubelet makes them group fsGroup and adds group read (its ownership
 * pass on read-only volumes), otherwise they stay root:root with the mode as given.
 */
export function volumeOf(pod: string, volume: Obj, fsGroup: number | undefined, store: Store, claimPrefix: string): VolumeSpec {
  const gid = fsGroup ?? 0;
  const withGroup = (mode: number) => (fsGroup !== undefined ? mode | 0o440 : mode);
  const source = volume.secret ?? volume.configMap;
  if (source) {
    const isSecret = !!volume.secret;
    const name: string = isSecret ? source.secretName : source.name;
    const data: Record<string, Buffer> | undefined = isSecret
      ? store.secrets.get(name)
      : (() => {
          const cm = store.configMaps.get(name);
          return cm && Object.fromEntries(Object.entries(cm).map(([k, v]) => [k, Buffer.from(v)]));
        })();
    if (!data) {
      if (source.optional) return { name: volume.name, kind: 'files', uid: 0, gid, dirMode: 0o755, files: [] };
      throw new KubeletError('FailedMount', pod, `MountVolume.SetUp failed for volume "${volume.name}" : ${isSecret ? 'secret' : 'configmap'} "${name}" not found`);
    }
    const defaultMode = source.defaultMode ?? 0o644;
    const items: Obj[] = source.items ?? Object.keys(data).map((key) => ({ key, path: key }));
    const files = items.map((item) => {
      if (!(item.key in data)) throw new KubeletError('FailedMount', pod, `MountVolume.SetUp failed for volume "${volume.name}" : couldn't find key ${item.key} in ${isSecret ? 'Secret' : 'ConfigMap'} ${name}`);
      return { path: item.path, content: data[item.key]!, mode: withGroup(item.mode ?? defaultMode) };
    });
    return { name: volume.name, kind: 'files', uid: 0, gid, dirMode: fsGroup !== undefined ? 0o2755 : 0o755, files };
  }
  // emptyDir: world-writable as the kubelet makes it; with an fsGroup, group-owned and setgid.
  if (volume.emptyDir) return { name: volume.name, kind: 'dir', uid: 0, gid, dirMode: fsGroup !== undefined ? 0o2777 : 0o777, files: [] };
  if (volume.persistentVolumeClaim || volume.claimTemplate) {
    const claim = volume.persistentVolumeClaim?.claimName ?? `${volume.name}-${claimPrefix}`;
    return { name: volume.name, kind: 'dir', claim, uid: 0, gid, dirMode: fsGroup !== undefined ? 0o2775 : 0o755, files: [] };
  }
  throw new KubeletError('FailedMount', pod, `volume "${volume.name}": only secret, configMap, emptyDir and persistentVolumeClaim are supported here`);
}

/** Every pod of a workload, ready to run: replicas, env, volumes, security context. */
export function podsOf(workload: Obj, store: Store, images: Record<string, string>): PodSpec[] {
  const template = workload.spec.template;
  const spec: Obj = template.spec;
  const psc: Obj = spec.securityContext ?? {};
  return podNames(workload).map((name) => {
    const claimVolumes = (workload.spec.volumeClaimTemplates ?? []).map((t: Obj) => ({ name: t.metadata.name, claimTemplate: true }));
    const volumes = [...(spec.volumes ?? []), ...claimVolumes].map((v: Obj) => volumeOf(name, v, psc.fsGroup, store, name));
    const containers = (spec.containers as Obj[]).map((c) => containerOf(name, c, psc, store, images, volumes));
    return {
      name,
      workload: workload.metadata.name,
      kind: workload.kind,
      labels: template.metadata?.labels ?? {},
      hostname: name,
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 30,
      volumes,
      containers,
    };
  });
}

function containerOf(pod: string, c: Obj, psc: Obj, store: Store, images: Record<string, string>, volumes: VolumeSpec[]): ContainerSpec {
  const sc: Obj = { ...psc, ...(c.securityContext ?? {}) };
  const image = images[c.image];
  if (!image) throw new Error(`${pod}: no local image for "${c.image}"`);
  const env = resolveEnv(pod, c, store);
  const args: string[] = [];
  if (sc.runAsUser !== undefined) args.push('--user', `${sc.runAsUser}${sc.runAsGroup !== undefined ? `:${sc.runAsGroup}` : ''}`);
  // The kubelet adds fsGroup and supplementalGroups to the process's groups.
  for (const g of [psc.fsGroup, ...(psc.supplementalGroups ?? [])]) if (g !== undefined) args.push('--group-add', String(g));
  // podman adds tmpfs on /tmp, /run and /var/tmp to a read-only root unless told not to; the kubelet adds none.
  if (sc.readOnlyRootFilesystem) args.push('--read-only', '--read-only-tmpfs=false');
  for (const cap of sc.capabilities?.drop ?? []) args.push('--cap-drop', cap);
  for (const cap of sc.capabilities?.add ?? []) args.push('--cap-add', cap);
  if (sc.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  if (c.workingDir) args.push('--workdir', c.workingDir);
  const mounts = (c.volumeMounts ?? []).map((m: Obj) => {
    if (!volumes.some((v) => v.name === m.name)) throw new KubeletError('FailedMount', pod, `volumeMount "${m.name}" names no volume`);
    // Secret and ConfigMap volumes are always read-only in a pod, whatever the mount says.
    const files = volumes.find((v) => v.name === m.name)!.kind === 'files';
    return { volume: m.name, mountPath: m.mountPath, readOnly: !!m.readOnly || files };
  });
  return {
    name: c.name,
    image,
    env,
    args,
    mounts,
    // Kubernetes' command replaces the image's ENTRYPOINT (and drops its CMD); args replace CMD.
    entrypoint: c.command,
    cmd: c.args ?? [],
    probes: { startup: c.startupProbe, readiness: c.readinessProbe, liveness: c.livenessProbe },
    ports: c.ports ?? [],
    preStop: c.lifecycle?.preStop?.exec?.command,
  };
}

/** The env file podman reads (--env-file): one KEY=value a line; a value with a newline cannot be passed so. */
export function envFile(pod: string, env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => {
      if (/[\r\n]/.test(v)) throw new KubeletError('CreateContainerConfigError', pod, `env ${k}: a multi-line value is not supported by this runner`);
      return `${k}=${v}\n`;
    })
    .join('');
}

/** Selector match as Services and NetworkPolicies use it (matchLabels only; these manifests need no more). */
export const selects = (selector: Obj | undefined, labels: Record<string, string>) =>
  !!selector && Object.entries(selector.matchLabels ?? selector).every(([k, v]) => labels[k] === v);

/** A Service or probe port (number or container port name) as a container port number. */
export function portNumber(pod: Pick<PodSpec, 'containers'>, port: number | string): number | undefined {
  if (typeof port === 'number') return port;
  for (const c of pod.containers) {
    const found = c.ports.find((p) => p.name === port);
    if (found) return found.containerPort;
  }
  return /^\d+$/.test(port) ? Number(port) : undefined;
}
