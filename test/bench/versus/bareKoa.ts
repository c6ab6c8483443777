// The yardstick of the API bench: a bare Koa route, in a process of its own as a gateway is, that
// answers any /api/v1/<function> POST with a fixed record of a cron job's size. What Tock's
// gateway adds on top of Koa (auth, rate limiting, parameters, gRPC to the services) is measured
// against it. Prints `port <n>` once it listens.
import Router from '@koa/router';
import Koa from 'koa';

const RECORD = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`field${i}`, i % 3 === 0 ? `value ${i}` : i]));
const app = new Koa();
const router = new Router();
router.post('/api/v1/:fn', (ctx) => {
  ctx.body = { status: 'success', code: 0, data: RECORD };
});
app.use(router.routes());
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`port ${typeof address === 'object' && address ? address.port : 0}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
