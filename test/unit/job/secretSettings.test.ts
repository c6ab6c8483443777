import { expect } from 'chai';
import { createKeyring, secretBox } from '../../../shared/crypto/envelope.ts';
import { maskHeaders, maskSecrets, maskUrl, openSecrets, openUrl, sealHeaders, sealSecrets, sealUrl } from '../../../shared/job/secretSettings.ts';

const box = secretBox(createKeyring([{ key: Buffer.alloc(32, 3) }]));

describe('job secrets: which parts are sealed, opened and masked', () => {
  it('URL credentials are sealed in place: still a URL with its host, opened back exactly', () => {
    const url = 'https://alice:p%40ss:w0rd@api.example.com:8443/hook?x=1#f';
    const sealed = sealUrl(url, box);
    expect(sealed).to.not.include('p%40ss').and.not.include('alice');
    expect(new URL(sealed).host).to.equal('api.example.com:8443');
    expect(sealed.endsWith('@api.example.com:8443/hook?x=1#f')).to.equal(true);
    expect(openUrl(sealed, box)).to.equal(url);
    expect(sealUrl('https://example.com/a@b', box)).to.equal('https://example.com/a@b');
    expect(openUrl('https://bob:clear@example.com/', box), 'clear (older) URL').to.equal('https://bob:clear@example.com/');
  });

  it('masks URL credentials, sealed or not; a URL without them is unchanged', () => {
    expect(maskUrl('https://alice:pw@example.com/p')).to.equal('https://***@example.com/p');
    expect(maskUrl('https://token@example.com/')).to.equal('https://***@example.com/');
    expect(maskUrl(sealUrl('https://a:b@example.com/', box))).to.equal('https://***@example.com/');
    expect(maskUrl('http://example.com/x?mail=a@b.c')).to.equal('http://example.com/x?mail=a@b.c');
  });

  it('header values are sealed line by line; names stay; masking shows names only', () => {
    const headers = 'Authorization: Bearer abc123\r\nX-Empty:\r\nX-Api-Key: k:e:y';
    const sealed = sealHeaders(headers, box);
    expect(sealed).to.not.include('abc123').and.not.include('k:e:y');
    expect(sealed).to.match(/^Authorization: enc:v1:/);
    expect(openHeaders(sealed)).to.equal(headers);
    expect(maskHeaders(headers)).to.equal('Authorization: ***\r\nX-Empty:\r\nX-Api-Key: ***');
    function openHeaders(text: string) {
      return openSecrets({ httpHeaders: text }, box).httpHeaders;
    }
  });

  it('a settings object: password, URL credentials and header values sealed; other settings untouched', () => {
    const settings = { name: 'n', url: 'http://u:pw@h/', password: 'pw2', httpHeaders: 'A: v', postData: 'body' };
    const sealed = sealSecrets(settings, box);
    expect(JSON.stringify(sealed)).to.not.match(/pw2|:pw@|A: v/);
    expect(sealed).to.include({ name: 'n', postData: 'body' });
    expect(openSecrets(sealed, box)).to.deep.equal(settings);
    expect(maskSecrets(sealed)).to.deep.equal({ name: 'n', url: 'http://***@h/', password: '********', httpHeaders: 'A: ***', postData: 'body' });
    expect(sealSecrets({ password: '' }, box)).to.deep.equal({ password: '' });
  });
});
