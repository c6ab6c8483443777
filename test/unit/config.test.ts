import { expect } from 'chai';
import { ConfigError, loadConfig, opsHost } from '../../shared/config.ts';
import { describeStore, eventStoreUrl, logsStoreChoice } from '../../shared/openStore.ts';

describe('config', () => {
  it('has embedded defaults', () => {
    const config = loadConfig({});
    expect(config.PORT).to.equal(8080);
    expect(config.DATA_DIR).to.equal('./data');
    expect(config.NATS_URL).to.equal(undefined);
    expect(config.ESDB_URL).to.equal(undefined);
    expect(config.TOCK_RATE_LIMIT).to.deep.equal({ rate: 1, burst: 1 });
  });

  it('keeps the operations port (/metrics) on loopback in embedded mode and on every interface for a service on its own, unless OPS_HOST says', () => {
    expect(opsHost(loadConfig({}), 'embedded')).to.equal('127.0.0.1');
    expect(opsHost(loadConfig({}), 'distributed')).to.equal('0.0.0.0');
    expect(opsHost(loadConfig({ OPS_HOST: '0.0.0.0' }), 'embedded')).to.equal('0.0.0.0');
    expect(opsHost(loadConfig({ OPS_HOST: ' ' }), 'embedded')).to.equal('127.0.0.1');
    expect(opsHost(loadConfig({ OPS_HOST: '10.0.0.5' }), 'distributed')).to.equal('10.0.0.5');
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

  it('serves the dashboard unless TOCK_DASHBOARD=off; another value is refused, naming the variable', () => {
    expect(loadConfig({}).TOCK_DASHBOARD).to.equal('on');
    expect(loadConfig({ TOCK_DASHBOARD: 'off' }).TOCK_DASHBOARD).to.equal('off');
    expect(() => loadConfig({ TOCK_DASHBOARD: 'no' })).to.throw(ConfigError, /TOCK_DASHBOARD/);
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

  describe('store choice', () => {
    it('takes EVENTSTORE_URL (postgres or esdb), else ESDB_URL, else SQLite', () => {
      expect(eventStoreUrl(loadConfig({}))).to.equal(undefined);
      expect(eventStoreUrl(loadConfig({ ESDB_URL: 'esdb://h:2113?tls=false' }))).to.equal('esdb://h:2113?tls=false');
      expect(eventStoreUrl(loadConfig({ EVENTSTORE_URL: 'postgres://db/tock', ESDB_URL: 'esdb://h:2113' }))).to.equal('postgres://db/tock');
      expect(eventStoreUrl(loadConfig({ EVENTSTORE_URL: 'esdb://u:p@h:2113?tls=true&tlsCAFile=/ca.crt' }))).to.equal('esdb://u:p@h:2113?tls=true&tlsCAFile=/ca.crt');
    });

    it('refuses other schemes and a schema name it could not put in SQL, naming the variable', () => {
      try {
        loadConfig({ EVENTSTORE_URL: 'mysql://db/tock', LOGS_DB_URL: 'postgres://db/tock?schema=x;drop' });
        expect.fail('should throw');
      } catch (error) {
        const problems = (error as ConfigError).problems;
        expect(problems).to.have.length(2);
        expect(problems[0]).to.match(/^EVENTSTORE_URL: must start with postgres:\/\//);
        expect(problems[1]).to.match(/^LOGS_DB_URL: .*schema/);
      }
    });

    it('puts the logs read model in the event store PostgreSQL by default, else SQLite, unless LOGS_DB_URL says', () => {
      const choice = (env: Record<string, string>) => logsStoreChoice(loadConfig({ DATA_DIR: '/d', ...env }));
      expect(choice({})).to.deep.equal({ kind: 'sqlite', path: '/d/logs.db' });
      expect(choice({ ESDB_URL: 'esdb://h:2113' })).to.deep.equal({ kind: 'sqlite', path: '/d/logs.db' });
      expect(choice({ EVENTSTORE_URL: 'postgres://u:p@db:5432/tock' })).to.deep.equal({ kind: 'postgres', url: 'postgres://u:p@db:5432/tock?schema=tock_logs' });
      expect(choice({ EVENTSTORE_URL: 'postgres://db/tock?schema=blue' })).to.deep.equal({ kind: 'postgres', url: 'postgres://db/tock?schema=blue_logs' });
      expect(choice({ EVENTSTORE_URL: 'postgres://db/tock', LOGS_DB_URL: 'sqlite:' })).to.deep.equal({ kind: 'sqlite', path: '/d/logs.db' });
      expect(choice({ LOGS_DB_URL: 'sqlite:/var/logs.db' })).to.deep.equal({ kind: 'sqlite', path: '/var/logs.db' });
      // A relative file is under DATA_DIR, wherever the process was started.
      expect(choice({ LOGS_DB_URL: 'sqlite:logs/read.db' })).to.deep.equal({ kind: 'sqlite', path: '/d/logs/read.db' });
      expect(choice({ LOGS_DB_URL: 'sqlite:./read.db' })).to.deep.equal({ kind: 'sqlite', path: '/d/read.db' });
      expect(logsStoreChoice(loadConfig({ DATA_DIR: 'rel/data', LOGS_DB_URL: 'sqlite:read.db' }))).to.deep.equal({ kind: 'sqlite', path: 'rel/data/read.db' });
      expect(choice({ LOGS_DB_URL: 'postgres://other/logs' })).to.deep.equal({ kind: 'postgres', url: 'postgres://other/logs' });
    });

    it('describes the store without its credentials', () => {
      expect(describeStore(loadConfig({ EVENTSTORE_URL: 'postgres://tock:s3cret@db:5432/tock' }))).to.equal('postgres (db:5432/tock)');
      expect(describeStore(loadConfig({ ESDB_URL: 'esdb://admin:s3cret@es:2113?tls=true' }))).to.equal('eventstoredb (es:2113)');
    });
  });
});
