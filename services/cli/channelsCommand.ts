import { parseArgs } from 'node:util';
import type { Channel, NotifierService } from '../../shared/gen/tock/v1/notifier_pb.ts';
import type { ServiceClient } from '../../shared/grpc/bridge.ts';

type Notifier = ServiceClient<(typeof NotifierService)['method']>;

export const USAGE = `usage:
  tock channels list --account ID
  tock channels add --account ID --type email|webhook|slack|discord|teams|telegram [--name NAME]
                    (--email ADDRESS | --url URL | --bot-token TOKEN --chat-id CHAT) [--escalate-after MINUTES]
  tock channels edit <id> --account ID [--name NAME] [--email|--url|--bot-token|--chat-id ...] [--enable|--disable]
                    [--escalate-after MINUTES]   (an escalation channel hears of a failure once it lasts that long; 0: of all)
  tock channels delete <id> --account ID
  tock channels test <id> --account ID
  tock channels secret-rotate <id> --account ID [--overlap SECONDS]
                    (a webhook's new signing secret, printed once; the old one signs SECONDS more, a day by default)`;

const address = (c: Channel) => (c.type === 'email' ? c.email : c.type === 'telegram' ? `${c.botToken} ${c.chatId}` : c.url);

/** Operator commands on an account's notification channels. A webhook's secret is printed once, at creation or rotation. */
export async function channelsCommand(args: string[], notifier: Notifier, out: (line: string) => void, err: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        account: { type: 'string' },
        type: { type: 'string' },
        name: { type: 'string' },
        email: { type: 'string' },
        url: { type: 'string' },
        'bot-token': { type: 'string' },
        'chat-id': { type: 'string' },
        enable: { type: 'boolean' },
        disable: { type: 'boolean' },
        overlap: { type: 'string' },
        'escalate-after': { type: 'string' },
      },
    });
  } catch (error) {
    err(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const accountId = Number(values.account);
  if (!Number.isInteger(accountId) || accountId <= 0) {
    err(`--account: an account id is required\n${USAGE}`);
    return 2;
  }
  const account = BigInt(accountId);
  const idArg = () => {
    const id = Number(positionals[0]);
    if (!Number.isInteger(id) || id <= 0) throw new Error(`a channel id is required\n${USAGE}`);
    return BigInt(id);
  };
  const addr = { email: values.email, url: values.url, botToken: values['bot-token'], chatId: values['chat-id'] };
  const minutes = values['escalate-after'];
  const escalateAfter = minutes === undefined ? undefined : Number(minutes);
  if (escalateAfter !== undefined && (!Number.isSafeInteger(escalateAfter) || minutes!.trim() === '')) {
    err(`--escalate-after: a whole number of minutes is required, got "${minutes}"\n${USAGE}`);
    return 2;
  }
  switch (verb) {
    case 'list': {
      const { channels } = await notifier.channelList({ accountId: account });
      out(['id', 'type', 'name', 'address', 'status', 'last error', 'escalates after'].join('\t'));
      for (const c of channels) {
        out([c.id, c.type, c.name, address(c), c.enabled ? 'enabled' : `disabled (${c.failures} failures)`, c.lastError, c.escalateAfter ? `${c.escalateAfter} min` : ''].join('\t'));
      }
      return 0;
    }
    case 'add': {
      const c = await notifier.channelAdd({ accountId: account, type: values.type ?? '', name: values.name ?? '', escalateAfter, ...addr });
      out(`channel ${c.id} (${c.type}, ${c.name}) added`);
      if (c.secret) out(`signing secret: ${c.secret} (shown only now)`);
      return 0;
    }
    case 'edit': {
      if (values.enable && values.disable) throw new Error('--enable and --disable exclude each other');
      const enabled = values.enable ? true : values.disable ? false : undefined;
      const c = await notifier.channelEdit({ accountId: account, id: idArg(), name: values.name, enabled, escalateAfter, ...addr });
      out(`channel ${c.id} (${c.type}, ${c.name}) ${c.enabled ? 'enabled' : 'disabled'}`);
      return 0;
    }
    case 'delete': {
      const c = await notifier.channelDelete({ accountId: account, id: idArg() });
      out(`channel ${c.id} deleted`);
      return 0;
    }
    case 'secret-rotate': {
      const overlap = values.overlap === undefined ? undefined : Number(values.overlap);
      if (overlap !== undefined && (!Number.isSafeInteger(overlap) || values.overlap!.trim() === '')) {
        err(`--overlap: a whole number of seconds is required, got "${values.overlap}"\n${USAGE}`);
        return 2;
      }
      const { channel, previousValidUntil } = await notifier.channelSecretRotate({ accountId: account, id: idArg(), overlap: overlap === undefined ? undefined : BigInt(overlap) });
      out(`channel ${channel!.id} (${channel!.type}, ${channel!.name}): new signing secret`);
      out(`signing secret: ${channel!.secret} (shown only now)`);
      const until = Number(previousValidUntil);
      out(until > 0 ? `the previous secret also signs until ${new Date(until).toISOString()}` : 'the previous secret no longer signs');
      return 0;
    }
    case 'test': {
      const r = await notifier.channelTest({ accountId: account, id: idArg() });
      if (r.delivered) out('test message delivered');
      else err(`test message not delivered: ${r.error}`);
      return r.delivered ? 0 : 1;
    }
    default:
      err(USAGE);
      return 2;
  }
}
