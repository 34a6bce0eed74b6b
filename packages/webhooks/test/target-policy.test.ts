import { describe, expect, it } from 'vitest';
import { isNonPublicAddress, resolveTarget, TargetRefusedError, webhookUrlProblem } from '../src/target-policy';

describe('webhook target rules', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['8.8.8.8', false],
    ['93.184.216.34', false],
    ['::1', true],
    ['::', true],
    ['fd00::1', true],
    ['fe80::1', true],
    ['ff02::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', true],
    ['::ffff:8.8.8.8', false],
    ['2606:4700:4700::1111', false],
    ['not-an-address', true],
  ])('%s is non-public: %s', (address, expected) => {
    expect(isNonPublicAddress(address)).toBe(expected);
  });

  it.each([
    ['https://hooks.example.com/tms', false, null],
    ['https://93.184.216.34/x', false, null],
    ['https://[2606:4700:4700::1111]/x', false, null],
    ['http://hooks.example.com/tms', false, 'url: the scheme must be https'],
    ['ftp://hooks.example.com/', false, 'url: the scheme must be https'],
    ['hooks.example.com/tms', false, 'url: not an absolute URL'],
    ['https://user:pw@hooks.example.com/', false, 'url: must not carry credentials'],
    ['https://127.0.0.1/x', false, 'url: loopback and private addresses are not allowed'],
    ['https://10.0.0.5/x', false, 'url: loopback and private addresses are not allowed'],
    ['https://[::1]/x', false, 'url: loopback and private addresses are not allowed'],
    ['https://localhost/x', false, 'url: loopback and private addresses are not allowed'],
    ['https://api.localhost/x', false, 'url: loopback and private addresses are not allowed'],
    ['http://127.0.0.1:8080/x', false, 'url: loopback and private addresses are not allowed'],
    // WEBHOOKS_ALLOW_PRIVATE=1
    ['http://127.0.0.1:8080/x', true, null],
    ['http://localhost:8080/x', true, null],
    ['http://192.168.0.10/x', true, null],
    ['https://10.0.0.5/x', true, null],
    ['https://hooks.example.com/tms', true, null],
    ['http://hooks.example.com/tms', true, 'url: http is allowed only to loopback or private addresses'],
    ['http://8.8.8.8/x', true, 'url: http is allowed only to loopback or private addresses'],
  ])('%s (allow private: %s) → %s', (url, allowPrivate, problem) => {
    expect(webhookUrlProblem(url, allowPrivate)).toBe(problem);
  });

  it('checks the addresses a host name resolves to, at delivery', async () => {
    // `localhost` resolves (from the hosts file, no network) to loopback only.
    await expect(resolveTarget(new URL('https://localhost:1/'), false)).rejects.toBeInstanceOf(TargetRefusedError);
    await expect(resolveTarget(new URL('http://localhost:1/'), false)).rejects.toThrow(/non-public|http/);
    const allowed = await resolveTarget(new URL('http://localhost:1/'), true);
    expect(isNonPublicAddress(allowed.address)).toBe(true);
    await expect(resolveTarget(new URL('http://8.8.8.8/'), true)).rejects.toThrow(/http is allowed only/);
    expect(await resolveTarget(new URL('https://8.8.8.8/'), false)).toEqual({ address: '8.8.8.8', family: 4 });
  });
});
