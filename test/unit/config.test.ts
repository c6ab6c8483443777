import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../shared/config.ts';

describe('config', () => {
  it('has embedded defaults', () => {
    const config = loadConfig({});
    expect(config.PORT).to.equal(8080);
    expect(config.DATA_DIR).to.equal('./data');
    expect(config.NATS_URL).to.equal(undefined);
    expect(config.ESDB_URL).to.equal(undefined);
    expect(config.TOCK_RATE_LIMIT).to.deep.equal({ rate: 1, burst: 1 });
  });

  it('parses rate/burst and 0 (off)', () => {
    expect(loadConfig({ TOCK_RATE_LIMIT: '5/10' }).TOCK_RATE_LIMIT).to.deep.equal({ rate: 5, burst: 10 });
    expect(loadConfig({ TOCK_RATE_LIMIT: '0' }).TOCK_RATE_LIMIT.rate).to.equal(0);
  });

  it('gives new accounts a job limit of 1000 unless TOCK_ACCOUNT_JOB_LIMIT says otherwise (0: none)', () => {
    expect(loadConfig({}).TOCK_ACCOUNT_JOB_LIMIT).to.equal(1000);
    expect(loadConfig({ TOCK_ACCOUNT_JOB_LIMIT: '0' }).TOCK_ACCOUNT_JOB_LIMIT).to.equal(0);
    expect(loadConfig({ TOCK_ACCOUNT_JOB_LIMIT: '25' }).TOCK_ACCOUNT_JOB_LIMIT).to.equal(25);
    for (const bad of ['-1', '2.5', 'many']) {
      try {
        loadConfig({ TOCK_ACCOUNT_JOB_LIMIT: bad });
        expect.fail(`${bad} was accepted`);
      } catch (error) {
        expect(error).to.be.instanceOf(ConfigError);
        expect((error as ConfigError).problems).to.have.length(1);
        expect((error as ConfigError).problems[0]).to.match(/^TOCK_ACCOUNT_JOB_LIMIT: /);
      }
    }
  });

  it('reports every problem, one line each, naming the variable', () => {
    try {
      loadConfig({ PORT: 'eighty', TOCK_BOOTSTRAP_TOKEN: 'short', NATS_URL: 'http://x', TOCK_RATE_LIMIT: 'fast' });
      expect.fail('should throw');
    } catch (error) {
      expect(error).to.be.instanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).to.have.length(4);
      expect(problems.find((p) => p.startsWith('PORT:'))).to.be.a('string');
      expect(problems.find((p) => p.startsWith('TOCK_BOOTSTRAP_TOKEN:'))).to.contain('32 characters');
      expect(problems.find((p) => p.startsWith('NATS_URL:'))).to.contain('nats://');
      expect(problems.find((p) => p.startsWith('TOCK_RATE_LIMIT:'))).to.be.a('string');
    }
  });
});
