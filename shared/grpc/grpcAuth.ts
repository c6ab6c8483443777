import * as grpc from '@grpc/grpc-js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * How a gRPC server proves who may call it and how a client proves who it is. Either or both:
 * - `tls`: mutual TLS. The server presents `cert` and requires a client certificate signed by
 *   `ca`; the client presents its own `cert` and checks the server's against `ca`.
 * - `token`: a shared secret sent as call metadata and checked by a server interceptor (for
 *   meshes that terminate TLS themselves, and for embedded mode's loopback).
 * `{}` is no authentication at all: only what an explicit insecure flag may ask for.
 */
export interface GrpcCredentials {
  token?: string;
  tls?: { ca: Buffer; cert: Buffer; key: Buffer; serverName?: string };
}

export const TOKEN_HEADER = 'authorization';
const PREFIX = 'Bearer ';

/** A random token for a loopback server and its clients in one process (embedded mode, the local CLI). */
export const randomToken = () => randomBytes(32).toString('base64url');

// Comparing digests keeps the comparison at a fixed length, so neither the token's length nor
// the position of the first wrong character shows in the time a refusal takes.
const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The gRPC health protocol answers without the token: probes (kubelet's, a load balancer's) carry
 * no credential, and SERVING / NOT_SERVING tells nothing about jobs or accounts.
 */
const HEALTH_METHODS = /^\/grpc\.health\.v1\.Health\//;

/** Refuses, before any handler runs, a call whose metadata lacks the expected token. */
export function tokenInterceptor(token: string): grpc.ServerInterceptor {
  const expected = digest(PREFIX + token);
  return (method, call) => {
    if (HEALTH_METHODS.test(method.path)) return new grpc.ServerInterceptingCall(call);
    return new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const presented = metadata.get(TOKEN_HEADER)[0];
            if (typeof presented === 'string' && timingSafeEqual(digest(presented), expected)) {
              // The secret has done its job; handlers never see it.
              metadata.remove(TOKEN_HEADER);
              pass(metadata);
            } else {
              call.sendStatus({ code: grpc.status.UNAUTHENTICATED, details: 'missing or wrong call credential', metadata: new grpc.Metadata() });
            }
          },
        }),
    });
  };
}

export function serverCredentials(credentials: GrpcCredentials): grpc.ServerCredentials {
  const tls = credentials.tls;
  if (!tls) return grpc.ServerCredentials.createInsecure();
  // true: a client without a certificate signed by our CA is refused during the handshake.
  return grpc.ServerCredentials.createSsl(tls.ca, [{ private_key: tls.key, cert_chain: tls.cert }], true);
}

export function channelCredentials(credentials: GrpcCredentials): grpc.ChannelCredentials {
  const tls = credentials.tls;
  return tls ? grpc.credentials.createSsl(tls.ca, tls.key, tls.cert) : grpc.credentials.createInsecure();
}

/** Channel options a client needs for these credentials (the name its server's certificate carries). */
export function channelOptions(credentials: GrpcCredentials): grpc.ChannelOptions {
  return credentials.tls?.serverName ? { 'grpc.ssl_target_name_override': credentials.tls.serverName, 'grpc.default_authority': credentials.tls.serverName } : {};
}

/** The metadata a client sends with every call. */
export function callMetadata(credentials: GrpcCredentials): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (credentials.token) metadata.set(TOKEN_HEADER, PREFIX + credentials.token);
  return metadata;
}
