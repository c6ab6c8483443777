import { expect } from 'chai';
import { ok } from '../../support/api.ts';
import { startTestSystem } from '../../support/embedded.ts';
import { waitFor } from '../../support/waitFor.ts';

/**
 * Embedded mode folds each job twice (the jobs view for the API, the planner for its schedule).
 * A job with no secret must be one settings object in memory, held by both: at 100,000 jobs a
 * second copy each was 27 MB of live heap. A job with a secret is opened for the jobs view and
 * kept sealed by the planner, so those are two objects, the planner's without the clear value.
 */
describe('embedded mode keeps one settings object per job without secrets', function () {
  this.timeout(30_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  before(async () => (system = await startTestSystem()));
  after(() => system.destroy());

  const held = (id: number) => ({ view: system.jobs.view.job(1, id)?.job.settings, planner: system.planner.planner.projection.get(id)?.job.settings });

  it('the jobs view and the planner share it; a job with a password gets a sealed copy for the planner', async () => {
    const [plain, secret] = await ok<{ id: number }[]>(
      system.api.call('cron_batch_add', { data: [{ url: 'https://example.com/plain', expression: '0 3 * * *' }, { url: 'https://example.com/secret', expression: '0 3 * * *', password: 'hunter22' }] }),
    );
    await waitFor(() => held(plain!.id).planner && held(secret!.id).planner, 'the planner to take the jobs in');
    const a = held(plain!.id);
    expect(a.view).to.equal(a.planner);
    const b = held(secret!.id);
    expect(b.view).to.not.equal(b.planner);
    expect(b.view!.password).to.equal('hunter22');
    expect(b.planner!.password).to.match(/^enc:/);
  });
});
