// kubelet-ts port-forward's port mappings (src/cli/port-forward.ts parsePortMappings), as kubectl's parsePorts.
import { describe, expect, it } from 'vitest';
import { parsePortMappings } from '../../src/cli/port-forward.js';

describe('port-forward mappings', () => {
  it('reads LOCAL:REMOTE, :REMOTE, 0:REMOTE and PORT', () => {
    expect(parsePortMappings(['8080:80', ':80', '0:443', '5432'])).toEqual([
      { local: 8080, remote: 80 },
      { local: 0, remote: 80 },
      { local: 0, remote: 443 },
      { local: 5432, remote: 5432 },
    ]);
  });

  it.each([
    [[], 'list of ports are required'],
    [['80:0'], 'error parsing remote port "0"'],
    [['x:80'], 'error parsing local port "x"'],
    [['70000'], 'error parsing remote port "70000"'],
    [['1:2:3'], 'invalid port format "1:2:3"'],
    [['80:'], 'error parsing remote port ""'],
  ])('refuses %j', (specs, message) => {
    expect(() => parsePortMappings(specs)).toThrow(message);
  });
});
