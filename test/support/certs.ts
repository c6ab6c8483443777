import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  ca: string;
  cert: string;
  key: string;
}

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });

/**
 * A certificate authority and one certificate it signed for localhost/127.0.0.1, usable by a
 * server and a client (mutual TLS), made with openssl at test time: no key is ever committed.
 */
export function makeTestPki(name = 'tock'): TestPki {
  const dir = mkdtempSync(join(tmpdir(), `tock-pki-${name}-`));
  writeFileSync(
    join(dir, 'ext.cnf'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n',
  );
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', `/CN=${name} test CA`], dir);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', `/CN=${name}`], dir);
  openssl(['x509', '-req', '-in', 'tls.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tls.crt', '-days', '2', '-extfile', 'ext.cnf'], dir);
  return { dir, ca: join(dir, 'ca.crt'), cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
}

/** The environment that points a service at a PKI's files, as a mounted Kubernetes Secret would. */
export const tlsEnv = (pki: TestPki) => ({ TOCK_GRPC_TLS_CA: pki.ca, TOCK_GRPC_TLS_CERT: pki.cert, TOCK_GRPC_TLS_KEY: pki.key });
