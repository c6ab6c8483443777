/** One probe of a container, as the kubelet runs it: exec in the container, HTTP GET or TCP connect to the pod's address. */
import { connect } from 'node:net';
import { type Obj, portNumber, type PodSpec } from './kubelet.ts';
import { attempt, PODMAN } from './podman.ts';

/** True when the probe passes within its timeout (HTTP: a status from 200 to 399). */
export async function runProbe(r: { id: string; ip: string; pod: PodSpec }, probe: Obj, timeoutSeconds: number): Promise<boolean> {
  if (probe.exec) return (await attempt(PODMAN[0]!, [...PODMAN.slice(1), 'exec', r.id, ...probe.exec.command], timeoutSeconds * 1000)).code === 0;
  if (probe.httpGet) {
    const port = portNumber(r.pod, probe.httpGet.port);
    try {
      const res = await fetch(`http://${r.ip}:${port}${probe.httpGet.path ?? '/'}`, { signal: AbortSignal.timeout(timeoutSeconds * 1000) });
      await res.arrayBuffer();
      return res.status >= 200 && res.status < 400;
    } catch {
      return false;
    }
  }
  if (probe.tcpSocket) {
    const port = portNumber(r.pod, probe.tcpSocket.port)!;
    return new Promise((resolve) => {
      const s = connect({ host: r.ip, port, timeout: timeoutSeconds * 1000 }, () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false)).on('timeout', () => (s.destroy(), resolve(false)));
    });
  }
  throw new Error(`${r.pod.name}: unsupported probe ${JSON.stringify(probe)}`);
}
